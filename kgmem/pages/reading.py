"""Reading a page (or a note of the user's own) back by what an agent or a person has: the
path a search returned, a vault path, or the entity (or procedure) a page is of.

Everything is read from the store, never from the file system: a path only names what to
look up, so no path can reach a file outside the caller's memory (an absolute path must lie
in the caller's vault, or it names nothing).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from rdflib import Literal, URIRef

from kgmem.pages.notes import latest_note
from kgmem.pages.revisions import MEMORY_DIR, page_id, page_iri
from kgmem.pages.vault import Vault
from kgmem.store import QueryRegistry, Row, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF

__all__ = ["PageReader", "PageView"]


@dataclass(frozen=True)
class PageView:
    """A page or note as stored. ``path`` is vault-relative (``Memory/entities/acme.md``,
    ``Journal/2026-11-02.md``); ``file`` its absolute path when the vault is on."""

    id: str  # the page's IRI, or the note revision's
    kind: str  # "page" | "playbook" | "note"
    title: str
    path: str
    file: str | None
    revision: int | None
    of: str | None  # the entity (or, for a playbook, the procedure) a page is of
    markdown: str

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "path": self.path,
            "file": self.file,
            "revision": self.revision,
            "of": self.of,
            "markdown": self.markdown,
        }


class PageReader:
    """Finds a user's page or note by path or by what it is of."""

    def __init__(self, store: TripleStore, queries: QueryRegistry, vault: Vault | None) -> None:
        self._store, self._queries, self._vault = store, queries, vault

    def by_path(self, uid: str, given: str) -> PageView | None:
        """The page or note at ``given``: an absolute path in the caller's vault, a vault
        path (``Memory/entities/acme.md``, ``Journal/x.md``) or a page path under
        ``Memory/`` (``entities/acme.md``)."""
        relative = self._relative(uid, given)
        if relative is None:
            return None
        if relative.startswith(MEMORY_DIR + "/"):
            return self._page_at(uid, relative.removeprefix(MEMORY_DIR + "/"))
        return self._page_at(uid, relative) or self._note_at(uid, relative)

    def by_subject(self, uid: str, subject: URIRef) -> PageView | None:
        """The page of an entity (or the playbook of a procedure)."""
        graph = UserGraphs(uid).kg
        for quad in self._store.quads(graph, page_iri(uid, subject), KGM.path):
            return self._page_at(uid, str(quad.object))
        return None

    def pages(self, uid: str, limit: int) -> list[PageView]:
        """The user's pages and playbooks, by path, at most ``limit`` (their text is empty:
        read one for it)."""
        rows = self._store.select(self._queries["pages/listing"], {"graph": UserGraphs(uid).kg})
        return [self._view(uid, row, with_text=False) for row in rows[:limit]]

    # -- lookups -------------------------------------------------------------------------

    def _relative(self, uid: str, given: str) -> str | None:
        text = given.strip()
        if not text or "\\" in text or "\x00" in text:
            return None
        if text.startswith("/"):  # an absolute path: only inside the caller's vault
            if self._vault is None:
                return None
            try:
                parts = Path(text).relative_to(self._vault.root(uid).absolute()).parts
            except ValueError:
                return None
        else:
            parts = PurePosixPath(text).parts
        if not parts or any(p in ("..", ".", "") for p in parts):
            return None
        return "/".join(parts)

    def _page_at(self, uid: str, path: str) -> PageView | None:
        rows = self._store.select(
            self._queries["pages/listing"], {"graph": UserGraphs(uid).kg, "path": Literal(path)}
        )
        return self._view(uid, rows[0], with_text=True) if rows else None

    def _view(self, uid: str, row: Row, *, with_text: bool) -> PageView:
        page, path = URIRef(row["page"]), str(row["path"])
        graph = UserGraphs(uid).kg
        playbook = any(True for _ in self._store.quads(graph, page, RDF.type, KGM.Playbook))
        number = row.get("number")
        markdown = ""
        if with_text and (current := row.get("current")) is not None:
            for quad in self._store.quads(graph, URIRef(current), KGM.markdown):
                markdown = str(quad.object)
        return PageView(
            id=str(page),
            kind="playbook" if playbook else "page",
            title=str(row.get("title") or page_id(page)),
            path=f"{MEMORY_DIR}/{path}",
            file=None if self._vault is None else self._vault.file_path(uid, path),
            revision=int(number.toPython()) if isinstance(number, Literal) else None,
            of=str(row["of"]) if row.get("of") is not None else None,
            markdown=markdown,
        )

    def _note_at(self, uid: str, path: str) -> PageView | None:
        latest = latest_note(self._store, self._queries, uid, path)
        if latest is None or latest.removed:  # none, or its file was removed: no note
            return None
        return PageView(
            id=str(latest.note),
            kind="note",
            title=PurePosixPath(path).stem,
            path=path,
            file=None if self._vault is None else self._vault.locate(uid, "note", path),
            revision=latest.revision,
            of=None,
            markdown=latest.text,
        )
