"""A read view of the store with a batch's not-yet-committed changes applied.

The write gate decides the drafts of a batch in order, each seeing the earlier ones, and
commits the whole batch once. Between the two, the earlier drafts' changes live here: reads
through a :class:`BatchView` see the store as it will be after them, writes are refused.

Pattern reads (:meth:`BatchView.quads`) are exact for any pattern. Named queries cannot be
run against a store plus pending quads, so the few the gate asks during a batch are answered
by :mod:`kgmem.memory.view_queries` from pattern reads (a test holds each to its ``.rq``
file); any other named query raises :class:`~kgmem.errors.StoreOperationFailed` rather than
answer from the store alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from typing import TypeVar

from rdflib import BNode, URIRef

from kgmem.errors import StoreOperationFailed
from kgmem.memory.view_queries import VIEW_QUERIES
from kgmem.store import (
    Bindings,
    Changeset,
    CommitHook,
    Dataset,
    GraphResult,
    Quad,
    Query,
    QueryResult,
    RdfFormat,
    Row,
    Term,
    TextStatement,
    Transaction,
    TripleStore,
    ValueLists,
)

__all__ = ["BatchView"]

_Bucket = dict[Quad, None]  # insertion-ordered set
_T = TypeVar("_T")


class BatchView:
    """``store`` with pending changes applied on top; see the module docstring.

    The pending quads stay net: one added here is absent from the store or was removed
    here first, one removed here was present, and no quad is both.
    """

    def __init__(self, store: TripleStore) -> None:
        self._store = store
        self._added: _Bucket = {}
        self._removed: set[Quad] = set()
        self._by_subject: dict[Term, _Bucket] = {}
        self._by_predicate: dict[Term, _Bucket] = {}
        self._by_object: dict[Term, _Bucket] = {}

    # -- the pending change ------------------------------------------------------------

    def apply(self, add: Iterable[Quad], remove: Iterable[Quad]) -> None:
        """Lay one change (removals, then additions) over the view."""
        for quad in remove:
            if quad in self._added:
                self._unindex(quad)
            else:
                self._removed.add(quad)
        for quad in add:
            if quad in self._removed:
                self._removed.discard(quad)
            elif quad not in self._added:
                self._index(quad)

    def changeset(self) -> Changeset:
        """Everything pending, as one change against the store."""
        return Changeset.of(self._added, sorted(self._removed))

    def __bool__(self) -> bool:
        return bool(self._added or self._removed)

    def _index(self, quad: Quad) -> None:
        self._added[quad] = None
        self._by_subject.setdefault(quad.subject, {})[quad] = None
        self._by_predicate.setdefault(quad.predicate, {})[quad] = None
        self._by_object.setdefault(quad.object, {})[quad] = None

    def _unindex(self, quad: Quad) -> None:
        del self._added[quad]
        del self._by_subject[quad.subject][quad]
        del self._by_predicate[quad.predicate][quad]
        del self._by_object[quad.object][quad]

    def _added_matching(
        self,
        graph: URIRef | None,
        subject: URIRef | BNode | None,
        predicate: URIRef | None,
        obj: Term | None,
    ) -> list[Quad]:
        if subject is not None:
            bucket = self._by_subject.get(subject, {})
        elif obj is not None:
            bucket = self._by_object.get(obj, {})
        elif predicate is not None:
            bucket = self._by_predicate.get(predicate, {})
        else:
            bucket = self._added
        return [
            q
            for q in bucket
            if (graph is None or q.graph == graph)
            and (subject is None or q.subject == subject)
            and (predicate is None or q.predicate == predicate)
            and (obj is None or q.object == obj)
        ]

    # -- reads -------------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._store.location

    def quads(
        self,
        graph: URIRef | None = None,
        subject: URIRef | BNode | None = None,
        predicate: URIRef | None = None,
        obj: Term | None = None,
    ) -> Iterator[Quad]:
        found = self._store.quads(graph, subject, predicate, obj)
        added = self._added_matching(graph, subject, predicate, obj) if self._added else []
        removed = self._removed
        if not added:
            yield from (q for q in found if q not in removed) if removed else found
            return
        seen = set()
        for quad in found:
            if quad not in removed:
                seen.add(quad)
                yield quad
        yield from (q for q in added if q not in seen)

    def select(
        self,
        query: Query,
        bindings: Bindings | None = None,
        *,
        dataset: Dataset | None = None,
        values: ValueLists | None = None,
    ) -> list[Row]:
        evaluate = VIEW_QUERIES.get(query.name)
        if evaluate is not None and dataset is None and not values:
            query.check_bindings(bindings or {})
            return evaluate(self, query, bindings or {})
        return self._plain(
            query.name,
            lambda: self._store.select(query, bindings, dataset=dataset, values=values),
        )

    def select_text(
        self, query: Query, bindings: Bindings | None = None
    ) -> list[tuple[str | None, ...]]:
        return self._plain(query.name, lambda: self._store.select_text(query, bindings))

    def stream(
        self,
        query: Query,
        bindings: Bindings | None = None,
        *,
        dataset: Dataset | None = None,
        values: ValueLists | None = None,
    ) -> Iterator[Row]:
        return iter(self.select(query, bindings, dataset=dataset, values=values))

    def stream_text(
        self, query: Query, bindings: Bindings | None = None
    ) -> Iterator[tuple[str | None, ...]]:
        return iter(self.select_text(query, bindings))

    def stored(self, query: Query, bindings: Mapping[str, Term]) -> list[Row]:
        return self._store.select(query, bindings)

    def pending(self, predicate: URIRef) -> list[Quad]:
        added = list(self._by_predicate.get(predicate, {}))
        return added + [q for q in self._removed if q.predicate == predicate]

    def ask(
        self, query: Query, bindings: Bindings | None = None, *, dataset: Dataset | None = None
    ) -> bool:
        return self._plain(query.name, lambda: self._store.ask(query, bindings, dataset=dataset))

    def construct(
        self, query: Query, bindings: Bindings | None = None, *, dataset: Dataset | None = None
    ) -> GraphResult:
        return self._plain(
            query.name, lambda: self._store.construct(query, bindings, dataset=dataset)
        )

    def query_text(self, text: str, *, dataset: Dataset, limit: int | None = None) -> QueryResult:
        return self._plain(
            "a query text", lambda: self._store.query_text(text, dataset=dataset, limit=limit)
        )

    def _plain(self, what: str, run: Callable[[], _T]) -> _T:
        if self:
            raise StoreOperationFailed(
                f"query {what}", "a batch view answers only its own queries over pending changes"
            )
        return run()

    def statements(self, graph: URIRef) -> Iterator[TextStatement]:
        return self._plain("statements", lambda: self._store.statements(graph))

    def graphs(self) -> list[URIRef]:
        return sorted(set(self._store.graphs()) | {q.graph for q in self._added})

    def count(self, graph: URIRef | None = None) -> int:
        return sum(1 for _ in self.quads(graph))

    def size_on_disk(self) -> int | None:
        return self._store.size_on_disk()

    # -- writes: refused (the gate commits the view's changeset itself) ------------------

    def update(self, query: Query, bindings: Bindings | None = None) -> None:
        raise _read_only()

    def commit(self, changes: Changeset) -> None:
        raise _read_only()

    def add_hook(self, hook: CommitHook) -> None:
        raise _read_only()

    def remove_hook(self, hook: CommitHook) -> None:
        raise _read_only()

    def transaction(self) -> AbstractContextManager[Transaction]:
        raise _read_only()

    def load(
        self,
        data: bytes,
        fmt: RdfFormat,
        graph: URIRef,
        *,
        replace: bool = True,
        bulk: bool = False,
        lenient: bool = False,
    ) -> int:
        raise _read_only()

    def close(self) -> None:
        """The store is not the view's to close."""


def _read_only() -> StoreOperationFailed:
    return StoreOperationFailed("write", "a batch view is read-only: commit its changeset")
