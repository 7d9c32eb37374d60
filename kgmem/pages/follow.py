"""Pages follow every committed change: the page of each entity a commit touched is read
again and, when what it may say changed, stored as a new revision.

:class:`PageFollower` is a target of the change feed (:mod:`kgmem.index.feed`), like the
other projections: whatever wrote (a draft through the gate, a lifecycle action, an outcome,
a forget, a consolidation pass), the outbox entry of the commit names the nodes it touched,
and the follower finds the entities behind them: an entity itself, the entities a memory is
about and those its claims describe, and both ends of a link that was added or removed (so
a forgotten memory's entities are found though the memory is gone). A failure leaves the
entry in the outbox, so a crash between the commit and the page loses nothing: the next
drain (or start) writes it.

Pages are rendered here without a model (:func:`~kgmem.pages.render.render_page`); a
consolidation pass may later write a model's page for the same entity (the pipeline's author
stage). The page's input digest is in its front matter, so an unchanged entity writes
nothing, and a follower's own commit (page nodes only) touches no entity: it never loops.
An entity that no longer exists (forgotten, or merged into another) loses its page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

from rdflib import Literal, URIRef

from kgmem.clock import Clock
from kgmem.errors import GraphNameError
from kgmem.index.base import Links
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.ontology import OntologyService, ValidationService
from kgmem.pages.cache import PageCache
from kgmem.pages.content import PageInput, read_page_input, with_links
from kgmem.pages.playbooks import read_playbook_input, render_playbook
from kgmem.pages.render import render_page
from kgmem.pages.revisions import (
    PageDraft,
    PageSubject,
    page_iri,
    page_path,
    redaction_quads,
    removal_quads,
    revision_quads,
    stored_page,
    vault_link,
)
from kgmem.store import (
    Changeset,
    NodeKind,
    Quad,
    QueryRegistry,
    TripleStore,
    UserGraphs,
    parse_node,
)
from kgmem.vocab import KGM, RDF

__all__ = ["PageFollower", "PagesWritten", "prepare_pages"]

P = TypeVar("P", bound=PageSubject)
_PROCEDURAL = MemoryKind.PROCEDURAL.iri

log = logging.getLogger("kgmem.pages")


@dataclass(frozen=True)
class Prepared:
    """The pages to write for a set of entities: each input with its links resolved, and
    the entities that no longer exist."""

    inputs: tuple[PageInput, ...]
    gone: tuple[URIRef, ...]
    reserved: dict[str, URIRef]


def prepare_pages(
    store: TripleStore,
    queries: QueryRegistry,
    ontology: OntologyService,
    uid: str,
    entities: Iterable[URIRef],
    cache: PageCache | None = None,
) -> Prepared:
    """What the pages of ``entities`` may say, with every fact about another entity linked to
    that entity's page. An entity linked to that has no page yet is added to the set (its
    page is written with the others), so no link points at a file that will not exist."""
    effective = ontology.effective(uid)
    reserved: dict[str, URIRef] = {}
    found: dict[URIRef, PageInput] = {}
    gone: list[URIRef] = []
    todo = sorted(set(entities), key=str)
    while todo:
        entity = todo.pop()
        if entity in found or entity in gone:
            continue
        page = read_page_input(store, queries, uid, entity, effective, cache)
        if page is None or (
            not page.facts and not page.memories and not _named(store, queries, uid, entity)
        ):
            gone.append(entity)  # gone, or nothing is said of it: no page
            continue
        found[entity] = page
        for target in (URIRef(f.target) for f in page.facts if f.target):
            if target not in found and target not in gone and not _has_page(store, uid, target):
                todo.append(target)
    links: dict[str, str] = {}
    for entity, page in sorted(found.items(), key=lambda kv: str(kv[0])):
        links[str(entity)] = vault_link(page_path(store, queries, uid, entity, page.name, reserved))
    for fact in (f for page in found.values() for f in page.facts):
        if fact.target and fact.target not in links:  # linked to an existing page
            node = page_iri(uid, URIRef(fact.target))
            for quad in store.quads(UserGraphs(uid).kg, node, KGM.path):
                links[fact.target] = vault_link(str(quad.object))
    inputs = tuple(with_links(page, links) for page in found.values())
    return Prepared(inputs, tuple(gone), reserved)


def _named(store: TripleStore, queries: QueryRegistry, uid: str, entity: URIRef) -> bool:
    """Whether an active memory's claim names ``entity`` (a page links to it)."""
    binding = {"graph": UserGraphs(uid).kg, "entity": entity, "status": MemoryStatus.ACTIVE.iri}
    return bool(store.select(queries["pages/entity_named"], binding))


def _memories(nodes: Iterable[URIRef]) -> Iterator[tuple[URIRef, str]]:
    """The memory nodes among ``nodes``, each with its local id."""
    for node in nodes:
        try:
            _, kind, local = parse_node(node)
        except GraphNameError:
            continue
        if kind is NodeKind.MEMORY:
            yield node, local


def _has_page(store: TripleStore, uid: str, entity: URIRef) -> bool:
    return any(True for _ in store.quads(UserGraphs(uid).kg, page_iri(uid, entity), KGM.path))


@dataclass
class PagesWritten:
    """What one refresh did: pages written (new revisions), pages unchanged, pages removed
    with their entity."""

    written: list[URIRef] = field(default_factory=list)
    unchanged: list[URIRef] = field(default_factory=list)
    removed: list[URIRef] = field(default_factory=list)
    refused: str = ""  # why nothing was written: the pages did not conform to the shapes


class PageFollower:
    """The change feed's target that keeps every entity page level with its entity."""

    def __init__(
        self,
        store: TripleStore,
        queries: QueryRegistry,
        ontology: OntologyService,
        validation: ValidationService,
        clock: Clock,
    ) -> None:
        self._store, self._queries = store, queries
        self._ontology, self._validation, self._clock = ontology, validation, clock
        self._cache = PageCache()  # what pages showed, read again only where it changed

    @property
    def cache(self) -> PageCache:
        """What the follower keeps between refreshes (hub pages read from what changed)."""
        return self._cache

    def refresh(
        self, uid: str, nodes: Iterable[URIRef], links: Links | None = None
    ) -> PagesWritten:
        nodes = list(nodes)
        self._cache.touch(uid, nodes)
        entities = self.entities(uid, nodes, links)
        procedures = self.procedures(uid, nodes)
        if not entities and not procedures:
            return PagesWritten()
        forgotten = self._forgotten(uid, nodes)
        return self.write(uid, entities, forgotten=forgotten, procedures=procedures)

    def procedures(self, uid: str, nodes: Iterable[URIRef]) -> set[URIRef]:
        """The memories among ``nodes`` whose playbook may change: the procedures, and any
        memory that has a playbook (it stopped being an active procedure, or is gone)."""
        graph = UserGraphs(uid).kg
        return {
            node
            for node, _ in _memories(nodes)
            if any(True for _ in self._store.quads(graph, node, KGM.kind, _PROCEDURAL))
            or _has_page(self._store, uid, node)
        }

    def _forgotten(self, uid: str, nodes: Iterable[URIRef]) -> list[str]:
        """The citation ids (``m:`` and the first 8 hex digits) of the memories among
        ``nodes`` that are in none of the user's graphs any more: forgotten."""
        standing = UserGraphs(uid).standing
        return [
            "m:" + local[:8]
            for node, local in _memories(nodes)
            if not any(any(True for _ in self._store.quads(g, node)) for g in standing)
        ]

    def entities(
        self, uid: str, nodes: Iterable[URIRef], links: Links | None = None
    ) -> set[URIRef]:
        """The entities whose page ``nodes`` (and ``links``) may change."""
        graph, found = UserGraphs(uid).kg, set[URIRef]()
        candidates = set(nodes)
        if links is not None:  # both ends of a link added or removed, but a page's own links
            pages = UserGraphs(uid).node_base + "page/"
            candidates |= {
                end for pair in links.pairs if not pair[0].startswith(pages) for end in pair
            }
        candidates = {
            c for c in candidates if not c.startswith(UserGraphs(uid).node_base + "page/")
        }
        for node in candidates:
            types = {q.object for q in self._store.quads(graph, node, RDF.type)}
            if KGM.Entity in types:
                found.add(node)
            elif KGM.Memory in types:
                found |= self._memory_entities(graph, node)
        return found

    def _memory_entities(self, graph: URIRef, memory: URIRef) -> set[URIRef]:
        found = {
            q.object
            for q in self._store.quads(graph, memory, KGM.about)
            if isinstance(q.object, URIRef)
        }
        for claim in self._store.quads(graph, memory, KGM.claim):
            for end in (KGM.subject, KGM.object):
                found |= {
                    q.object
                    for q in self._store.quads(graph, claim.object, end)  # type: ignore[arg-type]
                    if isinstance(q.object, URIRef)
                }
        return {e for e in found if self._is_entity(graph, e)}

    def _is_entity(self, graph: URIRef, node: URIRef) -> bool:
        return any(True for _ in self._store.quads(graph, node, RDF.type, KGM.Entity))

    def write(
        self,
        uid: str,
        entities: Iterable[URIRef],
        forgotten: Iterable[str] = (),
        procedures: Iterable[URIRef] = (),
    ) -> PagesWritten:
        """Store a new revision of each page of ``entities`` whose input changed, and remove
        the pages of those that no longer exist (or of which nothing is said), validated, in
        one transaction. ``forgotten``: citation ids of forgotten memories, whose words are
        emptied from every revision of these pages that showed them. ``procedures``: the
        memories whose playbooks to write (or remove: no longer an active procedure)."""
        forgotten = sorted(set(forgotten))
        done = PagesWritten()
        now = self._clock.now()
        with self._store.transaction() as tx:
            prepared = prepare_pages(
                self._store, self._queries, self._ontology, uid, entities, self._cache
            )
            add: list[Quad] = []
            remove: list[Quad] = []
            for page in prepared.inputs:
                _, more, less = self._revise(uid, page, render_page, prepared, now, done)
                add += more
                remove += less
            more, less = self._playbooks(uid, procedures, prepared, now, done)
            add += more
            remove += less
            for page in prepared.inputs if forgotten else ():  # (a page gone goes whole)
                more, less = redaction_quads(
                    self._store, self._queries, uid, page_iri(uid, page.entity), forgotten
                )
                add += more
                remove += less
            for entity in prepared.gone:
                node = page_iri(uid, entity)
                quads = removal_quads(self._store, uid, node)
                if quads:
                    done.removed.append(node)
                    remove += quads
            if not add and not remove:
                return done
            changes = Changeset.of(add, remove)
            report = self._validation.validate(uid, changes)
            if not report.conforms:  # a bad record must not hold up the feed: said and skipped
                done.refused = "; ".join(v.message for v in report.violations[:3])
                log.error("pages of %s not written: they do not conform: %s", uid, done.refused)
                return PagesWritten(refused=done.refused)
            tx.add(*changes.add)
            tx.remove(*changes.remove)
        if done.written or done.removed:
            log.debug(
                "pages of %s: %d written, %d removed", uid, len(done.written), len(done.removed)
            )
        return done

    def _playbooks(
        self,
        uid: str,
        procedures: Iterable[URIRef],
        prepared: Prepared,
        now: datetime,
        done: PagesWritten,
    ) -> tuple[list[Quad], list[Quad]]:
        """The quads that bring the playbooks of ``procedures`` level: a new revision when
        what one says changed, its removal when its memory is no longer an active
        procedure (or is gone)."""
        graph = UserGraphs(uid).kg
        add: list[Quad] = []
        remove: list[Quad] = []
        links = {str(e): vault_link(p) for p, e in prepared.reserved.items()}
        for memory in sorted(set(procedures), key=str):
            playbook = read_playbook_input(self._store, uid, memory, links)
            if playbook is None:
                quads = removal_quads(self._store, uid, page_iri(uid, memory))
                if quads:
                    done.removed.append(page_iri(uid, memory))
                    remove += quads
                continue
            node, more, less = self._revise(uid, playbook, render_playbook, prepared, now, done)
            if node is not None:  # the index's description of it
                add += [*more, Quad(node, KGM.excerpt, Literal(playbook.description), graph)]
                remove += [*less, *self._store.quads(graph, node, KGM.excerpt)]
        return add, remove

    def _revise(
        self,
        uid: str,
        page: P,
        render: Callable[[P, datetime], str],
        prepared: Prepared,
        now: datetime,
        done: PagesWritten,
    ) -> tuple[URIRef | None, list[Quad], list[Quad]]:
        """The new revision of ``page`` (its node and quads), unless what it says is what
        its current revision says (then None, and nothing)."""
        stored = stored_page(self._store, self._queries, UserGraphs(uid).kg, page.subject)
        if stored is not None and stored.digest == page.digest:
            done.unchanged.append(stored.page)
            return None, [], []
        draft = PageDraft(page, render(page, now))
        node, more, less = revision_quads(
            self._store, self._queries, uid, stored, draft, now, prepared.reserved
        )
        done.written.append(node)
        return node, more, less
