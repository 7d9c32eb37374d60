"""A whole user's projection rows read from the store a slice at a time, for a rebuild.

:meth:`StoreReader.user` holds every row of a user at once, with the query's terms on the
way there: measured, a 100k-memory user took 1.9 GB above the process, and rebuilding one
user of a million memories ran this machine's 24 GB out. :class:`UserSlices` reads each
table's query as a stream (:meth:`~kgmem.store.TripleStore.stream`) and hands on slices of at
most ``size`` rows, which the projection writes and lets go. What it keeps meanwhile is the
id of each node handed on (an edge is handed on only between two of them, which is what
:func:`~kgmem.index.kuzu.params.closed` keeps) and the edges of the memories both the kg and
the quarantine graph hold (a handful), so that neither graph's rows repeat the other's.

The slices hold, row for row, what :func:`closed` keeps of :meth:`StoreReader.user`. A
node's values must come together for that: each node query's first pattern is the node's
type, which Oxigraph walks subject by subject, and the facts come subject by subject too.
A node met again after another (say a source with two of the source classes) raises
:class:`Ungrouped`; the caller then reads the user whole. A fact implied in reverse is
checked against the store (:meth:`StoreReader.asserted`), not against every fact read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from functools import partial
from itertools import chain, islice
from typing import Any, TypeVar

from rdflib import URIRef

from kgmem.index.node_rows import Values, entity_row, memory_row, page_row, source_row
from kgmem.index.reader import StoreReader
from kgmem.index.rows import (
    TABLES,
    AboutRow,
    EvidenceRow,
    PageOfRow,
    RelatesRow,
    Row,
    SharesRow,
    UserRows,
)
from kgmem.progress import Progress, Steps
from kgmem.store import UserGraphs

__all__ = ["SLICE", "Ungrouped", "UserSlices", "sliced"]

#: Rows in one slice (a rebuild writes ``_PER_TRANSACTION`` rows a transaction).
SLICE = 20_000
_R = TypeVar("_R")


class Ungrouped(Exception):
    """The store's rows of one node did not come together."""

    def __init__(self, table: str, node: str) -> None:
        super().__init__(f"{table}: the rows of {node} came apart")


def sliced(rows: Iterable[_R], size: int) -> Iterator[list[_R]]:
    """``rows`` in lists of ``size`` (the last may be shorter), each taken when asked for."""
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


class _Nodes:
    """The nodes of one table met so far, each once (its IRI after the user's node base: a
    million memories' ids are ~90 MB), with the pass of the graph that met it and whether
    its row was handed on."""

    def __init__(self, table: str, base: str) -> None:
        self._table, self._base, self._cut = table, base, len(base)
        self._met: dict[str, int] = {}  # key -> pass * 2 + 1 if handed on

    def _key(self, iri: str) -> str:
        return iri[self._cut :] if iri.startswith(self._base) else f"<{iri}"

    def meet(self, iri: str, graph: int) -> bool:
        """Whether ``iri`` is new (met by the graph of pass ``graph`` first); False when an
        earlier graph met it. Met again by the same graph, after other nodes: Ungrouped."""
        key = self._key(iri)
        found = self._met.get(key)
        if found is None:
            self._met[key] = graph * 2
            return True
        if found // 2 == graph:
            raise Ungrouped(self._table, iri)
        return False

    def hand_on(self, iri: str) -> None:
        self._met[self._key(iri)] |= 1

    def __contains__(self, iri: str) -> bool:
        """Whether ``iri``'s row was handed on (an edge may end at it)."""
        return self._met.get(self._key(iri), 0) & 1 == 1


class UserSlices:
    """The rows of ``uid`` as slices of at most ``size`` rows: every node first (entities,
    memories, pages, sources), then the edges between them. ``progress`` hears ``("write
    Memory", 1, 9)`` and so on as each table's rows begin."""

    def __init__(
        self, reader: StoreReader, uid: str, size: int = SLICE, progress: Progress | None = None
    ) -> None:
        self._reader, self._uid, self._size, self._progress = reader, uid, size, progress
        self._graphs = UserGraphs(uid)
        self._ids = {t: _Nodes(t, self._graphs.node_base) for t in TABLES[:4]}
        self._both: set[str] = set()  # memories of the kg graph the quarantine graph holds

    def __iter__(self) -> Iterator[UserRows]:
        steps, empty = Steps(self._progress, len(TABLES)), UserRows()
        for table, name, rows in self._tables():
            steps.start(f"write {table}")
            for chunk in sliced(rows, self._size):
                field: dict[str, Any] = {name: tuple(chunk)}
                yield replace(empty, **field)

    def _tables(self) -> Iterator[tuple[str, str, Iterator[Row]]]:
        """Each table's name, its field of :class:`UserRows` and its rows (read when asked)."""
        g = self._graphs
        yield "Entity", "entities", self._nodes("Entity", "entities", "entity", g.kg, entity_row)
        kg, held = (partial(memory_row, quarantined=q) for q in (False, True))
        memories = self._nodes("Memory", "memories", "memory", g.kg, kg)
        rest = self._nodes("Memory", "memories", "memory", g.quarantine, held, graph_pass=1)
        yield "Memory", "memories", chain(memories, rest)
        yield "Page", "pages", self._nodes("Page", "pages", "page", g.kg, page_row)
        yield "Source", "sources", self._nodes("Source", "sources", "source", g.sources, source_row)
        yield "RELATES", "relates", self._relates()
        yield "ABOUT", "about", self._memory_edges("about", "Entity", AboutRow, kg=g.kg)
        evidence = self._memory_edges("evidence", "Source", EvidenceRow, sources=g.sources)
        yield "EVIDENCE", "evidence", evidence
        yield "PAGE_OF", "page_of", self._page_of()
        yield "SHARES_MEMORY", "shares", self._shares()

    # -- nodes -------------------------------------------------------------------------

    def _nodes(
        self,
        table: str,
        name: str,
        var: str,
        graph: URIRef,
        build: Callable[[URIRef, Values], Row],
        *,
        graph_pass: int = 0,
    ) -> Iterator[Row]:
        """The rows of ``graph``'s nodes, built ``size`` at a time. Memories are read from
        two graphs: the second (``graph_pass`` 1) leaves out those the first held."""
        nodes, chunk = self._ids[table], dict[URIRef, Values]()
        current: URIRef | None = None
        values: Values | None = None
        for row in self._reader.stream(name, {"graph": graph}):
            iri, prop = row[var], row["property"]
            if not isinstance(iri, URIRef) or not isinstance(prop, URIRef):
                continue
            if iri != current:
                current = iri
                if not nodes.meet(iri, graph_pass):
                    self._both.add(str(iri))
                    values = None
                    continue
                if len(chunk) >= self._size:
                    yield from self._built(nodes, chunk, build)
                    chunk = {}
                values = chunk[iri] = defaultdict(list)
            if values is not None:
                values[prop].append(row["value"])
        yield from self._built(nodes, chunk, build)

    def _built(
        self, nodes: _Nodes, chunk: dict[URIRef, Values], build: Callable[[URIRef, Values], Row]
    ) -> list[Row]:
        rows = self._reader.built(chunk, build)
        for row in rows:
            nodes.hand_on(row.id)  # type: ignore[union-attr]
        return rows

    # -- edges -------------------------------------------------------------------------

    def _text(self, name: str, **bindings: URIRef) -> Iterator[tuple[str, ...]]:
        for row in self._reader.stream_text(name, dict(bindings)):
            if None not in row:
                yield row  # type: ignore[misc]

    def _memory_edges(
        self, name: str, end: str, make: Callable[[str, str], _R], **fixed: URIRef
    ) -> Iterator[_R]:
        """The edges of query ``name`` from memories to nodes of table ``end``, in the kg
        graph, then those only the quarantine graph adds."""
        memories, ends, kg = self._ids["Memory"], self._ids[end], self._graphs.kg
        twice: set[_R] = set()
        for graph in (kg, self._graphs.quarantine):
            for memory, node in self._text(name, graph=graph, **fixed):
                if memory not in memories or node not in ends:
                    continue
                row = make(memory, node)
                if memory in self._both:
                    if graph != kg and row in twice:
                        continue
                    twice.add(row)
                yield row

    def _page_of(self) -> Iterator[PageOfRow]:
        pages, entities = self._ids["Page"], self._ids["Entity"]
        for page, entity in self._text("page_of", graph=self._graphs.kg):
            if page in pages and entity in entities:
                yield PageOfRow(page, entity)

    def _shares(self) -> Iterator[SharesRow]:
        """Each pair once: the query gives both orders with the same count."""
        entities = self._ids["Entity"]
        for entity, other, count in self._text("shares", graph=self._graphs.kg):
            if entity < other and entity in entities and other in entities:
                yield SharesRow(entity, other, int(count))

    def _relates(self) -> Iterator[RelatesRow]:
        """The facts subject by subject, each followed by the reverse facts it implies."""
        inverses, entities = self._reader.inverses(self._uid), self._ids["Entity"]
        met: set[str] = set()
        group: list[RelatesRow] = []
        current: str | None = None
        facts = self._reader.stream_text("facts", {"graph": self._graphs.kg})
        for subject, predicate, obj, memory in facts:
            if subject is None or predicate is None or obj is None:
                continue
            if subject != current:
                yield from self._implied(group, inverses)
                if subject in met:
                    raise Ungrouped("RELATES", subject)
                met.add(subject)
                current, group = subject, []
            if subject in entities and obj in entities:
                group.append(RelatesRow(subject, obj, predicate, memory, False))
        yield from self._implied(group, inverses)

    def _implied(
        self, asserted: list[RelatesRow], inverses: dict[str, set[str]]
    ) -> Iterator[RelatesRow]:
        """``asserted`` (one subject's facts), and the reverse facts their properties imply
        that the store does not assert itself."""
        yield from asserted
        implied = {
            RelatesRow(row.target, row.source, inverse, row.memory, False)
            for row in asserted
            for inverse in inverses.get(row.predicate, ())
        }
        for row in sorted(implied - set(asserted), key=repr):
            if not self._reader.asserted(self._uid, row):
                yield replace(row, inferred=True)
