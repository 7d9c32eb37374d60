"""The ``TripleStore`` port and the plain data that crosses it.

Terms are rdflib terms (``URIRef``, ``BNode``, ``Literal``) so nothing above an adapter sees a
backend's own types. Every write is one atomic call: :meth:`TripleStore.commit` of a
:class:`Changeset`, or :meth:`TripleStore.update` of one named update.

A :class:`CommitHook` sees every changeset before it is committed and may add quads to the
same atomic write (the projections' outbox is written this way, whoever the writer is), and
is told once the write is done.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple, Protocol

from rdflib import BNode, Literal, URIRef

from kgmem.store.queries import Query

__all__ = [
    "AskResult",
    "Bindings",
    "Changeset",
    "CommitHook",
    "Dataset",
    "GraphResult",
    "Quad",
    "QueryResult",
    "RdfFormat",
    "Row",
    "SelectResult",
    "Term",
    "TextStatement",
    "Transaction",
    "TripleStore",
    "ValueLists",
]

Term = URIRef | BNode | Literal
Bindings = Mapping[str, Term]
ValueLists = Mapping[str, Sequence[URIRef | Literal]]
Row = Mapping[str, Term]


class Quad(NamedTuple):
    subject: URIRef | BNode
    predicate: URIRef
    object: Term
    graph: URIRef


class TextStatement(NamedTuple):
    """A statement of one graph as plain text (see :meth:`TripleStore.statements`)."""

    subject: str  # an IRI, or a blank node's id
    predicate: str
    object: str  # an IRI, a literal's lexical form, or "_:" and a blank node's id
    datatype: str | None  # a literal's datatype IRI; None for an IRI or a blank node
    language: str  # a literal's language tag, or ""


class RdfFormat(StrEnum):
    TURTLE = "turtle"
    NTRIPLES = "ntriples"
    NQUADS = "nquads"
    RDFXML = "rdfxml"
    N3 = "n3"
    TRIG = "trig"


@dataclass(frozen=True)
class Changeset:
    """One atomic change: graphs dropped, then quads removed, then quads added."""

    add: tuple[Quad, ...] = ()
    remove: tuple[Quad, ...] = ()
    drop_graphs: tuple[URIRef, ...] = ()

    @classmethod
    def of(
        cls,
        add: Iterable[Quad] = (),
        remove: Iterable[Quad] = (),
        drop_graphs: Iterable[URIRef] = (),
    ) -> Changeset:
        return cls(tuple(add), tuple(remove), tuple(drop_graphs))

    def __bool__(self) -> bool:
        return bool(self.add or self.remove or self.drop_graphs)

    def merged(self, other: Changeset) -> Changeset:
        """Both changes as one (``other``'s drops, removals and additions after ours)."""
        return Changeset(
            self.add + other.add, self.remove + other.remove, self.drop_graphs + other.drop_graphs
        )


class CommitHook(Protocol):
    """Sees every commit of a store it is added to (:meth:`TripleStore.add_hook`)."""

    def before_commit(self, changes: Changeset) -> Changeset:
        """What to write in the same atomic commit as ``changes`` (empty for nothing).

        Called with the store's write lock held; raising aborts the commit.
        """
        ...

    def after_commit(self, changes: Changeset) -> None:
        """``changes`` are committed; called once the write lock is released (after the
        outermost :meth:`TripleStore.transaction`). Errors are logged, never raised."""
        ...


@dataclass(frozen=True)
class Dataset:
    """The graphs a query may see.

    ``default`` None means the union of every graph in ``named`` (or of the whole store when
    ``named`` is None too); ``named`` None means every graph of the store.
    """

    default: tuple[URIRef, ...] | None = None
    named: tuple[URIRef, ...] | None = None


@dataclass(frozen=True)
class SelectResult:
    variables: tuple[str, ...]
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class AskResult:
    value: bool


@dataclass(frozen=True)
class GraphResult:
    triples: tuple[tuple[URIRef | BNode, URIRef, Term], ...] = field(default=())


QueryResult = SelectResult | AskResult | GraphResult


class TripleStore(Protocol):
    """A quad store kgmem can use as its single source of truth."""

    @property
    def location(self) -> str:
        """Where the data lives (a directory, ``:memory:``, or an endpoint URL)."""
        ...

    def select(
        self,
        query: Query,
        bindings: Bindings | None = None,
        *,
        dataset: Dataset | None = None,
        values: ValueLists | None = None,
    ) -> list[Row]:
        """The query's solutions; ``values`` binds variables to lists of terms (one query
        for a batch of keys: see :func:`kgmem.store.queries.substitute`)."""
        ...

    def select_text(
        self, query: Query, bindings: Bindings | None = None
    ) -> list[tuple[str | None, ...]]:
        """The query's solutions as the plain text of each term (an IRI, a literal's lexical
        form; None unbound), in the order of its SELECT: for reads of hundreds of thousands
        of rows whose terms need no typing (making rdflib terms costs more than the query)."""
        ...

    def stream(
        self,
        query: Query,
        bindings: Bindings | None = None,
        *,
        dataset: Dataset | None = None,
        values: ValueLists | None = None,
    ) -> Iterator[Row]:
        """:meth:`select`'s solutions as the store finds them, each made when it is asked
        for: a read of a million rows holds one at a time (the query goes on as it is read,
        over the snapshot it began on)."""
        ...

    def stream_text(
        self, query: Query, bindings: Bindings | None = None
    ) -> Iterator[tuple[str | None, ...]]:
        """:meth:`select_text`'s solutions, made as they are asked for (see :meth:`stream`)."""
        ...

    def ask(
        self, query: Query, bindings: Bindings | None = None, *, dataset: Dataset | None = None
    ) -> bool: ...

    def construct(
        self, query: Query, bindings: Bindings | None = None, *, dataset: Dataset | None = None
    ) -> GraphResult: ...

    def update(self, query: Query, bindings: Bindings | None = None) -> None:
        """Run one named update atomically."""
        ...

    def commit(self, changes: Changeset) -> None:
        """Apply ``changes`` atomically: all of it or none of it, with what every hook adds."""
        ...

    def add_hook(self, hook: CommitHook) -> None:
        """Run ``hook`` on every later :meth:`commit` (and so every transaction).

        Named updates (:meth:`update`) and :meth:`load` run no hooks: what an update changed
        is not known before it runs (its caller refreshes what it needs: memory_cite, the
        index entry of the page it counted), and loads are for catalogue files.
        """
        ...

    def remove_hook(self, hook: CommitHook) -> None: ...

    def transaction(self) -> AbstractContextManager[Transaction]:
        """Hold the write lock while reading and building one changeset; commit on exit."""
        ...

    def query_text(self, text: str, *, dataset: Dataset, limit: int | None = None) -> QueryResult:
        """Run a caller-supplied read-only query (updates and SERVICE are refused).

        kgmem's standard prefixes (``kgmem.vocab.PREFIXES``) are predeclared.
        """
        ...

    def quads(
        self,
        graph: URIRef | None = None,
        subject: URIRef | BNode | None = None,
        predicate: URIRef | None = None,
        obj: Term | None = None,
    ) -> Iterator[Quad]: ...

    def statements(self, graph: URIRef) -> Iterator[TextStatement]:
        """Every statement of ``graph`` as text, subject by subject in the store's index
        order, each made when it is asked for (a million subjects' statements are read
        holding one)."""
        ...

    def graphs(self) -> list[URIRef]: ...

    def count(self, graph: URIRef | None = None) -> int: ...

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
        """Parse ``data`` into ``graph`` (replacing it by default); returns the triples
        ``data`` holds (a triple it holds twice, or the graph held already, counts as read).

        Atomic unless ``bulk``: bulk loads are for catalogue installs, never for user data.
        """
        ...

    def size_on_disk(self) -> int | None: ...

    def close(self) -> None: ...


class Transaction:
    """A changeset under construction inside :meth:`TripleStore.transaction`."""

    def __init__(self) -> None:
        self._add: list[Quad] = []
        self._remove: list[Quad] = []
        self._drop: list[URIRef] = []

    def add(self, *quads: Quad) -> None:
        self._add.extend(quads)

    def remove(self, *quads: Quad) -> None:
        self._remove.extend(quads)

    def drop_graph(self, graph: URIRef) -> None:
        self._drop.append(graph)

    def changeset(self) -> Changeset:
        return Changeset.of(self._add, self._remove, self._drop)
