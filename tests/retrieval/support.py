"""Writing what search finds: memories through the real gate, pages and notes in the store."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.index.lexical import LexicalIndex
from kgmem.memory.gate import Outcome
from kgmem.memory.source_inputs import MessageIn, NoteIn
from kgmem.retrieval import MemorySearch
from kgmem.store import Changeset, NodeKind, Quad, QueryRegistry, stable_node
from kgmem.vocab import KGM, RDF
from tests.memory.world import ALICE, World

QUERIES = QueryRegistry.load()


def remember(world: World, title: str, said: str, **extra: Any) -> URIRef:
    """An active memory of alice titled ``title``, grounded in her message ``said`` (in a
    chat of its own, so no memory reads another's message as its context)."""
    msg = world.say("user", said, chat=f"chat-{world.turn}")
    draft = {"kind": "semantic", "title": title, "confidence": 0.9}
    draft |= {"evidence": [{"source": msg, "quote": said}], **extra}
    [item] = world.draft(draft)
    assert item.outcome is Outcome.ACTIVE, item
    assert item.memory is not None
    return item.memory


def remember_for(world: World, uid: str, title: str, said: str) -> URIRef:
    """The same for another user, ``uid``, through the same gate."""
    msg = world.sources.ingest_message(uid, MessageIn(chat="c", turn=0, role="user", text=said))
    draft = {"kind": "semantic", "title": title, "confidence": 0.9}
    draft["evidence"] = [{"source": str(msg.iri), "quote": said}]
    [item] = world.gate.draft(uid, [draft], account_name=uid.title()).items
    assert item.outcome is Outcome.ACTIVE and item.memory is not None, item
    return item.memory


def write_page(world: World, name: str, markdown: str, when: datetime) -> URIRef:
    """A page of entity ``name`` with one revision, as the author stage stores it."""
    entity = stable_node("alice", NodeKind.ENTITY, name)
    page = stable_node("alice", NodeKind.PAGE, str(entity))
    revision, g = URIRef(f"{page}#r1"), ALICE.kg
    world.store.commit(
        Changeset.of(
            [
                Quad(page, RDF.type, KGM.Page, g),
                Quad(page, KGM.pageOf, entity, g),
                Quad(page, KGM.path, Literal(f"entities/{name.lower()}.md"), g),
                Quad(page, KGM.title, Literal(name), g),
                Quad(page, KGM.currentRevision, revision, g),
                Quad(revision, RDF.type, KGM.PageRevision, g),
                Quad(revision, KGM.revisionOf, page, g),
                Quad(revision, KGM.revision, Literal(1, datatype=XSD.integer), g),
                Quad(revision, KGM.markdown, Literal(markdown), g),
                Quad(revision, KGM.createdAt, Literal(when, datatype=XSD.dateTime), g),
            ]
        )
    )
    return page


def write_note(world: World, path: str, text: str, revision: int = 1) -> URIRef:
    return world.sources.ingest_note("alice", NoteIn(path=path, text=text, revision=revision)).iri


def searcher(world: World, index: LexicalIndex | None = None) -> MemorySearch:
    index = index or LexicalIndex(world.store, QUERIES)
    return MemorySearch(world.store, QUERIES, index, world.clock, world.lifecycle)
