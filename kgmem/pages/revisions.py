"""Where pages live: the page node of an entity, its revisions and its file path.

Pages are in the user's kg graph: ``<page> a kgm:Page ; kgm:pageOf <entity> ; kgm:path
"entities/<slug>.md" ; kgm:currentRevision <page#rN>``, each revision with its Markdown,
content hash and time; older revisions are kept. :func:`stored_page` reads an entity's page
(and the input digest in its front matter); :func:`revision_quads` adds a new revision,
creating the page on its first one at a path no other page has.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from hashlib import sha256

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.memory.ids import NodeKind, stable_node
from kgmem.pipeline.page_content import PageInput
from kgmem.pipeline.stages import PassContext
from kgmem.store import Quad, QueryRegistry, TripleStore
from kgmem.vocab import KGM, RDF

__all__ = ["PageDraft", "StoredPage", "revision_quads", "stored_page"]

_DIGEST = re.compile(r'^digest: "(sha256:[0-9a-f]{64})"$', re.M)


def _page_iri(uid: str, entity: URIRef) -> URIRef:
    """The stable page node of ``entity``."""
    return stable_node(uid, NodeKind.PAGE, str(entity))


@dataclass(frozen=True)
class StoredPage:
    """An entity's page as stored: its node, path, title and current Markdown."""

    page: URIRef
    path: str
    title: str | None
    markdown: str | None
    latest: int  # the highest revision number stored

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
    revisions = store.select(queries["pages/revisions"], {"graph": graph, "page": page})
    numbers = [n.toPython() for r in revisions if isinstance(n := r["number"], Literal)]
    title, markdown = row.get("title"), row.get("markdown")
    return StoredPage(
        page,
        str(row["path"]),
        None if title is None else str(title),
        None if markdown is None else str(markdown),
        max((n for n in numbers if isinstance(n, int)), default=0),
    )


def _slug(name: str) -> str:
    """A file name from an entity name: ``"Café Müller & Co."`` → ``café-müller-co``."""
    text = unicodedata.normalize("NFKC", name).casefold()
    return re.sub(r"[\W_]+", "-", text).strip("-")[:80].strip("-") or "entity"


def _free_path(
    store: TripleStore,
    queries: QueryRegistry,
    graph: URIRef,
    page: URIRef,
    name: str,
    reserved: set[str],
) -> str:
    """``entities/<slug>.md``, or ``<slug>-2`` and so on when another page has it."""
    slug, n = _slug(name), 1
    while True:
        path = f"entities/{slug}.md" if n == 1 else f"entities/{slug}-{n}.md"
        rows = store.select(queries["pages/page_at_path"], {"graph": graph, "path": Literal(path)})
        if path not in reserved and all(URIRef(r["page"]) == page for r in rows):
            reserved.add(path)
            return path
        n += 1


@dataclass(frozen=True)
class PageDraft:
    """A page to store: its input and the Markdown written for it."""

    page: PageInput
    markdown: str


def revision_quads(
    ctx: PassContext, stored: StoredPage | None, draft: PageDraft, now: datetime, reserved: set[str]
) -> tuple[URIRef, list[Quad], list[Quad]]:
    """The page node (new or existing) and the quads that give it ``draft`` as a new revision."""
    graph, entity, name = ctx.graphs.kg, draft.page.entity, draft.page.name
    page = stored.page if stored else _page_iri(ctx.uid, entity)
    number = (stored.latest if stored else 0) + 1
    revision = URIRef(f"{page}#r{number}")
    content = "sha256:" + sha256(draft.markdown.encode()).hexdigest()
    add = [
        Quad(revision, RDF.type, KGM.PageRevision, graph),
        Quad(revision, KGM.revisionOf, page, graph),
        Quad(revision, KGM.revision, Literal(number, datatype=XSD.integer), graph),
        Quad(revision, KGM.markdown, Literal(draft.markdown), graph),
        Quad(revision, KGM.contentHash, Literal(content), graph),
        Quad(revision, KGM.createdAt, Literal(now, datatype=XSD.dateTime), graph),
        Quad(revision, KGM.inPass, ctx.pass_iri, graph),
        Quad(page, KGM.currentRevision, revision, graph),
    ]
    remove = list(ctx.store.quads(graph, page, KGM.currentRevision))
    if stored is None:
        path = _free_path(ctx.store, ctx.queries, graph, page, name, reserved)
        add += [
            Quad(page, RDF.type, KGM.Page, graph),
            Quad(page, KGM.pageOf, entity, graph),
            Quad(page, KGM.path, Literal(path), graph),
        ]
    if stored is None or stored.title != name:
        remove += list(ctx.store.quads(graph, page, KGM.title))
        add.append(Quad(page, KGM.title, Literal(name), graph))
    return page, add, remove
