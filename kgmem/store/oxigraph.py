"""The embedded Oxigraph store: a directory on disk, or in memory for tests."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import TypeVar

import pyoxigraph as ox
from rdflib import BNode, URIRef

from kgmem.errors import (
    BindingError,
    QueryRefused,
    ResultLimitExceeded,
    StoreClosed,
    StoreCorrupt,
    StoreLocked,
    StoreOperationFailed,
)
from kgmem.store.base import (
    AskResult,
    Bindings,
    Changeset,
    CommitHook,
    Dataset,
    GraphResult,
    Quad,
    QueryResult,
    RdfFormat,
    Row,
    SelectResult,
    Term,
    TextStatement,
    Transaction,
    ValueLists,
)
from kgmem.store.literals import quiet_ill_typed_literals
from kgmem.store.ox_terms import (
    dataset_to_ox,
    from_ox,
    iri_from_ox,
    named_ox,
    node_from_ox,
    node_to_ox,
    quad_from_ox,
    quad_to_ox,
    row_from_ox,
    to_ox,
    triple_from_ox,
)
from kgmem.store.ox_update import changeset_update
from kgmem.store.queries import Query, QueryKind, substitute
from kgmem.store.sparql_check import check_query
from kgmem.vocab import PREFIXES

__all__ = ["OxigraphStore"]

_FORMATS = {
    RdfFormat.TURTLE: ox.RdfFormat.TURTLE,
    RdfFormat.NTRIPLES: ox.RdfFormat.N_TRIPLES,
    RdfFormat.NQUADS: ox.RdfFormat.N_QUADS,
    RdfFormat.RDFXML: ox.RdfFormat.RDF_XML,
    RdfFormat.N3: ox.RdfFormat.N3,
    RdfFormat.TRIG: ox.RdfFormat.TRIG,
}
_T = TypeVar("_T")

log = logging.getLogger("kgmem.store")


class OxigraphStore:
    """A :class:`~kgmem.store.base.TripleStore` on pyoxigraph.

    One read-write process per directory: a second open raises :class:`StoreLocked`.
    Writes within this process are serialized by a lock so a read-compute-commit inside
    :meth:`transaction` sees no interleaved writer. Commit hooks are told of a commit once
    the outermost writer releases the lock, so a hook may read, write and wait freely.
    """

    def __init__(self, path: Path | None = None) -> None:
        quiet_ill_typed_literals()  # unreadable values are reported once each, by IRI
        self._path = path
        self._lock = threading.RLock()
        self._store: ox.Store | None = self._open(path)
        self._hooks: tuple[CommitHook, ...] = ()
        self._depth = 0  # nesting of writers holding the lock (only its owner changes it)
        self._committed: list[Changeset] = []  # to announce when the outermost writer ends
        self._generation = 0  # counts writes: a snapshot of generation n holds all n of them

    @staticmethod
    def _open(path: Path | None) -> ox.Store:
        if path is None:
            return ox.Store()
        try:
            return ox.Store(str(path))
        except OSError as exc:
            if "lock" in str(exc).lower():
                raise StoreLocked(path) from exc
            raise StoreCorrupt(path, str(exc)) from exc
        except RuntimeError as exc:
            raise StoreCorrupt(path, str(exc)) from exc

    @property
    def location(self) -> str:
        return ":memory:" if self._path is None else str(self._path)

    @property
    def path(self) -> Path | None:
        """The store's directory; ``None`` for an in-memory store."""
        return self._path

    @property
    def generation(self) -> int:
        """A count of the writes made through this handle."""
        return self._generation

    def snapshot(self, target: Path) -> None:
        """Write a consistent read-only copy of the store into the new directory ``target``
        (a RocksDB checkpoint: its files are hard links where the disk allows), to open with
        ``pyoxigraph.Store.read_only``. An in-memory store has none to give."""
        if self._path is None:
            raise StoreOperationFailed("snapshot", "an in-memory store has no files to copy")
        try:
            self._ox.backup(str(target))
        except (OSError, RuntimeError) as exc:
            raise StoreOperationFailed("snapshot", str(exc)) from exc

    @property
    def _ox(self) -> ox.Store:
        if self._store is None:
            raise StoreClosed()
        return self._store

    # -- reads -------------------------------------------------------------------------

    def _run(
        self,
        query: Query,
        bindings: Bindings | None,
        dataset: Dataset | None,
        values: ValueLists | None = None,
    ) -> object:
        bindings = bindings or {}
        query.check_bindings(bindings)
        text, native = query.text, dict(bindings)
        if values:
            if any(isinstance(v, BNode) for v in bindings.values()):
                raise BindingError(query.name, "values", "lists cannot join blank-node bindings")
            text, native = substitute(query, bindings, values), {}
        elif bindings and not any(isinstance(v, BNode) for v in bindings.values()):
            # Written in as constants the bound terms drive index lookups; Oxigraph's own
            # substitution would evaluate the whole pattern and filter afterwards.
            text, native = substitute(query, bindings), {}
        substitutions: dict[ox.Variable, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple]
        substitutions = {ox.Variable(k): to_ox(v) for k, v in native.items()}
        union, default, named = dataset_to_ox(dataset)
        try:
            return self._ox.query(
                text,
                substitutions=substitutions,
                use_default_graph_as_union=union,
                default_graph=default,
                named_graphs=named,
            )
        except (OSError, RuntimeError, SyntaxError) as exc:
            unprojected = [v for v in native if f"variable ?{v} in its SELECT" in str(exc)]
            if unprojected:
                raise BindingError(
                    query.name, unprojected[0], "bound variables must be projected by the SELECT"
                ) from exc
            raise StoreOperationFailed(f"query {query.name}", str(exc)) from exc

    def select(
        self,
        query: Query,
        bindings: Bindings | None = None,
        *,
        dataset: Dataset | None = None,
        values: ValueLists | None = None,
    ) -> list[Row]:
        return list(self.stream(query, bindings, dataset=dataset, values=values))

    def stream(
        self,
        query: Query,
        bindings: Bindings | None = None,
        *,
        dataset: Dataset | None = None,
        values: ValueLists | None = None,
    ) -> Iterator[Row]:
        query.expect(QueryKind.SELECT)
        solutions = self._run(query, bindings, dataset, values)
        assert isinstance(solutions, ox.QuerySolutions)
        names = [v.value for v in solutions.variables]
        return (row_from_ox(names, s) for s in solutions)

    def select_text(
        self, query: Query, bindings: Bindings | None = None
    ) -> list[tuple[str | None, ...]]:
        return list(self.stream_text(query, bindings))

    def stream_text(
        self, query: Query, bindings: Bindings | None = None
    ) -> Iterator[tuple[str | None, ...]]:
        query.expect(QueryKind.SELECT)
        solutions = self._run(query, bindings, None)
        assert isinstance(solutions, ox.QuerySolutions)
        width = range(len(solutions.variables))
        return (tuple(None if (t := s[i]) is None else t.value for i in width) for s in solutions)

    def ask(
        self, query: Query, bindings: Bindings | None = None, *, dataset: Dataset | None = None
    ) -> bool:
        query.expect(QueryKind.ASK)
        return bool(self._run(query, bindings, dataset))

    def construct(
        self, query: Query, bindings: Bindings | None = None, *, dataset: Dataset | None = None
    ) -> GraphResult:
        query.expect(QueryKind.CONSTRUCT, QueryKind.DESCRIBE)
        triples = self._run(query, bindings, dataset)
        assert isinstance(triples, ox.QueryTriples)
        return GraphResult(tuple(triple_from_ox(t) for t in triples))

    def query_text(self, text: str, *, dataset: Dataset, limit: int | None = None) -> QueryResult:
        checked = check_query(text, PREFIXES)
        # Evaluated in a frame of its own: the parser keeps exceptions (and through them
        # this frame) past the call, and a pyoxigraph result must never be held there, or
        # it is dropped on whichever thread frees it.
        return self._evaluate(checked.text, dataset, limit)

    def _evaluate(self, text: str, dataset: Dataset, limit: int | None) -> QueryResult:
        try:
            union, default, named = dataset_to_ox(dataset)
            result = self._ox.query(
                text,
                prefixes=PREFIXES,
                use_default_graph_as_union=union,
                default_graph=default,
                named_graphs=named,
            )
            return _materialized(result, limit)  # evaluation goes on while it is read
        except SyntaxError as exc:
            first_line = str(exc).splitlines()[0] if str(exc) else "syntax error"
            raise QueryRefused(f"not a SPARQL query: {first_line}") from exc
        except RuntimeError as exc:  # pyoxigraph's evaluation errors: the query's own fault
            raise QueryRefused(f"the query cannot be evaluated: {exc}") from exc
        except OSError as exc:
            raise StoreOperationFailed("query", str(exc)) from exc

    def quads(
        self,
        graph: URIRef | None = None,
        subject: URIRef | BNode | None = None,
        predicate: URIRef | None = None,
        obj: Term | None = None,
    ) -> Iterator[Quad]:
        pattern = self._ox.quads_for_pattern(
            None if subject is None else node_to_ox(subject),
            None if predicate is None else named_ox(str(predicate)),
            None if obj is None else to_ox(obj),
            None if graph is None else named_ox(str(graph)),
        )
        if graph is None:
            for quad in pattern:
                if isinstance(quad.graph_name, ox.NamedNode):  # never the default graph
                    yield quad_from_ox(quad)
            return
        # A bound position is the term asked for: only the free ones are converted (most
        # reads bind the graph and the subject, so a quad costs one or two conversions).
        for quad in pattern:
            yield Quad(
                node_from_ox(quad.subject) if subject is None else subject,
                iri_from_ox(quad.predicate) if predicate is None else predicate,
                from_ox(quad.object) if obj is None else obj,
                graph,
            )

    def statements(self, graph: URIRef) -> Iterator[TextStatement]:
        for quad in self._ox.quads_for_pattern(None, None, None, named_ox(str(graph))):
            node, predicate, obj = quad.subject, quad.predicate.value, quad.object
            if isinstance(node, ox.Triple) or isinstance(obj, ox.Triple):
                continue  # RDF-star: kgmem writes none, and a digest cannot read one
            subject = node.value
            if isinstance(obj, ox.Literal):
                yield TextStatement(
                    subject, predicate, obj.value, obj.datatype.value, obj.language or ""
                )
            elif isinstance(obj, ox.BlankNode):
                yield TextStatement(subject, predicate, f"_:{obj.value}", None, "")
            else:
                yield TextStatement(subject, predicate, obj.value, None, "")

    def graphs(self) -> list[URIRef]:
        return sorted(
            URIRef(g.value) for g in self._ox.named_graphs() if isinstance(g, ox.NamedNode)
        )

    def count(self, graph: URIRef | None = None) -> int:
        if graph is None:
            return len(self._ox)
        return sum(
            1 for _ in self._ox.quads_for_pattern(None, None, None, ox.NamedNode(str(graph)))
        )

    def size_on_disk(self) -> int | None:
        if self._path is None:
            return None
        return sum(p.stat().st_size for p in self._path.rglob("*") if p.is_file())

    # -- writes ------------------------------------------------------------------------

    def update(self, query: Query, bindings: Bindings | None = None) -> None:
        query.expect(QueryKind.UPDATE)
        text = substitute(query, bindings or {})
        with self._lock:
            try:
                self._ox.update(text)
            except (OSError, RuntimeError, SyntaxError) as exc:
                raise StoreOperationFailed(f"update {query.name}", str(exc)) from exc
            finally:
                self._generation += 1

    def add_hook(self, hook: CommitHook) -> None:
        with self._lock:
            self._hooks = (*self._hooks, hook)

    def remove_hook(self, hook: CommitHook) -> None:
        with self._lock:
            self._hooks = tuple(h for h in self._hooks if h is not hook)

    def commit(self, changes: Changeset) -> None:
        if not changes:
            return
        with self._writing():
            written = changes
            for hook in self._hooks:
                written = written.merged(hook.before_commit(changes))
            try:
                if not written.remove and not written.drop_graphs:
                    self._ox.extend([quad_to_ox(q) for q in written.add])
                else:
                    self._ox.update(changeset_update(written))
            except (OSError, RuntimeError, SyntaxError) as exc:
                raise StoreOperationFailed("commit", str(exc)) from exc
            finally:  # after the write: a snapshot that sees the new count holds the write
                self._generation += 1
            if self._hooks:
                self._committed.append(changes)

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        with self._writing():
            tx = Transaction()
            yield tx
            self.commit(tx.changeset())

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the write lock; when the outermost writer lets go, announce its commits."""
        done: list[Changeset] = []
        try:
            with self._lock:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                    if self._depth == 0:
                        done, self._committed = self._committed, []
        finally:  # commits done before a failure in the same transaction still stand
            for changes in done:
                for hook in self._hooks:
                    try:
                        hook.after_commit(changes)
                    except Exception:  # the commit stands: a hook's failure is its own
                        log.exception("commit hook %r failed after a commit", hook)

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
        target = ox.NamedNode(str(graph))
        with self._lock:
            try:
                if bulk:
                    if replace and self._ox.contains_named_graph(target):
                        self._ox.remove_graph(target)
                    self._ox.bulk_load(data, _FORMATS[fmt], to_graph=target, lenient=lenient)
                    # the triples read, counted in the data: counting the graph cost time in
                    # the size of all it holds (a million memories loaded in chunks into one
                    # user's graph: each chunk counted the chunks before, ~1.4 us a quad)
                    read = ox.parse(data, _FORMATS[fmt], lenient=lenient, without_named_graphs=True)
                    return sum(1 for _ in read)
                parsed = [
                    quad_from_ox(ox.Quad(q.subject, q.predicate, q.object, target))
                    for q in ox.parse(
                        data, _FORMATS[fmt], lenient=lenient, without_named_graphs=True
                    )
                ]
                drop = (graph,) if replace else ()
                self._ox.update(changeset_update(Changeset.of(parsed, (), drop), allow_blank=True))
                return len(parsed)
            except SyntaxError as exc:
                raise StoreOperationFailed(f"load into {graph}", f"unparseable: {exc}") from exc
            except (OSError, RuntimeError, ValueError) as exc:
                raise StoreOperationFailed(f"load into {graph}", str(exc)) from exc
            finally:
                self._generation += 1

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                if self._path is not None:
                    self._store.flush()
                # pyoxigraph has no close(): the lock is released when the handle is freed.
                self._store = None


def _materialized(
    result: ox.QueryBoolean | ox.QuerySolutions | ox.QueryTriples, limit: int | None
) -> QueryResult:
    if isinstance(result, ox.QueryBoolean):
        return AskResult(bool(result))
    if isinstance(result, ox.QuerySolutions):
        names = [v.value for v in result.variables]
        rows = tuple(row_from_ox(names, s) for s in _capped(result, limit))
        return SelectResult(tuple(names), rows)
    return GraphResult(tuple(triple_from_ox(t) for t in _capped(result, limit)))


def _capped(results: Iterable[_T], limit: int | None) -> Iterator[_T]:
    if limit is None:
        yield from results
        return
    taken = list(islice(results, limit + 1))
    if len(taken) > limit:
        raise ResultLimitExceeded(limit)
    yield from taken
