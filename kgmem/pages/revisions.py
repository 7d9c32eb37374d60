"""Where pages live: the page node of an entity, its revisions and its file path.

Pages are in the user's kg graph: ``<page> a kgm:Page ; kgm:pageOf <entity> ; kgm:path
"entities/<slug>.md" ; kgm:currentRevision <page#rN>``, each revision with its Markdown,
content hash and time; the KEPT_REVISIONS newest revisions are kept. :func:`stored_page`
reads an entity's page (and the input digest in its front matter); :func:`revision_quads`
adds a new revision, creating the page on its first one at a path no other page has.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256
from typing import ClassVar, Protocol

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.store import NodeKind, Quad, QueryRegistry, TripleStore, UserGraphs, stable_node
from kgmem.vocab import KGM, RDF

__all__ = [
    "KEPT_REVISIONS",
    "MEMORY_DIR",
    "PageDraft",
    "PageSubject",
    "StoredPage",
    "page_id",
    "page_iri",
    "page_path",
    "page_writer",
    "redaction_quads",
    "removal_quads",
    "revision_quads",
    "stamped",
    "stored_page",
    "vault_link",
]

#: The vault folder kgmem manages; everything else in a vault is the user's.
MEMORY_DIR = "Memory"
#: Revisions kept per page (the current one and those before it): an edit made against an
#: older one than these can no longer be compared, and is refused with that reason.
KEPT_REVISIONS = 64

_DIGEST = re.compile(r'^digest: "(sha256:[0-9a-f]{64})"$', re.M)


def page_writer(markdown: str) -> str:
    """Who wrote a page's body, as its front matter says: ``kgmem`` (the renderer) or
    ``model``."""
    front = markdown.split("\n---\n", 1)[0] + "\n"
    return "model" if "\nwriter: model\n" in front else "kgmem"


def page_iri(uid: str, entity: URIRef) -> URIRef:
    """The stable page node of ``entity``."""
    return stable_node(uid, NodeKind.PAGE, str(entity))


def page_id(page: URIRef) -> str:
    """The id a page's file carries in its front matter: its node's local id."""
    return str(page).rsplit("/", 1)[-1]


def vault_link(path: str) -> str:
    """The wikilink target of the page stored at ``path``: ``Memory/entities/bob``."""
    return f"{MEMORY_DIR}/{path.removesuffix('.md')}"


def stamped(markdown: str, page: str, revision: int) -> str:
    """``markdown`` with ``id`` and ``revision`` first in its front matter (replacing any)."""
    if not markdown.startswith("---\n"):
        return markdown
    front, sep, rest = markdown[4:].partition("\n---\n")
    kept = [line for line in front.split("\n") if not line.startswith(("id: ", "revision: "))]
    return "\n".join(["---", f'id: "{page}"', f"revision: {revision}", *kept]) + sep + rest


@dataclass(frozen=True)
class StoredPage:
    """An entity's page as stored: its node, path, title and current Markdown."""

    page: URIRef
    path: str
    title: str | None
    markdown: str | None
    latest: int  # the highest revision number stored

    @property
    def writer(self) -> str:
        return page_writer(self.markdown or "")

    @property
    def digest(self) -> str | None:
        front = (self.markdown or "").split("\n---\n", 1)[0]
        found = _DIGEST.search(front)
        return found.group(1) if found else None


def stored_page(
    store: TripleStore, queries: QueryRegistry, graph: URIRef, entity: URIRef
) -> StoredPage | None:
    rows = store.select(queries["pages/entity_page"], {"graph": graph, "entity": entity})
    if not rows:
        return None
    row, page = rows[0], URIRef(rows[0]["page"])
    current = row.get("number")
    latest = current.toPython() if isinstance(current, Literal) else None
    if not isinstance(latest, int):  # no current revision: the highest stored one
        revisions = store.select(queries["pages/revisions"], {"graph": graph, "page": page})
        numbers = [n.toPython() for r in revisions if isinstance(n := r["number"], Literal)]
        latest = max((n for n in numbers if isinstance(n, int)), default=0)
    title, markdown = row.get("title"), row.get("markdown")
    return StoredPage(
        page,
        str(row["path"]),
        None if title is None else str(title),
        None if markdown is None else str(markdown),
        latest,
    )


def _slug(name: str) -> str:
    """A file name from an entity name: ``"Café Müller & Co."`` → ``café-müller-co``."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"[\W_]+", "-", text).strip("-")[:80].strip("-") or "entity"


def page_path(
    store: TripleStore,
    queries: QueryRegistry,
    uid: str,
    entity: URIRef,
    name: str,
    reserved: dict[str, URIRef],
    folder: str = "entities",
) -> str:
    """Where ``entity``'s page is, or will be: its stored path, else ``<folder>/<slug>.md``
    (``<slug>-2`` and so on when another page has it or ``reserved`` gives it to another
    entity; the path chosen is reserved for ``entity``)."""
    graph, page = UserGraphs(uid).kg, page_iri(uid, entity)
    for quad in store.quads(graph, page, KGM.path):
        return str(quad.object)
    slug, n = _slug(name), 1
    while True:
        path = f"{folder}/{slug}.md" if n == 1 else f"{folder}/{slug}-{n}.md"
        rows = store.select(queries["pages/page_at_path"], {"graph": graph, "path": Literal(path)})
        if reserved.get(path, entity) == entity and all(URIRef(r["page"]) == page for r in rows):
            reserved[path] = entity
            return path
        n += 1


def removal_quads(store: TripleStore, uid: str, page: URIRef) -> list[Quad]:
    """Every quad of ``page`` and of its revisions (an entity that is gone has no page)."""
    graph = UserGraphs(uid).kg
    found = list(store.quads(graph, page))
    for quad in store.quads(graph, None, KGM.revisionOf, page):
        found += store.quads(graph, quad.subject)
    return found


class PageSubject(Protocol):
    """What a page is written from: an entity's :class:`PageInput`, a procedure's
    :class:`~kgmem.pages.playbooks.PlaybookInput`."""

    @property
    def subject(self) -> URIRef:
        """What the page is of (``kgm:pageOf``)."""
        ...

    @property
    def name(self) -> str: ...

    @property
    def digest(self) -> str: ...

    folder: ClassVar[str]  # under Memory/: "entities", "playbooks"
    classes: ClassVar[tuple[URIRef, ...]]  # the page node's types


@dataclass(frozen=True)
class PageDraft:
    """A page to store: its input and the Markdown written for it."""

    page: PageSubject
    markdown: str


def revision_quads(
    store: TripleStore,
    queries: QueryRegistry,
    uid: str,
    stored: StoredPage | None,
    draft: PageDraft,
    now: datetime,
    reserved: dict[str, URIRef],
    in_pass: URIRef | None = None,
) -> tuple[URIRef, list[Quad], list[Quad]]:
    """The page node (new or existing) and the quads that give it ``draft`` as a new revision
    (``in_pass``: the consolidation pass that wrote it, if one did). The stored Markdown
    carries the page's id and revision number in its front matter: the vault file is that
    text, byte for byte, and an edit to it says which revision it was made against."""
    graph, entity, name = UserGraphs(uid).kg, draft.page.subject, draft.page.name
    page = stored.page if stored else page_iri(uid, entity)
    number = (stored.latest if stored else 0) + 1
    revision = URIRef(f"{page}#r{number}")
    markdown = stamped(draft.markdown, page_id(page), number)
    content = "sha256:" + sha256(markdown.encode()).hexdigest()
    add = [
        Quad(revision, RDF.type, KGM.PageRevision, graph),
        Quad(revision, KGM.revisionOf, page, graph),
        Quad(revision, KGM.revision, Literal(number, datatype=XSD.integer), graph),
        Quad(revision, KGM.markdown, Literal(markdown), graph),
        Quad(revision, KGM.contentHash, Literal(content), graph),
        Quad(revision, KGM.createdAt, Literal(now, datatype=XSD.dateTime), graph),
        Quad(page, KGM.currentRevision, revision, graph),
    ]
    if in_pass is not None:
        add.append(Quad(revision, KGM.inPass, in_pass, graph))
    remove = list(store.quads(graph, page, KGM.currentRevision))
    if number > KEPT_REVISIONS:  # the oldest one kept goes: a hub page is rewritten all day
        remove += store.quads(graph, URIRef(f"{page}#r{number - KEPT_REVISIONS}"))
    if stored is None:
        path = page_path(store, queries, uid, entity, name, reserved, draft.page.folder)
        add += [
            *(Quad(page, RDF.type, cls, graph) for cls in draft.page.classes),
            Quad(page, KGM.pageOf, entity, graph),
            Quad(page, KGM.path, Literal(path), graph),
        ]
    if stored is None or stored.title != name:
        remove += list(store.quads(graph, page, KGM.title))
        add.append(Quad(page, KGM.title, Literal(name), graph))
    return page, add, remove


def redaction_quads(
    store: TripleStore, queries: QueryRegistry, uid: str, page: URIRef, citations: Iterable[str]
) -> tuple[list[Quad], list[Quad]]:
    """The quads that empty every revision of ``page`` citing any of ``citations`` (the
    ``m:`` ids of forgotten memories): its Markdown becomes a notice, keeping the page id,
    revision number and content hash (the hash lets the vault still tell a stale copy of
    that revision, and remove it). A forgotten memory's words do not outlive it in history."""
    graph = UserGraphs(uid).kg
    add: list[Quad] = []
    remove: list[Quad] = []
    for citation in sorted(set(citations)):
        binding: dict[str, URIRef | Literal] = {
            "graph": graph,
            "page": page,
            "citation": Literal(citation),
        }
        for row in store.select(queries["pages/revisions_citing"], binding):
            revision, markdown = URIRef(row["revision"]), row["markdown"]
            number = revision.rsplit("#r", 1)[-1]
            notice = (
                f'---\nid: "{page_id(page)}"\nrevision: {number}\nredacted: true\n---\n\n'
                "This revision showed a memory that was forgotten; its text is gone.\n"
            )
            quad = Quad(revision, KGM.markdown, markdown, graph)
            if quad not in remove:
                remove.append(quad)
                add.append(Quad(revision, KGM.markdown, Literal(notice), graph))
    return add, remove
