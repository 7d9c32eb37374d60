"""The outbox of the change feed: one durable entry per commit, in the user's outbox graph.

An entry lists the nodes a commit touched in the user's projected graphs (kg, sources,
quarantine): the subject of every quad it added or removed, and every subject of a graph it
dropped. It also says how: a subject whose quad points at another node of the user (a fact
between two entities, a memory about an entity) is *linked* to it (``kgm:changedLink``, "s o"),
any other change (a name, a type, a status, a text) changed the subject's own *data*
(``kgm:changedData``), so a projection can refresh a hub entity's changed links without
re-reading everything at it. An entry with neither (written before they existed) says only
"these nodes changed". It is written by a commit hook in the same atomic write as the change,
so a change without its entry (or an entry without its change) cannot exist, whatever wrote it.

Entries are state-free: a projection refreshes the listed nodes by reading the store as it
is when it drains them, so draining entries in any order, or twice, gives the same result.

The same commit also moves the user's *stamp* (``kgm:stamp`` of the outbox graph's node
``urn:kgmem:outbox:<uid>:stamp``) to the number of its entry: a value that changes with
every write to the user's projected graphs, and only with one. A projection kept on disk
records the stamp it is level with (every entry up to it drained into it); at start-up an
equal stamp says the projection holds what the store holds without reading either. Each
entry also names the stamp it moved on from (``kgm:after``): drains delete the oldest
entries first, so the outbox always holds the latest entries, and a copy level with an older
stamp is caught up by the entries from the one after it (:meth:`Outbox.since`), when that
one is still there.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from rdflib import Literal, URIRef

from kgmem.errors import GraphNameError
from kgmem.index.base import Links
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

__all__ = [
    "Changes",
    "Outbox",
    "entry_users",
    "projected_user",
    "purged_users",
    "stamp_node",
    "touched_nodes",
    "user_changes",
]

_PROJECTED = {GraphKind.KG, GraphKind.SOURCES, GraphKind.QUARANTINE}
_TYPE, _ENTRY, _NODE = URIRef(RDF.type), URIRef(KGM.OutboxEntry), URIRef(KGM.changedNode)
_DATA, _LINK = URIRef(KGM.changedData), URIRef(KGM.changedLink)
_STAMP, _AFTER = URIRef(KGM.stamp), URIRef(KGM.after)
_PARTS = ("claim/", "evidence/")  # node kinds that stand for the memory they belong to
_OWNING = (URIRef(KGM.claim), URIRef(KGM.evidence))  # memory -> its parts
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


def stamp_node(uid: str) -> URIRef:
    """The node whose ``kgm:stamp`` is the number of ``uid``'s last outbox entry."""
    return URIRef(f"urn:kgmem:outbox:{uid}:stamp")


def touched_nodes(quads: Iterable[Quad]) -> dict[str, set[URIRef]]:
    """Per user, the subjects of ``quads`` that are in one of the user's projected graphs."""
    return {uid: changes.nodes for uid, changes in user_changes(quads).items()}


@dataclass
class Changes:
    """One user's changes in one commit (or a batch of entries): the subjects, those whose
    own data changed, and the links; ``exact`` is False for an entry that does not say."""

    nodes: set[URIRef] = field(default_factory=set)
    data: set[URIRef] = field(default_factory=set)
    pairs: set[tuple[URIRef, URIRef]] = field(default_factory=set)
    exact: bool = True

    def add(self, other: Changes) -> None:
        self.nodes |= other.nodes
        self.pairs |= other.pairs
        # an entry that does not say how its nodes changed counts them all as data
        self.data |= other.data if other.exact else other.nodes

    def links(self) -> Links:
        linked = {s for s, _ in self.pairs}
        return Links(frozenset(linked - self.data), frozenset(self.pairs))


def user_changes(quads: Iterable[Quad]) -> dict[str, Changes]:
    """Per user, what ``quads`` (in the user's projected graphs) change: see the module."""
    owners: dict[URIRef, tuple[str, str] | None] = {}
    found: dict[str, Changes] = defaultdict(Changes)
    for quad in quads:
        if quad.graph not in owners:
            uid = projected_user(quad.graph)
            owners[quad.graph] = None if uid is None else (uid, UserGraphs(uid).node_base)
        owner = owners[quad.graph]
        if owner is None or not isinstance(quad.subject, URIRef):
            continue
        (uid, base), obj = owner, quad.object
        changes = found[uid]
        changes.nodes.add(quad.subject)
        if isinstance(obj, URIRef) and quad.predicate != _TYPE and obj.startswith(base):
            changes.pairs.add((quad.subject, obj))
        else:
            changes.data.add(quad.subject)
    return dict(found)


def purged_users(changes: Changeset) -> set[str]:
    """Users from whose projected graphs ``changes`` removes a node outright (a type removed
    and no type added for it: a forget) or drops a whole graph; the projections must let go
    of those at once."""
    typed = {q.subject for q in changes.add if q.predicate == _TYPE}
    removed = (q.graph for q in changes.remove if q.predicate == _TYPE and q.subject not in typed)
    graphs = {*removed, *changes.drop_graphs}
    return {uid for graph in graphs if (uid := projected_user(graph)) is not None}


def entry_users(entries: Changeset) -> dict[str, URIRef]:
    """The entry :meth:`Outbox.entries_for` wrote for each user."""
    found = {}
    for quad in entries.add:
        if quad.predicate == _TYPE and quad.object == _ENTRY and isinstance(quad.subject, URIRef):
            uid = parse_graph(quad.graph).uid
            if uid is not None:
                found[uid] = quad.subject
    return found


class Outbox:
    """Writes, lists and deletes the change feed's entries."""

    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries
        self._last = 0
        self._sequence_lock = threading.Lock()

    def _next_number(self) -> int:
        with self._sequence_lock:  # ordered by time across restarts, strictly within one
            self._last = max(time.time_ns(), self._last + 1)
            return self._last

    def entries_for(self, changes: Changeset) -> Changeset:
        """One entry per user ``changes`` touches, and the move of their stamps to it, as
        quads to commit with them (the caller holds the store's write lock)."""
        quads: Iterable[Quad] = itertools.chain(changes.add, changes.remove)
        dropped = [g for g in changes.drop_graphs if projected_user(g) is not None]
        if dropped:  # read before the drop: every node of the graph goes
            quads = itertools.chain(quads, *(self._store.quads(g) for g in dropped))
        add: list[Quad] = []
        remove: list[Quad] = []
        for uid, user in sorted(user_changes(quads).items()):
            number, graph = self._next_number(), UserGraphs(uid).outbox
            entry, stamp = URIRef(f"urn:kgmem:outbox:{uid}:{number:0{_DIGITS}d}"), stamp_node(uid)
            before = list(self._store.quads(graph, stamp, _STAMP))
            remove += before
            add.append(Quad(stamp, _STAMP, Literal(number), graph))
            add.append(Quad(entry, _TYPE, _ENTRY, graph))
            add += (Quad(entry, _AFTER, q.object, graph) for q in before)
            add += (Quad(entry, _NODE, node, graph) for node in sorted(user.nodes))
            add += (Quad(entry, _DATA, node, graph) for node in sorted(user.data))
            add += (Quad(entry, _LINK, Literal(f"{s} {o}"), graph) for s, o in sorted(user.pairs))
        return Changeset.of(add, remove)

    def stamp(self, uid: str) -> int | None:
        """``uid``'s stamp: the number of the last entry written (None: none ever was)."""
        for quad in self._store.quads(UserGraphs(uid).outbox, stamp_node(uid), _STAMP):
            value = quad.object.toPython() if isinstance(quad.object, Literal) else None
            if isinstance(value, int):
                return value
        return None

    def since(self, uid: str, stamp: int | None) -> Changes | None:
        """What the entries after ``stamp`` changed, if the outbox still holds the entry
        that moved on from it (and so every one after); None if it does not."""
        graph = UserGraphs(uid).outbox
        entries = self.entries(uid)
        for at, entry in enumerate(entries):
            after = [q.object for q in self._store.quads(graph, entry, _AFTER)]
            value = after[0].toPython() if after and isinstance(after[0], Literal) else None
            if value == stamp:
                found = Changes()
                for later in entries[at:]:
                    found.add(self.changes(uid, later))
                return found
        return None

    def with_owners(self, uid: str, nodes: set[URIRef]) -> set[URIRef]:
        """``nodes`` and the memories of the claims and evidence items among them."""
        graphs = UserGraphs(uid)
        base = graphs.node_base
        owners: set[URIRef] = set()
        for node in sorted(nodes):
            if str(node).startswith(base) and str(node)[len(base) :].startswith(_PARTS):
                # two index lookups a graph (a SPARQL query for the same costs ~5x); a part
                # is in one graph, so the quarantine is looked in only when the kg lacks it
                for graph in (graphs.kg, graphs.quarantine):
                    found = {
                        m
                        for predicate in _OWNING
                        for q in self._store.quads(graph, None, predicate, node)
                        if isinstance(m := q.subject, URIRef)
                    }
                    owners |= found
                    if found:
                        break
        return nodes | owners

    def users(self) -> list[str]:
        """Every user with entries waiting."""
        return [
            uid
            for uid in users_with(self._store.graphs(), GraphKind.OUTBOX)
            if any(True for _ in self._store.quads(UserGraphs(uid).outbox, None, _TYPE, _ENTRY))
        ]

    def entries(self, uid: str) -> list[URIRef]:
        """``uid``'s entries, oldest first."""
        rows = self._store.select(
            self._queries["index/outbox_entries"], {"graph": UserGraphs(uid).outbox}
        )
        return [e for row in rows if isinstance(e := row["entry"], URIRef)]

    def holds(self, uid: str, entry: URIRef) -> bool:
        """Whether ``entry`` is still in ``uid``'s outbox (not drained yet)."""
        return any(True for _ in self._store.quads(UserGraphs(uid).outbox, entry, _TYPE))

    def changes(self, uid: str, entry: URIRef) -> Changes:
        """What ``entry`` says changed."""
        found = Changes()
        for q in self._store.quads(UserGraphs(uid).outbox, entry):
            if q.predicate == _NODE and isinstance(q.object, URIRef):
                found.nodes.add(q.object)
            elif q.predicate == _DATA and isinstance(q.object, URIRef):
                found.data.add(q.object)
            elif q.predicate == _LINK and len(ends := str(q.object).split(" ")) == 2:
                found.pairs.add((URIRef(ends[0]), URIRef(ends[1])))
        found.exact = bool(found.data or found.pairs) or not found.nodes
        return found

    def delete(self, uid: str, entries: Iterable[URIRef]) -> None:
        """Remove drained entries (one commit; it touches no projected graph)."""
        graph = UserGraphs(uid).outbox
        gone = [q for entry in entries for q in self._store.quads(graph, entry)]
        self._store.commit(Changeset.of(remove=gone))
