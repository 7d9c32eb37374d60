"""The storage floor of a write: what the on-disk Oxigraph store alone costs for the reads and
the commit one gate call asks of it, with no kgmem code around them.

:class:`Recorder` stands in for the ``pyoxigraph.Store`` under the adapter while one call
runs and keeps every storage operation it asks for (pattern reads, SPARQL queries, the
commit's ``extend``, or the changeset a commit that removes writes as one SPARQL update), a
pattern read with the number of quads its caller took (one that asks whether anything
matches stops at the first). :func:`replay` then runs them again straight on the native
store: each pattern read taken as far as its caller took it, with every term of every quad
decoded (as the adapter does), each query's solutions walked, and each commit written again
under fresh graph names (the same quads again would be no-ops): an ``extend`` as such, an
update as the same update, with the quads it removes put there first (not timed), on disk
and into an in-memory store for comparison. Used by ``batch_draft.py --floor``.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import pyoxigraph as ox
from rdflib import URIRef

from kgmem.store import Changeset, Quad
from kgmem.store import oxigraph as adapter
from kgmem.store.ox_terms import quad_to_ox
from kgmem.store.ox_update import changeset_update
from kgmem.store.oxigraph import OxigraphStore

__all__ = ["Floor", "Recorder", "record", "replay"]

_ROUNDS = 7


@dataclass
class Recorder:
    """Delegates to ``inner``; while ``on``, records the operations that read or write."""

    inner: ox.Store
    on: bool = False
    reads: list[tuple[tuple[Any, ...], list[int]]] = field(default_factory=list)
    queries: list[tuple[tuple[Any, ...], dict[str, Any]]] = field(default_factory=list)
    writes: list[list[ox.Quad]] = field(default_factory=list)
    changes: list[Changeset] = field(default_factory=list)  # commits written as an update
    updates: int = 0  # other SPARQL updates (not replayed)
    changes_pending: bool = False  # the next update writes the last of ``changes``

    def quads_for_pattern(self, *args: Any) -> Iterator[ox.Quad]:
        found = self.inner.quads_for_pattern(*args)
        if not self.on:
            return found
        taken = [0]
        self.reads.append((args, taken))
        return _counted(found, taken)

    def query(self, *args: Any, **kwargs: Any) -> Any:
        if self.on:
            self.queries.append((args, kwargs))
        return self.inner.query(*args, **kwargs)

    def extend(self, quads: Any) -> None:
        quads = list(quads)
        if self.on:
            self.writes.append(quads)
        self.inner.extend(quads)

    def update(self, *args: Any, **kwargs: Any) -> None:
        if self.on and not self.changes_pending:
            self.updates += 1
        self.changes_pending = False
        self.inner.update(*args, **kwargs)

    def changeset_update(self, changes: Changeset, **kwargs: Any) -> str:
        """The adapter's ``changeset_update``, noting the commit it writes."""
        if self.on:
            self.changes.append(changes)
            self.changes_pending = True
        return changeset_update(changes, **kwargs)

    def __len__(self) -> int:
        return len(self.inner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _counted(quads: Iterator[ox.Quad], taken: list[int]) -> Iterator[ox.Quad]:
    for quad in quads:
        taken[0] += 1
        yield quad


def record(store: object) -> Recorder:
    """Put a :class:`Recorder` under ``store`` (an :class:`OxigraphStore` on disk)."""
    if not isinstance(store, OxigraphStore) or store.location == ":memory:":
        raise TypeError("the storage floor is measured on an on-disk OxigraphStore")
    recorder = Recorder(store._ox)  # a benchmark looks under the adapter
    store._store = recorder  # type: ignore[assignment]
    adapter.changeset_update = recorder.changeset_update  # type: ignore[assignment]
    return recorder


@dataclass(frozen=True)
class Floor:
    reads: int
    read_quads: int
    queries: int
    commits: int
    written: int
    updates: int
    read_ms: float
    query_ms: float
    write_ms: float
    write_memory_ms: float

    @property
    def total_ms(self) -> float:
        return self.read_ms + self.query_ms + self.write_ms

    def lines(self) -> list[str]:
        return [
            f"  {'operation':<22}{'count':>7}{'quads':>8}{'median ms':>11}",
            f"  {'pattern reads':<22}{self.reads:>7}{self.read_quads:>8}{self.read_ms:>11.1f}",
            f"  {'SPARQL queries':<22}{self.queries:>7}{'':>8}{self.query_ms:>11.1f}",
            f"  {'commit, on disk':<22}{self.commits:>7}{self.written:>8}{self.write_ms:>11.1f}",
            f"  {'commit, in memory':<22}{'':>7}{'':>8}{self.write_memory_ms:>11.1f}",
            f"  {'storage floor':<22}{'':>7}{'':>8}{self.total_ms:>11.1f}"
            + (f"  ({self.updates} SPARQL updates not replayed)" if self.updates else ""),
        ]


def _floor_graph(graph: str, n: int) -> str:
    """The fresh graph round ``n`` writes ``graph``'s quads to."""
    return f"{graph}-floor{n}"


def _renamed(graph: object, n: int) -> ox.NamedNode:
    if not isinstance(graph, ox.NamedNode):
        raise TypeError("kgmem writes only to named graphs")
    return ox.NamedNode(_floor_graph(graph.value, n))


def _moved(quad: Quad, n: int) -> Quad:
    return quad._replace(graph=URIRef(_floor_graph(str(quad.graph), n)))


def _update(inner: ox.Store, changes: Changeset, n: int) -> float:
    """Milliseconds ``changes`` take as the adapter writes them (one update), under fresh
    graph names, with what it removes put there first."""
    moved = Changeset.of(
        [_moved(q, n) for q in changes.add],
        [_moved(q, n) for q in changes.remove],
        [URIRef(_floor_graph(str(g), n)) for g in changes.drop_graphs],
    )
    inner.extend([quad_to_ox(q) for q in moved.remove])
    text = changeset_update(moved)
    started = time.perf_counter()
    inner.update(text)
    return (time.perf_counter() - started) * 1000


def replay(recorder: Recorder, keep: bool = False) -> Floor:
    """Run the recorded operations again on the native store; medians of a few rounds.
    The adapter writes its commits as it did before :func:`record`. The graphs the rounds
    wrote go afterwards unless ``keep`` (a test looks at them)."""
    recorder.on = False
    adapter.changeset_update = changeset_update
    inner = recorder.inner
    read_ms, query_ms = [], []
    for _ in range(_ROUNDS):
        started = time.perf_counter()
        for args, (taken,) in recorder.reads:
            for quad in islice(inner.quads_for_pattern(*args), taken):
                _ = quad.subject, quad.predicate, quad.object, quad.graph_name
        read_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        for args, kwargs in recorder.queries:
            result = inner.query(*args, **kwargs)
            if isinstance(result, ox.QuerySolutions | ox.QueryTriples):
                for _ in result:
                    pass
        query_ms.append((time.perf_counter() - started) * 1000)
    write_ms, memory_ms = [], []
    scratch = ox.Store()
    for n in range(_ROUNDS):
        quads = [
            ox.Quad(q.subject, q.predicate, q.object, _renamed(q.graph_name, n))
            for batch in recorder.writes
            for q in batch
        ]
        started = time.perf_counter()
        inner.extend(quads)
        spent = (time.perf_counter() - started) * 1000
        write_ms.append(spent + sum(_update(inner, c, n) for c in recorder.changes))
        started = time.perf_counter()
        scratch.extend(quads)
        memory_ms.append((time.perf_counter() - started) * 1000)
    # the rounds' graphs go: a kept store (``--home``) must start again, and kgmem skips a
    # graph it does not name but would count its quads
    graphs = {ox.NamedNode(str(q.graph)) for c in recorder.changes for q in (*c.add, *c.remove)}
    for graph in () if keep else graphs | {q.graph_name for b in recorder.writes for q in b}:
        for n in range(_ROUNDS):
            inner.remove_graph(_renamed(graph, n))
    return Floor(
        reads=len(recorder.reads),
        read_quads=sum(taken for _, (taken,) in recorder.reads),
        queries=len(recorder.queries),
        commits=len(recorder.writes) + len(recorder.changes),
        written=sum(len(batch) for batch in recorder.writes)
        + sum(len(c.add) + len(c.remove) for c in recorder.changes),
        updates=recorder.updates,
        read_ms=statistics.median(read_ms),
        query_ms=statistics.median(query_ms),
        write_ms=statistics.median(write_ms) if recorder.writes or recorder.changes else 0.0,
        write_memory_ms=statistics.median(memory_ms) if recorder.writes else 0.0,
    )
