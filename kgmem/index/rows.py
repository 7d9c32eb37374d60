"""The rows of the graph projection, as plain data both sides agree on.

The store reader turns a user's graphs into :class:`UserRows`; a projection backend stores
them and reads them back into the same types. :func:`fingerprint_of` therefore compares
like with like: a count per table and an order-independent checksum of the rows.

Node ids are IRIs (strings); instants are naive UTC datetimes; multi-valued fields are
sorted tuples, so two equal rows are equal whatever order their values came in.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, fields
from datetime import datetime
from hashlib import sha256
from typing import TypeVar

__all__ = [
    "TABLES",
    "AboutRow",
    "EntityRow",
    "EvidenceRow",
    "Fingerprint",
    "FingerprintSum",
    "MemoryRow",
    "PageOfRow",
    "PageRow",
    "RelatesRow",
    "Row",
    "SharesRow",
    "SourceRow",
    "TableFingerprint",
    "UserRows",
    "fingerprint_of",
]


@dataclass(frozen=True)
class TableFingerprint:
    table: str
    count: int
    checksum: str


@dataclass(frozen=True)
class Fingerprint:
    """Per table: how many rows of one user, and an order-independent checksum of them."""

    tables: tuple[TableFingerprint, ...]

    @property
    def counts(self) -> dict[str, int]:
        return {t.table: t.count for t in self.tables}

    @property
    def total(self) -> int:
        return sum(t.count for t in self.tables)

    def drift(self, other: Fingerprint) -> tuple[str, ...]:
        """The tables whose rows differ between ``self`` and ``other``."""
        theirs = {t.table: t for t in other.tables}
        mine = {t.table: t for t in self.tables}
        return tuple(sorted(n for n in mine.keys() | theirs.keys() if mine.get(n) != theirs.get(n)))


@dataclass(frozen=True)
class EntityRow:
    id: str
    name: str | None
    aliases: tuple[str, ...] = ()
    types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "aliases", tuple(sorted(set(self.aliases or ()))))
        object.__setattr__(self, "types", tuple(sorted(set(self.types or ()))))


@dataclass(frozen=True)
class MemoryRow:
    id: str
    kind: str | None
    status: str | None
    title: str | None
    confidence: float | None
    strength: float | None
    recorded_at: datetime | None
    valid_from: datetime | None
    valid_until: datetime | None
    pinned: bool


@dataclass(frozen=True)
class PageRow:
    id: str
    path: str | None
    title: str | None


@dataclass(frozen=True)
class SourceRow:
    id: str
    type: str | None
    chat: str | None
    timestamp: datetime | None


@dataclass(frozen=True)
class RelatesRow:
    """A fact between two entities; ``inferred`` ones come from an inverse or symmetric
    property, ``memory`` is an active memory asserting the fact (None: none does)."""

    source: str
    target: str
    predicate: str
    memory: str | None
    inferred: bool


@dataclass(frozen=True)
class AboutRow:
    memory: str
    entity: str


@dataclass(frozen=True)
class EvidenceRow:
    memory: str
    source: str


@dataclass(frozen=True)
class PageOfRow:
    page: str
    entity: str


@dataclass(frozen=True)
class SharesRow:
    """Two entities some active memories are both about; ``source`` < ``target``."""

    source: str
    target: str
    count: int


_R = TypeVar("_R")

Row = (
    EntityRow
    | MemoryRow
    | PageRow
    | SourceRow
    | RelatesRow
    | AboutRow
    | EvidenceRow
    | PageOfRow
    | SharesRow
)

#: Every table of the projection, nodes first, in the order they are written.
TABLES = (
    "Entity",
    "Memory",
    "Page",
    "Source",
    "RELATES",
    "ABOUT",
    "EVIDENCE",
    "PAGE_OF",
    "SHARES_MEMORY",
)


@dataclass(frozen=True)
class UserRows:
    """Everything of one user the projection holds (or a part of it, for a refresh)."""

    entities: tuple[EntityRow, ...] = ()
    memories: tuple[MemoryRow, ...] = ()
    pages: tuple[PageRow, ...] = ()
    sources: tuple[SourceRow, ...] = ()
    relates: tuple[RelatesRow, ...] = ()
    about: tuple[AboutRow, ...] = ()
    evidence: tuple[EvidenceRow, ...] = ()
    page_of: tuple[PageOfRow, ...] = ()
    shares: tuple[SharesRow, ...] = ()

    def __or__(self, other: UserRows) -> UserRows:
        """The rows of both, duplicates removed and sorted."""
        return UserRows(
            *(_canonical((*getattr(self, f.name), *getattr(other, f.name))) for f in fields(self))
        )

    def tables(self) -> dict[str, tuple[Row, ...]]:
        """The rows per table name (see :data:`TABLES`)."""
        return dict(zip(TABLES, (getattr(self, f.name) for f in fields(self)), strict=True))

    @classmethod
    def of(
        cls,
        *,
        entities: Iterable[EntityRow] = (),
        memories: Iterable[MemoryRow] = (),
        pages: Iterable[PageRow] = (),
        sources: Iterable[SourceRow] = (),
        relates: Iterable[RelatesRow] = (),
        about: Iterable[AboutRow] = (),
        evidence: Iterable[EvidenceRow] = (),
        page_of: Iterable[PageOfRow] = (),
        shares: Iterable[SharesRow] = (),
    ) -> UserRows:
        """Rows from any iterables, duplicates removed and sorted (a canonical value)."""
        return cls(
            _canonical(entities),
            _canonical(memories),
            _canonical(pages),
            _canonical(sources),
            _canonical(relates),
            _canonical(about),
            _canonical(evidence),
            _canonical(page_of),
            _canonical(shares),
        )


def differing(a: UserRows, b: UserRows) -> set[str]:
    """The nodes named by a row one of ``a`` and ``b`` holds and the other does not: a
    node row's own id, both ends (and the memory) of an edge row."""
    found: set[str] = set()
    for table in (f.name for f in fields(a)):
        mine, theirs = set(getattr(a, table)), set(getattr(b, table))
        for row in mine ^ theirs:
            found.update(v for f in fields(row) if _is_node(f.name, v := getattr(row, f.name)))
    return found


_NODE_FIELDS = frozenset({"id", "source", "target", "memory", "entity", "page"})


def _is_node(name: str, value: object) -> bool:
    return name in _NODE_FIELDS and isinstance(value, str)


def _canonical(rows: Iterable[_R]) -> tuple[_R, ...]:
    return tuple(sorted(set(rows), key=repr))


def _digest(row: Row) -> int:
    text = repr(row)  # the class, every field by name, values by repr: canonical
    return int.from_bytes(sha256(text.encode()).digest()[:16], "big")


def fingerprint_of(rows: UserRows) -> Fingerprint:
    """Counts per table and a checksum that does not depend on row order.

    Digests are summed (not xored), so a duplicated row changes the checksum as well as
    the count.
    """
    total = FingerprintSum()
    total.add(rows)
    return total.fingerprint()


class FingerprintSum:
    """:func:`fingerprint_of` rows given a part at a time (a whole user need not be held)."""

    def __init__(self) -> None:
        self._counts = dict.fromkeys(TABLES, 0)
        self._sums = dict.fromkeys(TABLES, 0)

    def add(self, rows: UserRows) -> None:
        for name, found in rows.tables().items():
            self.add_table(name, found)

    def add_table(self, name: str, rows: Collection[Row]) -> None:
        self._counts[name] += len(rows)
        self._sums[name] += sum(_digest(row) for row in rows)

    def fingerprint(self) -> Fingerprint:
        return Fingerprint(
            tuple(
                TableFingerprint(name, self._counts[name], f"{self._sums[name] % (1 << 128):032x}")
                for name in TABLES
            )
        )
