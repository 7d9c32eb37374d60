"""Memories as kgmem knew them at a time (record time), beside what held at a time (valid time).

The decisions feed keeps the exact quads each decision added and removed, and every change a
memory goes through after the write gate (activate, supersede, archive, quarantine, pin,
expire, a consolidation pass's writes, a revert) is a decision. Undoing, newest first, the
decisions made after ``at`` turns today's graphs back into what they were then
(:meth:`KnownAt.rewind`): a memory recorded later is left out, one whose status, pin or valid
time changed later shows what it was then, one whose creation was reverted since shows as it
was. A forgotten memory is purged with nothing kept to rewind, so it is never shown again.

With ``valid_at`` too the read is bitemporal: which values held at ``valid_at``, as kgmem knew
them at ``known_at`` (where the user worked last March, as kgmem knew it on April 1st).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from rdflib import URIRef

from kgmem.errors import UnknownMemory
from kgmem.memory.decisions import Decisions
from kgmem.memory.listing import VALID_TIME_STATUSES, MemoryList, MemorySummary
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.store import Quad, QueryRegistry, TripleStore, UserGraphs, flag, instant, number
from kgmem.vocab import KGM, RDF

__all__ = ["KnownAt", "Rewind"]


@dataclass(frozen=True)
class Rewind:
    """The net change the decisions after a time made: the graphs then are today's without
    ``added`` and with ``removed``."""

    added: frozenset[Quad]
    removed: frozenset[Quad]

    @property
    def touched(self) -> frozenset[object]:
        return frozenset(q.subject for q in self.added | self.removed)

    def then(self, now: Iterable[Quad]) -> list[Quad]:
        """``now`` (quads as they are) as they were."""
        return [q for q in now if q not in self.added]


class KnownAt:
    def __init__(self, store: TripleStore, queries: QueryRegistry, decisions: Decisions) -> None:
        self._store, self._decisions = store, decisions
        self._listing = MemoryList(store, queries)

    def rewind(self, uid: str, at: datetime) -> Rewind:
        """The net change of every decision made after ``at``."""
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
        later = sorted(
            (d for d in self._decisions.feed(uid, limit=10**9) if d.at > at),
            key=lambda d: (d.at, str(d.iri)),
        )
        added: set[Quad] = set()
        removed: set[Quad] = set()
        for decision in later:
            if decision.target is None:  # a refusal changed nothing
                continue
            try:
                change = self._decisions.change_of(uid, decision.iri)
            except UnknownMemory:
                continue
            for quad in change.add:
                if quad in removed:
                    removed.discard(quad)
                else:
                    added.add(quad)
            for quad in change.remove:
                if quad in added:
                    added.discard(quad)
                else:
                    removed.add(quad)
        return Rewind(frozenset(added), frozenset(removed))

    def memories(
        self,
        uid: str,
        kind: MemoryKind | None = None,
        status: MemoryStatus | None = None,
        limit: int = 100,
        offset: int = 0,
        *,
        known_at: datetime,
        valid_at: datetime | None = None,
        entity: str | None = None,
        predicate: URIRef | None = None,
    ) -> list[MemorySummary]:
        """:meth:`MemoryList.memories` as kgmem knew it at ``known_at`` (see the module)."""
        at = known_at if known_at.tzinfo else known_at.replace(tzinfo=UTC)
        rewind = self.rewind(uid, at)
        found: dict[URIRef, MemorySummary] = {}
        for shelf in (None, MemoryStatus.QUARANTINED):
            for s in self._listing.memories(
                uid, kind, shelf, limit=10**9, entity=entity, predicate=predicate
            ):
                found[s.iri] = s
        for node in sorted(rewind.touched, key=str):  # as the rewound quads say it was
            if isinstance(node, URIRef):
                then = self._then(uid, node, rewind)
                if then is None:
                    found.pop(node, None)
                elif node in found or (entity is None and predicate is None):
                    found[node] = then
        wanted = [
            s
            for s in found.values()
            if s.recorded_at is not None
            and s.recorded_at <= at
            and (kind is None or s.kind is kind)
            and _shelved(s, status, valid_at)
            and (valid_at is None or _holds(s, valid_at))
        ]
        wanted.sort(key=lambda s: (-(s.recorded_at.timestamp() if s.recorded_at else 0), s.iri))
        return wanted[offset : offset + limit]

    def _then(self, uid: str, node: URIRef, rewind: Rewind) -> MemorySummary | None:
        """Memory ``node`` as it was (None: no memory then)."""
        graphs = UserGraphs(uid)
        quads = [
            *rewind.then(self._store.quads(graphs.kg, node)),
            *rewind.then(self._store.quads(graphs.quarantine, node)),
            *(q for q in rewind.removed if q.subject == node),
        ]
        facts: dict[URIRef, object] = {}
        graph = None
        for q in quads:
            if q.predicate == RDF.type and q.object == KGM.Memory:
                graph = q.graph
            facts.setdefault(q.predicate, q.object)
        if graph is None or KGM.status not in facts or KGM.kind not in facts:
            return None
        return MemorySummary(
            node,
            MemoryKind(_local(facts[KGM.kind])),
            MemoryStatus(_local(facts[KGM.status])),
            str(facts.get(KGM.title, "")),
            instant(facts.get(KGM.recordedAt)),
            number(facts.get(KGM.confidence)),
            flag(facts.get(KGM.pinned)),
            graph == graphs.quarantine,
            instant(facts.get(KGM.validFrom)),
            instant(facts.get(KGM.validUntil)),
        )


def _shelved(s: MemorySummary, status: MemoryStatus | None, valid_at: datetime | None) -> bool:
    if status is MemoryStatus.QUARANTINED:
        return s.quarantined
    if s.quarantined:
        return False
    if status is not None:
        return s.status is status
    return valid_at is None or s.status in VALID_TIME_STATUSES


def _holds(s: MemorySummary, when: datetime) -> bool:
    """memory/valid_at's filter: from ``when`` or earlier (or unknown), not closed by then."""
    when = when if when.tzinfo else when.replace(tzinfo=UTC)
    return (s.valid_from is None or s.valid_from <= when) and (
        s.valid_until is None or s.valid_until > when
    )


def _local(term: object) -> str:
    return str(term).rsplit("#", 1)[-1]
