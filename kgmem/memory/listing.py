"""Reading memories back: lists by kind and status, the review inbox, and "as of" reads."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from rdflib import URIRef

from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.memory.records import MemoryRecord, read_memory
from kgmem.store import QueryRegistry, TripleStore, UserGraphs, flag, instant, number

__all__ = ["MemoryList", "MemorySummary"]

# Statuses a memory holds only after it has been active (for "as of" reads).
_ONCE_ACTIVE = {
    MemoryStatus.ACTIVE,
    MemoryStatus.ARCHIVED,
    MemoryStatus.SUPERSEDED,
    MemoryStatus.OUTDATED,
    MemoryStatus.ERRONEOUS,
    MemoryStatus.EXPIRED,
}


@dataclass(frozen=True)
class MemorySummary:
    iri: URIRef
    kind: MemoryKind
    status: MemoryStatus
    title: str
    recorded_at: datetime | None  # None: the store holds a value kgmem cannot read
    confidence: float | None
    pinned: bool
    quarantined: bool = False


class MemoryList:
    def __init__(self, store: TripleStore, queries: QueryRegistry) -> None:
        self._store, self._queries = store, queries

    def memories(
        self,
        uid: str,
        kind: MemoryKind | None = None,
        status: MemoryStatus | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[MemorySummary]:
        """The user's memories, newest first; quarantined ones come from their own graph."""
        graphs = UserGraphs(uid)
        graph = graphs.quarantine if status is MemoryStatus.QUARANTINED else graphs.kg
        bindings: dict[str, URIRef] = {"graph": graph}
        if kind is not None:
            bindings["kind"] = kind.iri
        if status is not None:
            bindings["status"] = status.iri
        rows = self._store.select(self._queries["memory/listing"], bindings)
        out = []
        for row in rows[offset : offset + limit]:
            out.append(
                MemorySummary(
                    URIRef(row["memory"]),
                    MemoryKind(_local(row["kind"])),
                    MemoryStatus(_local(row["status"])),
                    str(row["title"]),
                    instant(row["recordedAt"]),
                    number(row["confidence"]),
                    flag(row.get("pinned")),
                    graph == graphs.quarantine,
                )
            )
        return out

    def inbox(self, uid: str, limit: int = 100) -> list[MemorySummary]:
        """Drafts waiting for a person: the review inbox."""
        return self.memories(uid, status=MemoryStatus.PENDING, limit=limit)

    def as_of(self, uid: str, when: datetime, limit: int = 1000) -> list[MemoryRecord]:
        """Memories that were active at ``when`` (record time: learned, not yet retired)."""
        out = []
        for summary in self.memories(uid, limit=10**9):
            recorded = summary.recorded_at
            if summary.status not in _ONCE_ACTIVE or recorded is None or recorded > when:
                continue
            record = read_memory(self._store, summary.iri, [UserGraphs(uid).kg])
            if record is not None and (record.retired_at is None or record.retired_at > when):
                out.append(record)
            if len(out) >= limit:
                break
        return out


def _local(term: object) -> str:
    return str(term).rsplit("#", 1)[-1]
