"""Notes of the user's own: every ``.md`` and ``.txt`` file of a vault outside ``Memory/``
and hidden folders, read into the store as numbered note revisions.

:meth:`NoteReader.read` stores a file's new version (nothing when it is the stored one): the
note is then found by search with its path, citable, and evidence for memories. kgmem never
writes to these files. A note whose file is removed gets ``kgm:removedAt`` on its latest
revision: search no longer finds it, its revisions stay as the evidence they are, and a
restored file comes back as a new revision. :meth:`NoteReader.read_all` does it for a whole
vault (at start: what changed while nothing watched).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.clock import Clock
from kgmem.index import revision_key
from kgmem.memory import IngestStatus, NoteIn, SourceStore
from kgmem.pages.reports import SyncReport, SyncStatus, shown
from kgmem.pages.revisions import MEMORY_DIR
from kgmem.pages.vault import Vault
from kgmem.store import Changeset, Quad, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = ["NoteReader", "StoredNote", "latest_note"]

log = logging.getLogger("kgmem.pages.notes")


class NoteReader:
    """Reads the notes of each user's vault into the store (see the module)."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        vault: Vault,
        sources: SourceStore,
        clock: Clock,
    ) -> None:
        self._store, self._queries, self._vault = store, queries, vault
        self._sources, self._clock = sources, clock

    def read(self, uid: str, path: Path) -> SyncReport:
        """Store a new revision of the user's own note at ``path`` (outside ``Memory/``):
        searchable with its path, citable, evidence for memories. kgmem never writes it. A
        note whose file is gone is no longer found (its revisions stay, as evidence)."""
        root = self._vault.root(uid)
        where = shown(path, root)
        try:
            relative = self._vault.note_path(uid, path)
        except ValueError as exc:
            return _refuse(uid, where, str(exc))
        latest = latest_note(self._store, self._queries, uid, relative)
        try:
            text, _ = self._vault.read(path)
            if latest is not None and latest.text == text and not latest.removed:
                return SyncReport(uid, where, SyncStatus.UNCHANGED, note=latest.note)
            number = 0 if latest is None else latest.number
            note = NoteIn(path=relative, text=text, revision=number + 1)
        except FileNotFoundError:
            return self._removed(uid, where, latest)
        except ValidationError:
            return _refuse(uid, where, "empty, or too long to be a note")
        except ValueError as exc:
            return _refuse(uid, where, str(exc))
        result = self._sources.ingest_note(uid, note)
        status = SyncStatus.NOTED if result.status is IngestStatus.CREATED else SyncStatus.UNCHANGED
        return SyncReport(uid, where, status, note=result.iri)

    def _removed(self, uid: str, where: str, latest: StoredNote | None) -> SyncReport:
        """The note's file is gone: its latest revision says so (once)."""
        if latest is not None and not latest.removed:
            when = Literal(self._clock.now(), datatype=XSD.dateTime)
            quad = Quad(latest.note, KGM.removedAt, when, UserGraphs(uid).sources)
            self._store.commit(Changeset.of([quad]))
        return SyncReport(uid, where, SyncStatus.GONE, note=None if latest is None else latest.note)

    def read_all(self, uid: str) -> list[SyncReport]:
        """Every note of the user's own in their vault (outside ``Memory/``), as at start:
        the ones changed while nothing watched get a new revision, and the ones whose file
        was removed meanwhile are no longer found."""
        reports = [self.read(uid, path) for path in self._vault.note_files(uid)]
        seen = {r.path for r in reports}
        rows = self._store.select(
            self._queries["index/lexical_notes"], {"graph": UserGraphs(uid).sources}
        )
        root = self._vault.root(uid)
        for relative in sorted({str(r["path"]) for r in rows} - seen):
            if relative.split("/", 1)[0] != MEMORY_DIR and not (root / relative).exists():
                reports.append(
                    self._removed(
                        uid, relative, latest_note(self._store, self._queries, uid, relative)
                    )
                )
        return reports


def latest_note(
    store: TripleStore, queries: QueryRegistry, uid: str, relative: str
) -> StoredNote | None:
    """The newest stored revision of the note at ``relative`` (as search reads it), with
    the highest revision number any of its revisions has; None: there is none."""
    rows = store.select(
        queries["index/lexical_notes"],
        {"graph": UserGraphs(uid).sources, "path": Literal(relative)},
    )
    if not rows:
        return None
    newest = max(rows, key=revision_key)
    numbers = [n for r in rows if isinstance(n := _number(r.get("revision")), int)]
    return StoredNote(
        URIRef(newest["note"]),
        str(newest["text"]),
        max([*numbers, len(rows)]),
        newest.get("removedAt") is not None,
        _number(newest.get("revision")),
    )


def _refuse(uid: str, where: str, reason: str) -> SyncReport:
    log.warning("vault of %s: %s not read: %s", uid, where, reason)
    return SyncReport(uid, where, SyncStatus.REFUSED, reason)


@dataclass(frozen=True)
class StoredNote:
    """A note's newest stored revision."""

    note: URIRef
    text: str
    number: int  # the highest revision number its revisions have (or how many there are)
    removed: bool  # its file was removed from the vault
    revision: int | None = None  # the newest revision's own number, if it has one


def _number(value: object) -> int | None:
    found = value.toPython() if isinstance(value, Literal) else None
    return found if isinstance(found, int) and not isinstance(found, bool) else None
