"""Reading memories back: lists by kind and status, the review inbox, and "as of" reads.

Two times answer "as of": *record time* (:meth:`MemoryList.as_of`: what kgmem held active
then) and *valid time* (``memories(valid_at=...)``: which value held in the world then, by
each memory's ``valid_from``..``valid_until``, whatever kgmem learned later). A valid-time
read sees the memories that are active or were since superseded or outdated (a superseded
value still held until its successor's source said the world changed); what is pending,
quarantined, archived or erroneous says nothing about the world unless its status is asked
for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.memory.entities import is_self_mention, name_key, self_entity
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.memory.records import MemoryRecord, read_memory
from kgmem.store import (
    QueryRegistry,
    Row,
    TripleStore,
    UserGraphs,
    flag,
    instant,
    iri_problem,
    number,
)

__all__ = ["VALID_TIME_STATUSES", "MemoryList", "MemorySummary"]

# Statuses a memory holds only after it has been active (for "as of" reads).
_ONCE_ACTIVE = {
    MemoryStatus.ACTIVE,
    MemoryStatus.ARCHIVED,
    MemoryStatus.SUPERSEDED,
    MemoryStatus.OUTDATED,
    MemoryStatus.ERRONEOUS,
    MemoryStatus.EXPIRED,
}

#: What a valid-time read sees when no status is asked for: values that held in the world.
VALID_TIME_STATUSES = (MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED, MemoryStatus.OUTDATED)

# (valid time given, claim filter given) -> the query that reads it
_QUERY = {
    (False, False): "memory/listing",
    (False, True): "memory/about",
    (True, False): "memory/valid_at",
    (True, True): "memory/valid_at_about",
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
    valid_from: datetime | None = None  # None: held since a time nobody said
    valid_until: datetime | None = None  # None: still holds, as far as kgmem knows


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
        *,
        valid_at: datetime | None = None,
        entity: str | None = None,
        predicate: URIRef | None = None,
    ) -> list[MemorySummary]:
        """The user's memories, newest first; quarantined ones come from their own graph.

        ``valid_at``: only those whose valid time contains it (from it or earlier, or from
        an unknown time; not closed at or before it), by default of
        :data:`VALID_TIME_STATUSES`. ``entity`` (an entity IRI or name; "I" is the user) and
        ``predicate`` (an IRI): only those with a claim about that subject, with that
        predicate."""
        graphs = UserGraphs(uid)
        graph = graphs.quarantine if status is MemoryStatus.QUARANTINED else graphs.kg
        bindings: dict[str, URIRef | Literal] = {"graph": graph}
        values: dict[str, Sequence[URIRef | Literal]] = {}
        if kind is not None:
            bindings["kind"] = kind.iri
        if status is not None:
            bindings["status"] = status.iri
        elif valid_at is not None:
            values["status"] = [s.iri for s in VALID_TIME_STATUSES]
        if valid_at is not None:
            when = valid_at if valid_at.tzinfo else valid_at.replace(tzinfo=UTC)
            bindings["when"] = Literal(when, datatype=XSD.dateTime)
        if predicate is not None:
            bindings["predicate"] = predicate
        if entity is not None:
            values["subject"] = self.entities(uid, entity)
            if not values["subject"]:
                return []
        about = entity is not None or predicate is not None
        query = self._queries[_QUERY[(valid_at is not None, about)]]
        rows = self._store.select(query, bindings, values=values or None)
        quarantined = graph == graphs.quarantine
        return [_summary(row, quarantined) for row in rows[offset : offset + limit]]

    def entities(self, uid: str, entity: str) -> list[URIRef]:
        """The user's entities ``entity`` (an IRI or a name) denotes, as memory_search's
        entity filter reads it: an IRI that is none of this user's denotes nothing, as a name
        no entity has does; "I", "me" or the user's id is (also) the user's own entity."""
        graphs = UserGraphs(uid)
        given = entity.strip()
        if "://" in given or given.startswith("urn:"):
            mine = given.startswith(graphs.node_base) and iri_problem(given) is None
            return [URIRef(given)] if mine else []
        query = self._queries["memory/entities_by_key"]
        rows = self._store.select(query, {"graph": graphs.kg, "key": Literal(name_key(given))})
        found = {URIRef(str(row["entity"])) for row in rows}
        if is_self_mention(given, uid):
            found.add(self_entity(uid))
        return sorted(found)

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


def _summary(row: Row, quarantined: bool) -> MemorySummary:
    return MemorySummary(
        URIRef(str(row["memory"])),
        MemoryKind(_local(row["kind"])),
        MemoryStatus(_local(row["status"])),
        str(row["title"]),
        instant(row["recordedAt"]),
        number(row["confidence"]),
        flag(row.get("pinned")),
        quarantined,
        instant(row.get("validFrom")),
        instant(row.get("validUntil")),
    )


def _local(term: object) -> str:
    return str(term).rsplit("#", 1)[-1]
