"""Search arguments, checked once into a :class:`SearchFilters`, and what a document matches.

Statuses apply to memories: pages and notes have none and count as active, so they appear
exactly when ``active`` is asked for (the default). A time range meets a memory by when it
happened (``occurred_at``), else when it held (``valid_from``..``valid_until``), else when it
was recorded; a page by its current revision, a note by its timestamp
(:meth:`~kgmem.index.lexical.LexicalDoc.overlaps`). The bounds are independent: a document is
at or after ``start`` and before ``end``, so a window whose end is not after its start
(``since == until``) holds nothing, and a search in it finds nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from kgmem.index.lexical import LexicalDoc
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.retrieval.errors import InvalidSearch

__all__ = ["DOC_KINDS", "SearchFilters", "TimeRange", "check_entity"]

#: The document kinds a ``kinds`` filter may name besides the memory kinds.
DOC_KINDS = ("memory", "page", "note")
_MEMORY_KINDS = frozenset(k.value for k in MemoryKind)
_STATUSES = frozenset(s.value for s in MemoryStatus)
_MAX_TAGS, _MAX_TAG, _MAX_ENTITY = 20, 64, 500

TimeRange = tuple[datetime | None, datetime | None]


@dataclass(frozen=True)
class SearchFilters:
    """What a document must be to be a result. ``entities`` None means any entity."""

    memory_kinds: frozenset[str]
    pages: bool
    notes: bool
    statuses: frozenset[str]
    tags: frozenset[str] = frozenset()
    entities: frozenset[str] | None = None
    start: datetime | None = None
    end: datetime | None = None

    @classmethod
    def of(
        cls,
        kinds: Iterable[str] | None = None,
        tags: Iterable[str] | None = None,
        time_range: TimeRange | None = None,
        statuses: Iterable[str] | None = None,
    ) -> SearchFilters:
        """Check the caller's arguments; :class:`InvalidSearch` names the first bad one."""
        wanted = _choices("kinds", kinds, _MEMORY_KINDS | set(DOC_KINDS), DOC_KINDS)
        memory_kinds = {k for k in wanted if k in _MEMORY_KINDS}
        if "memory" in wanted:
            memory_kinds = set(_MEMORY_KINDS)
        start, end = _time_range(time_range)
        return cls(
            memory_kinds=frozenset(memory_kinds),
            pages="page" in wanted,
            notes="note" in wanted,
            statuses=_choices("statuses", statuses, _STATUSES, (MemoryStatus.ACTIVE.value,)),
            tags=_tags(tags),
            start=start,
            end=end,
        )

    @property
    def empty(self) -> bool:
        """Whether the time window holds nothing (its end is not after its start)."""
        return self.start is not None and self.end is not None and self.start >= self.end

    def admits(self, form: tuple[str, str | None, str | None]) -> bool:
        """Whether a document of this form (kind, memory kind, status) may be a result:
        what :meth:`accepts` asks first, answerable from the search index's columns."""
        kind, memory_kind, status = form
        if self.empty:
            return False
        if kind == "memory":
            return memory_kind in self.memory_kinds and status in self.statuses
        return (self.pages if kind == "page" else self.notes) and "active" in self.statuses

    def accepts(self, doc: LexicalDoc) -> bool:
        if not self.admits((doc.kind, doc.memory_kind, doc.status)):
            return False
        if self.tags and not self.tags <= {t.casefold() for t in doc.tags}:
            return False
        if self.entities is not None and self.entities.isdisjoint(doc.about):
            return False
        return (self.start is None and self.end is None) or doc.overlaps(self.start, self.end)


def _choices(
    field: str, given: Iterable[str] | None, allowed: Iterable[str], default: Iterable[str]
) -> frozenset[str]:
    if given is None:
        return frozenset(default)
    if isinstance(given, str):
        given = [given]
    values = list(given)
    if not values:
        raise InvalidSearch(field, values, "give at least one value, or leave it out")
    for value in values:
        if not isinstance(value, str) or value not in allowed:
            raise InvalidSearch(field, value, f"unknown; one of {', '.join(sorted(allowed))}")
    return frozenset(str(v) for v in values)


def _tags(tags: Iterable[str] | None) -> frozenset[str]:
    if tags is None:
        return frozenset()
    values = [tags] if isinstance(tags, str) else list(tags)
    if len(values) > _MAX_TAGS:
        raise InvalidSearch("tags", len(values), f"at most {_MAX_TAGS} tags")
    for tag in values:
        if not isinstance(tag, str) or not tag.strip() or len(tag) > _MAX_TAG:
            raise InvalidSearch("tags", tag, f"a tag is 1 to {_MAX_TAG} characters")
    return frozenset(t.strip().casefold() for t in values)


def check_entity(entity: object) -> str:
    """An entity filter as given: an IRI or a name, 1 to 500 characters."""
    if not isinstance(entity, str) or not entity.strip() or len(entity) > _MAX_ENTITY:
        raise InvalidSearch("entity", entity, f"an entity IRI or name of 1 to {_MAX_ENTITY} chars")
    return entity.strip()


def _time_range(given: TimeRange | None) -> TimeRange:
    if given is None:
        return None, None
    if not isinstance(given, tuple | list) or len(given) != 2:
        raise InvalidSearch("time_range", given, "a (start, end) pair; either may be None")
    bounds: list[datetime | None] = []
    for bound in given:
        if bound is not None and not isinstance(bound, datetime):
            raise InvalidSearch("time_range", given, "start and end are datetimes or None")
        bounds.append(bound if bound is None or bound.tzinfo else bound.replace(tzinfo=UTC))
    return bounds[0], bounds[1]
