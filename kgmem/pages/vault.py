"""The vault: each user's pages as Markdown files in a folder Obsidian (or any editor) opens.

A user's vault is a directory (``$KGMEM_HOME/vault/<user>/`` unless settings name one of
theirs, an existing Obsidian vault say); kgmem manages only its ``Memory/`` folder and never
writes anywhere else in it. Each file is the stored Markdown of a page's current revision,
byte for byte (:mod:`kgmem.pages.revisions` stores it before any file is written), so the
vault is a projection: it can be deleted and is written again from the store.

:class:`Vault` keeps the files level two ways:

- as a target of the change feed: a commit that touched a page writes its file (or removes
  it, when the page is gone), after the commit;
- :meth:`Vault.reconcile` (at start, and ``kgmem vault reconcile``), with no model: a
  missing file is written, a file moved or renamed inside ``Memory/`` is moved back (found by
  the page id in its front matter), a stale copy (an older revision, unedited) is replaced
  from the store, a stale duplicate of a page is removed, and a file of a page that no
  longer exists is removed. A file edited against the current revision is left as it is for
  the sync to read; the report says what was done and why.

Every path is resolved and must stay inside ``Memory/``: a path that escapes it (through
``..``, an absolute name or a symbolic link) is refused and reported, never followed.
Files are written to a temporary name and renamed, so a reader never sees half a page.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path

from rdflib import Literal, URIRef

from kgmem.index.base import Links
from kgmem.pages.revisions import MEMORY_DIR, page_id
from kgmem.store import QueryRegistry, Row, TripleStore, UserGraphs
from kgmem.vocab import KGM

__all__ = ["FileState", "PageFile", "Vault", "VaultReport", "front_matter_ids"]

log = logging.getLogger("kgmem.pages.vault")

#: A file bigger than this is not a page kgmem wrote (and is not read whole).
MAX_PAGE_BYTES = 4 * 1024 * 1024
#: The files of a vault read as notes of the user's own (outside ``Memory/``).
NOTE_SUFFIXES = (".md", ".txt")
_ID = re.compile(r'^id:\s*"?([0-9a-f]{32})"?\s*$', re.M)
_REVISION = re.compile(r"^revision:\s*(\d{1,9})\s*$", re.M)


@dataclass(frozen=True)
class PageFile:
    """A page as stored, to be in the vault: its node, path under ``Memory/``, revision and
    exact text."""

    page: URIRef
    path: str
    revision: int
    markdown: str

    @property
    def id(self) -> str:
        return page_id(self.page)


@dataclass(frozen=True)
class FileState:
    """What a file under ``Memory/`` says about itself: the page id and revision in its front
    matter (None when it has none that can be read), and its content hash."""

    path: Path
    id: str | None
    revision: int | None
    digest: str


@dataclass
class VaultReport:
    """What :meth:`Vault.reconcile` found and did (paths relative to the vault root)."""

    uid: str
    root: Path
    dry_run: bool = False  # what a reconciliation would do; nothing was done
    pages: int = 0
    intact: int = 0
    written: list[str] = field(default_factory=list)  # missing files written
    replaced: list[str] = field(default_factory=list)  # stale copies replaced
    moved: list[tuple[str, str]] = field(default_factory=list)  # (from, to)
    removed: list[str] = field(default_factory=list)  # duplicates, pages that are gone
    edited: list[str] = field(default_factory=list)  # edited by someone: left for the sync
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)

    @property
    def changed(self) -> int:
        return len(self.written) + len(self.replaced) + len(self.moved) + len(self.removed)

    def summary(self) -> str:
        parts = [
            f"{self.pages} pages",
            f"{self.intact} intact",
            f"{len(self.written)} written",
            f"{len(self.replaced)} replaced",
            f"{len(self.moved)} moved back",
            f"{len(self.removed)} removed",
            f"{len(self.edited)} edited (left for sync)",
            f"{len(self.refused)} refused",
        ]
        return ", ".join(parts)


def front_matter_ids(text: str) -> tuple[str | None, int | None]:
    """The page id and revision a file's front matter gives (None for each it does not)."""
    if not text.startswith("---\n"):
        return None, None
    front = text[4:].split("\n---\n", 1)[0] if "\n---\n" in text[3:] else ""
    found_id, found_rev = _ID.search(front), _REVISION.search(front)
    return (
        found_id.group(1) if found_id else None,
        int(found_rev.group(1)) if found_rev else None,
    )


def _digest(data: bytes) -> str:
    return sha256(data).hexdigest()


def _page_files(rows: Iterable[Row]) -> Iterator[PageFile]:
    for row in rows:
        number, markdown = row.get("number"), row.get("markdown")
        if isinstance(number, Literal) and isinstance(markdown, Literal):
            yield PageFile(URIRef(row["page"]), str(row["path"]), int(number), str(markdown))


class Vault:
    """Every user's vault: the files of their pages, kept level with the store."""

    def __init__(
        self, store: TripleStore, queries: QueryRegistry, root: Callable[[str], Path]
    ) -> None:
        """``root(uid)``: the user's vault directory (created on first write)."""
        self._store, self._queries, self._root = store, queries, root
        self._wrote: dict[Path, str] = {}  # file -> digest of what kgmem last wrote there

    def root(self, uid: str) -> Path:
        UserGraphs(uid)  # checks the id
        return self._root(uid)

    def memory(self, uid: str) -> Path:
        return self.root(uid) / MEMORY_DIR

    def note_path(self, uid: str, path: Path) -> str:
        """The vault path (POSIX, relative to the vault) of the note of the user's own at
        ``path``; ValueError when it is not one: outside the vault, in ``Memory/``, in a
        hidden folder (``.obsidian``, ``.trash``), reached through a symbolic link, or not
        a ``.md``/``.txt`` file."""
        root = self.root(uid)
        try:
            parts = path.relative_to(root).parts
        except ValueError:
            raise ValueError(f"{path} is not in the vault") from None
        if not parts or parts[0] == MEMORY_DIR:
            raise ValueError("in the Memory folder: a page, not a note")
        if any(p.startswith(".") or p in ("", "..") for p in parts):
            raise ValueError("in a hidden folder, or a hidden file")
        if path.suffix.lower() not in NOTE_SUFFIXES:
            raise ValueError("not a .md or .txt file")
        at = root
        for part in parts:
            at = at / part
            if at.is_symlink():
                raise ValueError(f"{at} is a symbolic link: kgmem does not follow it")
        return "/".join(parts)

    def note_files(self, uid: str) -> list[Path]:
        """Every note of the user's own in their vault: ``.md`` and ``.txt`` files outside
        ``Memory/`` and hidden folders, symbolic links not followed."""
        root = self.root(uid)
        if not root.is_dir() or root.is_symlink():
            return []
        found: list[Path] = []
        for folder, dirs, files in os.walk(root, followlinks=False):
            base = Path(folder)
            dirs[:] = sorted(
                d for d in dirs if not d.startswith(".") and not (base == root and d == MEMORY_DIR)
            )
            found += [
                base / f
                for f in sorted(files)
                if not f.startswith(".") and Path(f).suffix.lower() in NOTE_SUFFIXES
            ]
        return found

    def file_path(self, uid: str, relative: str) -> str:
        """The absolute path of the file of the page stored at ``relative``."""
        return str((self.memory(uid) / relative).absolute())

    def locate(self, uid: str, kind: str, relative: str) -> str:
        """The absolute path of a search hit's file: a page (``relative`` to ``Memory/``)
        or a note of the user's own (``relative`` to the vault)."""
        base = self.memory(uid) if kind == "page" else self.root(uid)
        return str((base / relative).absolute())

    def wrote(self, path: Path) -> str | None:
        """The digest of what kgmem last wrote at ``path`` (its own writes are no edits)."""
        return self._wrote.get(path)

    def clear(self, uid: str) -> int:
        """Remove ``uid``'s ``Memory/`` folder (their memory was reset; the rest of the vault
        is theirs and stays); how many files went. A symbolic link there is not followed."""
        memory = self.memory(uid)
        if memory.is_symlink() or not memory.is_dir():
            return 0
        files = [Path(d) / f for d, _, names in os.walk(memory) for f in names]
        shutil.rmtree(memory)
        for path in [p for p in self._wrote if p.is_relative_to(memory)]:
            del self._wrote[path]
        return len(files)

    # -- the store's side --------------------------------------------------------------

    def pages(self, uid: str) -> list[PageFile]:
        """Every page of ``uid`` with a current revision, as stored."""
        rows = self._store.select(self._queries["pages/current"], {"graph": UserGraphs(uid).kg})
        return list(_page_files(rows))

    def page_by_id(self, uid: str, pid: str) -> PageFile | None:
        """``uid``'s page whose id is ``pid`` (as a file's front matter gives it), if any."""
        if not re.fullmatch(r"[0-9a-f]{32}", pid):
            return None
        return self._page(uid, URIRef(UserGraphs(uid).node_base + "page/" + pid))

    def page_at(self, uid: str, relative: str) -> PageFile | None:
        """The page whose file belongs at ``relative`` (under ``Memory/``), if any."""
        graph = UserGraphs(uid).kg
        rows = self._store.select(
            self._queries["pages/page_at_path"], {"graph": graph, "path": Literal(relative)}
        )
        return next((p for r in rows if (p := self._page(uid, URIRef(r["page"])))), None)

    def remove(self, uid: str, relative: str) -> None:
        """Remove the file at ``relative`` under ``Memory/`` (resolved as every other)."""
        self._remove(self.resolve(uid, relative))

    def _page(self, uid: str, page: URIRef) -> PageFile | None:
        rows = self._store.select(
            self._queries["pages/current"], {"graph": UserGraphs(uid).kg, "page": page}
        )
        return next(_page_files(rows), None)

    def _unedited(self, uid: str, page: PageFile, state: FileState) -> bool:
        """Whether ``state`` holds, unedited, the revision its front matter names."""
        if state.revision is None:
            return False
        revision = URIRef(f"{page.page}#r{state.revision}")
        hashes = self._store.quads(UserGraphs(uid).kg, revision, KGM.contentHash)
        return any(str(q.object) == "sha256:" + state.digest for q in hashes)

    # -- files ---------------------------------------------------------------------------

    def resolve(self, uid: str, relative: str) -> Path:
        """The file at ``relative`` under ``Memory/``; ValueError when it would be outside
        (``..``, an absolute path, or a symbolic link anywhere on the way)."""
        memory = self.memory(uid)
        if not relative or Path(relative).is_absolute() or "\\" in relative:
            raise ValueError(f"{relative!r} is not a relative path")
        target = memory / relative
        parts = Path(relative).parts
        if any(p in ("..", ".", "") for p in parts):
            raise ValueError(f"{relative!r} leaves the Memory folder")
        at = self.root(uid)
        for part in (MEMORY_DIR, *parts):
            at = at / part
            if at.is_symlink():
                raise ValueError(f"{at} is a symbolic link: kgmem does not follow it")
        real_memory = memory.resolve()
        if not target.resolve().is_relative_to(real_memory):
            raise ValueError(f"{relative!r} resolves outside the Memory folder")
        return target

    def _write(self, path: Path, text: str) -> None:
        data = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".kgmem-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            Path(temp).replace(path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        self._wrote[path] = _digest(data)

    def _remove(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        self._wrote.pop(path, None)

    def write(self, uid: str, page: PageFile, *, read: bool = False) -> bool:
        """Write ``page``'s file unless it already holds that text, or holds an edit nobody
        has read yet (the sync reads it, and writes the page after: ``read``); True if
        written."""
        path = self.resolve(uid, page.path)
        data = page.markdown.encode("utf-8")
        try:
            held = path.read_bytes() if path.is_file() and not path.is_symlink() else None
        except OSError:
            held = None
        if held == data:
            self._wrote[path] = _digest(data)
            return False
        if held is not None and not read and not self._replaceable(uid, path, held):
            log.info("vault of %s: %s holds an edit not read yet: left for the sync", uid, path)
            return False
        self._write(path, page.markdown)
        return True

    def _replaceable(self, uid: str, path: Path, held: bytes) -> bool:
        """Whether the file at ``path`` holds nothing a person wrote: what kgmem last wrote
        there, or (written before this process) an unedited copy of a stored revision."""
        digest = _digest(held)
        known = self._wrote.get(path)
        if known is not None:
            return known == digest
        try:
            found_id, revision = front_matter_ids(held.decode("utf-8"))
        except UnicodeDecodeError:
            return False
        if found_id is None or revision is None:
            return False
        state = FileState(path, found_id, revision, digest)
        node = URIRef(UserGraphs(uid).node_base + "page/" + found_id)
        return self._unedited(uid, PageFile(node, "", revision, ""), state)

    def read(self, path: Path) -> tuple[str, str]:
        """A page file's text and content hash; FileNotFoundError when it is not there,
        ValueError (saying why) when it is not a file kgmem reads: a symbolic link, larger
        than a page can be, or not UTF-8 text."""
        if path.is_symlink():
            raise ValueError("a symbolic link: not followed")
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_PAGE_BYTES + 1)
        except FileNotFoundError:
            raise
        except IsADirectoryError:
            raise ValueError("a folder, not a page") from None
        except OSError as exc:
            raise ValueError(f"cannot be read: {exc.strerror or exc}") from None
        if len(data) > MAX_PAGE_BYTES:
            raise ValueError(f"larger than {MAX_PAGE_BYTES} bytes")
        try:
            return data.decode("utf-8"), _digest(data)
        except UnicodeDecodeError:
            raise ValueError("not UTF-8 text") from None

    def keep(self, uid: str, relative: str, text: str) -> Path:
        """Write ``text`` at ``relative`` under ``Memory/`` (a conflict's copy): the path is
        resolved as every other."""
        path = self.resolve(uid, relative)
        self._write(path, text)
        return path

    def scan(self, uid: str) -> tuple[list[FileState], list[tuple[str, str]]]:
        """Every Markdown file under ``Memory/`` with what its front matter says, and the
        files refused (with why): symbolic links, files too big to be a page, unreadable."""
        memory, root = self.memory(uid), self.root(uid)
        states: list[FileState] = []
        refused: list[tuple[str, str]] = []
        if not memory.is_dir() or memory.is_symlink():
            if memory.is_symlink():
                refused.append((MEMORY_DIR, "the Memory folder is a symbolic link"))
            return states, refused
        for folder, dirs, files in os.walk(memory, followlinks=False):
            base = Path(folder)
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if not name.endswith(".md") or name.startswith("."):
                    continue
                path = base / name
                try:
                    text, digest = self.read(path)
                except FileNotFoundError:  # removed meanwhile
                    continue
                except ValueError as exc:
                    refused.append((str(path.relative_to(root)), str(exc)))
                    continue
                found_id, revision = front_matter_ids(text)
                states.append(FileState(path, found_id, revision, digest))
        return states, refused

    # -- reconciliation ----------------------------------------------------------------

    def reconcile(self, uid: str, *, dry_run: bool = False) -> VaultReport:
        """Bring ``uid``'s ``Memory/`` level with the stored pages (see the module);
        ``dry_run``: only say what that would do."""
        root = self.root(uid)
        report = VaultReport(uid, root, dry_run=dry_run)
        pages = {p.id: p for p in self.pages(uid)}
        report.pages = len(pages)
        states, report.refused = self.scan(uid)
        by_id: dict[str, list[FileState]] = {}
        for state in states:
            if state.id is not None:
                by_id.setdefault(state.id, []).append(state)
        for pid, page in sorted(pages.items()):
            try:
                self._reconcile_page(uid, page, by_id.pop(pid, []), report)
            except (OSError, ValueError) as exc:
                report.refused.append((page.path, str(exc)))
                log.warning("vault of %s: page %s: %s", uid, page.path, exc)
        for pid, leftovers in sorted(by_id.items()):  # pages that no longer exist
            for state in leftovers:
                report.removed.append(str(state.path.relative_to(root)))
                if not dry_run:
                    self._remove(state.path)
                log.debug("vault of %s: %s: page %s is gone", uid, state.path, pid)
        if (report.changed or report.refused) and not dry_run:
            log.info("vault of %s reconciled: %s", uid, report.summary())
        return report

    def _reconcile_page(
        self, uid: str, page: PageFile, files: list[FileState], report: VaultReport
    ) -> None:
        root, target = self.root(uid), self.resolve(uid, page.path)
        wanted = _digest(page.markdown.encode("utf-8"))
        at_target = next((f for f in files if f.path == target), None)
        others = [f for f in files if f.path != target]
        shown = str(target.relative_to(root))
        if at_target is None and target.exists():
            # another page's (or the user's own) file holds this page's place: keep it aside
            report.refused.append((shown, "the page's place holds a file of another page"))
            return
        keep, moved = at_target, False
        if keep is None:  # moved or renamed: the newest edited copy comes back
            edited = [f for f in others if f.revision == page.revision and f.digest != wanted]
            exact = [f for f in others if f.digest == wanted]
            keep = next(iter(edited or exact), None)
            if keep is not None:
                if not report.dry_run:
                    keep.path.replace(target)
                report.moved.append((str(keep.path.relative_to(root)), shown))
                moved = True
                others.remove(keep)
                keep = FileState(target, keep.id, keep.revision, keep.digest)
        for other in others:  # stale duplicates of this page
            report.removed.append(str(other.path.relative_to(root)))
            if not report.dry_run:
                self._remove(other.path)
        if keep is None:
            if not report.dry_run:
                self._write(target, page.markdown)
            report.written.append(shown)
        elif keep.digest == wanted:
            self._wrote[target] = wanted
            if not moved:
                report.intact += 1
        elif self._unedited(uid, page, keep):  # a stale copy of an older revision
            if not report.dry_run:
                self._write(target, page.markdown)
            report.replaced.append(shown)
        else:  # edited (against this revision or an older one): the sync reads it
            report.edited.append(shown)

    # -- the change feed -----------------------------------------------------------------

    def refresh(self, uid: str, nodes: Iterable[URIRef], links: Links | None = None) -> int:
        """Write the files of the pages among ``nodes`` (remove those of pages that are
        gone); how many files changed."""
        prefix = UserGraphs(uid).node_base + "page/"
        pages = {URIRef(str(n).split("#", 1)[0]) for n in nodes if str(n).startswith(prefix)}
        changed = 0
        for node in sorted(pages):
            page = self._page(uid, node)
            if page is not None:
                changed += self.write(uid, page)
            else:
                changed += self._remove_page(uid, page_id(node))
        return changed

    def _remove_page(self, uid: str, pid: str) -> int:
        """Remove every file of the page ``pid`` (it is gone from the store)."""
        states, _ = self.scan(uid)
        gone = [s.path for s in states if s.id == pid]
        for path in gone:
            self._remove(path)
        return len(gone)
