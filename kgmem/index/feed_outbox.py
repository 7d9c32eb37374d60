"""The outbox of the change feed: one durable entry per commit, in the user's outbox graph.

An entry lists the nodes a commit touched in the user's projected graphs (kg, sources,
quarantine): the subject of every quad it added or removed, and every subject of a graph it
dropped. It is written by a commit hook in the same atomic write as the change, so a change
without its entry (or an entry without its change) cannot exist, whatever wrote the change.

Entries are state-free: a projection refreshes the listed nodes by reading the store as it
is when it drains them, so draining entries in any order, or twice, gives the same result.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Iterable

from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.store import (
    Changeset,
    GraphKind,
    Quad,
    QueryRegistry,
    TripleStore,
    UserGraphs,
    parse_graph,
    users_with,
)
from kgmem.vocab import KGM, RDF

__all__ = ["Outbox", "projected_user", "purged_users", "touched_nodes"]

_PROJECTED = {GraphKind.KG, GraphKind.SOURCES, GraphKind.QUARANTINE}
_TYPE, _ENTRY, _NODE = URIRef(RDF.type), URIRef(KGM.OutboxEntry), URIRef(KGM.changedNode)
_DIGITS = 20  # time.time_ns() has 19 digits until the year 2286


def projected_user(graph: URIRef) -> str | None:
    """The user whose kg, sources or quarantine graph ``graph`` is (else None)."""
    if not str(graph).startswith("urn:kgmem:user:"):
        return None
    try:
        parsed = parse_graph(graph)
    except GraphNameError:
        return None
    return parsed.uid if parsed.kind in _PROJECTED else None


def touched_nodes(quads: Iterable[Quad]) -> dict[str, set[URIRef]]:
    """Per user, the subjects of ``quads`` that are in one of the user's projected graphs."""
    owners: dict[URIRef, str | None] = {}
    found: dict[str, set[URIRef]] = defaultdict(set)
    for quad in quads:
        if quad.graph not in owners:
            owners[quad.graph] = projected_user(quad.graph)
        uid = owners[quad.graph]
        if uid is not None and isinstance(quad.subject, URIRef):
            found[uid].add(quad.subject)
    return dict(found)


def purged_users(changes: Changeset) -> set[str]:
    """Users from whose projected graphs ``changes`` removes a node outright (a type removed
    and no type added for it: a forget) or drops a whole graph; the projections must let go
    of those at once."""
    typed = {q.subject for q in changes.add if q.predicate == _TYPE}
    removed = (q.graph for q in changes.remove if q.predicate == _TYPE and q.subject not in typed)
    graphs = {*removed, *changes.drop_graphs}
    return {uid for graph in graphs if (uid := projected_user(graph)) is not None}


class Outbox:
    """Writes, lists and deletes the change feed's entries."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries
        self._last = 0
        self._sequence_lock = threading.Lock()

    def _next_entry(self, uid: str) -> URIRef:
        with self._sequence_lock:  # ordered by time across restarts, strictly within one
            self._last = max(time.time_ns(), self._last + 1)
            return URIRef(f"urn:kgmem:outbox:{uid}:{self._last:0{_DIGITS}d}")

    def entries_for(self, changes: Changeset) -> Changeset:
        """One entry per user ``changes`` touches, as quads to commit with them."""
        quads: Iterable[Quad] = itertools.chain(changes.add, changes.remove)
        dropped = [g for g in changes.drop_graphs if projected_user(g) is not None]
        if dropped:  # read before the drop: every node of the graph goes
            quads = itertools.chain(quads, *(self._store.quads(g) for g in dropped))
        add: list[Quad] = []
        for uid, nodes in sorted(touched_nodes(quads).items()):
            entry, graph = self._next_entry(uid), UserGraphs(uid).outbox
            add.append(Quad(entry, _TYPE, _ENTRY, graph))
            add += (Quad(entry, _NODE, node, graph) for node in sorted(nodes))
        return Changeset.of(add)

    def users(self) -> list[str]:
        """Every user with entries waiting."""
        return users_with(self._store.graphs(), GraphKind.OUTBOX)

    def entries(self, uid: str) -> list[URIRef]:
        """``uid``'s entries, oldest first."""
        rows = self._store.select(
            self._queries["index/outbox_entries"], {"graph": UserGraphs(uid).outbox}
        )
        return [e for row in rows if isinstance(e := row["entry"], URIRef)]

    def nodes(self, uid: str, entry: URIRef) -> set[URIRef]:
        graph = UserGraphs(uid).outbox
        return {
            q.object for q in self._store.quads(graph, entry, _NODE) if isinstance(q.object, URIRef)
        }

    def delete(self, uid: str, entries: Iterable[URIRef]) -> None:
        """Remove drained entries (one commit; it touches no projected graph)."""
        graph = UserGraphs(uid).outbox
        gone = [q for entry in entries for q in self._store.quads(graph, entry)]
        self._store.commit(Changeset.of(remove=gone))
