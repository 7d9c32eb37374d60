"""The warnings a context packet carries about the memories it returns.

Every intent gets the same warnings: they are about the items returned, and an item is
never returned without them. For each item, in this order of kinds:

- ``contradiction``: a ``kgm:contradicts`` edge, either way, to a memory that still stands
  (active, pending, proposed or quarantined). A contradiction settled by retiring the other
  memory (archived, superseded, outdated, erroneous, expired) is history, not a warning;
- ``low_confidence``: confidence below :attr:`WarningPolicy.low_confidence` (0.5);
- ``stale``: the memory stopped holding (``valid_until`` at or before now); or its time to
  live passed and the expiry job has not run yet (``expires_at`` at or before now); or, for
  facts, procedures and references, it was neither recorded nor used (the later of
  ``recorded_at`` and ``last_used_at``) in the last :attr:`WarningPolicy.stale_after_days`
  (180) days. Episodes are about a moment, so age alone never makes one stale;
- ``quarantined_neighbour``: a quarantined memory about an entity the item is about, other
  than the user's own entity (nearly every memory is about the user), and not already
  reported as contradicting the item;
- ``misleading``: an earlier task reported the memory misleading (``kgm:counterEvidence``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from rdflib import URIRef

from kgmem.memory.entities import self_entity
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.memory.records import MemoryRecord
from kgmem.store import QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = ["PacketWarning", "WarningKind", "WarningPolicy", "WarningReader"]

_DAY = 86400.0
_STANDING = frozenset(
    s.iri
    for s in (
        MemoryStatus.ACTIVE,
        MemoryStatus.PENDING,
        MemoryStatus.PROPOSED,
        MemoryStatus.QUARANTINED,
    )
)


class WarningKind(StrEnum):
    CONTRADICTION = "contradiction"
    LOW_CONFIDENCE = "low_confidence"
    STALE = "stale"
    QUARANTINED_NEIGHBOUR = "quarantined_neighbour"
    MISLEADING = "misleading"


@dataclass(frozen=True)
class PacketWarning:
    """Something the agent should know before relying on ``memory`` (a returned item);
    ``other`` is the memory that contradicts it or the quarantined neighbour."""

    kind: WarningKind
    memory: str
    message: str
    other: str | None = None


@dataclass(frozen=True)
class WarningPolicy:
    low_confidence: float = 0.5
    stale_after_days: float = 180.0


class WarningReader:
    """Reads the warnings of returned memories from the store (see the module docstring)."""

    def __init__(
        self, store: TripleStore, queries: QueryRegistry, policy: WarningPolicy | None = None
    ) -> None:
        self._store, self._queries = store, queries
        self.policy = policy or WarningPolicy()

    def warnings(self, uid: str, record: MemoryRecord, now: datetime) -> list[PacketWarning]:
        contradictions = self._contradictions(uid, record)
        shown = {w.other for w in contradictions}
        neighbours = [w for w in self._neighbours(uid, record) if w.other not in shown]
        return [
            *contradictions,
            *self._confidence(record),
            *self._staleness(record, now),
            *neighbours,
            *self._misleading(uid, record),
        ]

    def _contradictions(self, uid: str, record: MemoryRecord) -> list[PacketWarning]:
        graphs = UserGraphs(uid)
        bindings = {"memory": record.iri, "kg": graphs.kg, "quarantine": graphs.quarantine}
        out: list[PacketWarning] = []
        for row in self._store.select(self._queries["retrieval/contradictions"], bindings):
            other, status = row["other"], row["status"]
            if other == record.iri or status not in _STANDING:
                continue
            state = str(status).rsplit("#", 1)[-1]
            message = f"contradicted by {state} memory {str(row['title'])!r}"
            out.append(
                PacketWarning(WarningKind.CONTRADICTION, str(record.iri), message, str(other))
            )
        return out

    def _confidence(self, record: MemoryRecord) -> list[PacketWarning]:
        if record.confidence >= self.policy.low_confidence:
            return []
        message = f"confidence {record.confidence:.2f} is below {self.policy.low_confidence:.2f}"
        return [PacketWarning(WarningKind.LOW_CONFIDENCE, str(record.iri), message)]

    def _staleness(self, record: MemoryRecord, now: datetime) -> list[PacketWarning]:
        reasons = []
        if record.valid_until is not None and record.valid_until <= now:
            reasons.append(f"stopped holding on {record.valid_until.date().isoformat()}")
        if record.expires_at is not None and record.expires_at <= now:
            reasons.append(f"its time to live ran out on {record.expires_at.date().isoformat()}")
        if record.kind is not MemoryKind.EPISODIC:
            seen = max(t for t in (record.recorded_at, record.last_used_at) if t is not None)
            days = (now - seen).total_seconds() / _DAY
            if days >= self.policy.stale_after_days:
                reasons.append(f"neither recorded nor used for {int(days)} days")
        if not reasons:
            return []
        return [PacketWarning(WarningKind.STALE, str(record.iri), "; ".join(reasons))]

    def _neighbours(self, uid: str, record: MemoryRecord) -> list[PacketWarning]:
        graphs = UserGraphs(uid)
        bindings = {
            "memory": record.iri,
            "kg": graphs.kg,
            "quarantine": graphs.quarantine,
            "self": self_entity(uid),
        }
        about: dict[URIRef, tuple[str, list[str]]] = {}
        for row in self._store.select(self._queries["retrieval/quarantined_neighbours"], bindings):
            other = row["other"]
            assert isinstance(other, URIRef)
            _, names = about.setdefault(other, (str(row["title"]), []))
            name = str(row.get("name") or row["entity"])
            if name not in names:
                names.append(name)
        return [
            PacketWarning(
                WarningKind.QUARANTINED_NEIGHBOUR,
                str(record.iri),
                f"quarantined memory {title!r} is also about {', '.join(names)}",
                str(other),
            )
            for other, (title, names) in about.items()
        ]

    def _misleading(self, uid: str, record: MemoryRecord) -> list[PacketWarning]:
        graph = record.graph or UserGraphs(uid).kg
        reports = list(self._store.quads(graph, record.iri, KGM.counterEvidence))
        if not reports:
            return []
        times = "once" if len(reports) == 1 else f"{len(reports)} times"
        message = f"reported misleading {times} in earlier tasks"
        return [PacketWarning(WarningKind.MISLEADING, str(record.iri), message)]
