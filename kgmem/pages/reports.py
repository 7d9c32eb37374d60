"""What reading one file of a vault did: :class:`SyncReport` (the sync of pages and the
reading of notes both answer one)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from rdflib import URIRef

from kgmem.memory import MemoryStatus

__all__ = ["SyncReport", "SyncStatus", "shown"]


class SyncStatus(StrEnum):
    APPLIED = "applied"  # the edits were carried out
    CONFLICT = "conflict"  # made against an older revision: in the review inbox
    UNCHANGED = "unchanged"  # the file says what its revision says (or nothing a person can)
    ECHO = "echo"  # kgmem's own write
    SEEN = "seen"  # this exact edit was read before
    GONE = "gone"  # the file is no longer there
    NOTED = "noted"  # a note of the user's own (outside Memory/): its new revision stored
    REFUSED = "refused"  # not read: see the reason


@dataclass
class SyncReport:
    """What reading one file did (``path`` relative to the vault)."""

    uid: str
    path: str
    status: SyncStatus
    reason: str = ""
    revision: int | None = None  # the revision the edit was made against
    current: int | None = None  # the page's revision when it was read
    note: URIRef | None = None  # the file as stored: the edits' evidence
    created: list[URIRef] = field(default_factory=list)  # active memories
    pending: list[URIRef] = field(default_factory=list)  # new memories in the review inbox
    retired: list[tuple[URIRef, MemoryStatus]] = field(default_factory=list)
    held: list[URIRef] = field(default_factory=list)  # back in the review inbox
    refused: list[tuple[str, str]] = field(default_factory=list)  # (line, why)
    moved_back: bool = False  # read at another path than the page's: that copy removed

    @property
    def operations(self) -> int:
        return len(self.created) + len(self.pending) + len(self.retired) + len(self.held)


def shown(path: Path, root: Path) -> str:
    """``path`` as the report shows it: relative to the vault ``root`` when it is in it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)
