"""The change feed: every writer's commit reaches both projections, in batches, durably.

Real stores and real projections throughout: the services the server builds (on-disk
Oxigraph and Kùzu), or a feed over the memory world's store with a counting wrapper around
a real Kùzu projection.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.api.services import Services
from kgmem.config import Settings, load_settings
from kgmem.errors import StoreOperationFailed
from kgmem.index import ChangeFeed, KuzuProjection
from kgmem.index.base import Links
from kgmem.index.feed_outbox import Changes, Outbox
from kgmem.memory.source_inputs import MessageIn, NoteIn
from kgmem.store import (
    Changeset,
    NodeKind,
    OxigraphStore,
    Quad,
    QueryRegistry,
    UserGraphs,
    stable_node,
)
from kgmem.vocab import KGM, RDF, SDO
from tests.index.wired import (
    NOW,
    in_sync,
    memory_ids,
    mentions,
    remember,
    settled,
    wired,
)
from tests.memory.world import World

ALICE = UserGraphs("alice")


@pytest.fixture
def services(settings: Settings) -> Iterator[Services]:
    built = wired(settings)
    built.lexical.rebuild("alice")  # built now: from here on only the feed changes it
    yield built
    built.close()


class Counting:
    """A real projection, counting the refresh calls it gets (and failing while ``broken``)."""

    def __init__(self, inner: KuzuProjection) -> None:
        self.inner = inner
        self.calls: list[int] = []
        self.broken = False

    def refresh(self, uid: str, nodes: Iterable[URIRef], links: Links | None = None) -> None:
        nodes = list(nodes)
        self.calls.append(len(nodes))
        if self.broken:
            raise StoreOperationFailed("graph projection", "disk full")
        self.inner.refresh(uid, nodes, links)


@pytest.fixture
def world(tmp_path: Path, queries: QueryRegistry, home: Path) -> Iterator[World]:
    store = OxigraphStore(tmp_path / "store")
    yield World(store, queries, load_settings(env={"KGMEM_HOME": str(home)}))
    store.close()


@pytest.fixture
def counting(world: World, queries: QueryRegistry, tmp_path: Path) -> Iterator[Counting]:
    projection = KuzuProjection(tmp_path / "kuzu", world.store, queries)
    yield Counting(projection)
    projection.close()


def ingest(world: World, count: int, first: int = 0) -> list[URIRef]:
    """``count`` user messages (turns from ``first`` on), one commit each."""
    return [
        world.sources.ingest_message(
            "alice", MessageIn(chat="burst", turn=turn, role="user", text=f"Message {turn}.")
        ).iri
        for turn in range(first, first + count)
    ]


def sources_of(projection: KuzuProjection) -> set[str]:
    return {s.id for s in projection.rows("alice").sources}


# -- every writer ------------------------------------------------------------------------


def test_a_gate_draft_reaches_both_projections(services: Services) -> None:
    memory = remember(services, 0)
    settled(services)
    assert memory_ids(services.projection)[str(memory)] == "active"
    doc = services.lexical.doc("alice", str(memory))
    assert doc is not None and doc.title == "Works at Acme"
    assert in_sync(services.projection)


def test_a_lifecycle_archive_reaches_both_projections(services: Services) -> None:
    memory = remember(services, 0)
    settled(services)
    services.lifecycle.archive("alice", memory)
    settled(services)
    assert memory_ids(services.projection)[str(memory)] == "archived"
    doc = services.lexical.doc("alice", str(memory))
    assert doc is not None and doc.status == "archived"
    assert in_sync(services.projection)


def test_every_kind_of_change_at_a_hub_entity_keeps_the_projection_exact(
    services: Services,
) -> None:
    """The feed tells the projection which nodes changed only by their links (a fact about
    the user's own entity) so it refreshes just those links: after each kind of change the
    projection must still equal a rebuild from the store, whatever wrote the change."""
    kg = UserGraphs("alice").kg
    first = remember(services, 0, "Acme")
    remember(services, 1, "Globex")
    settled(services)
    [me] = {r.source for r in services.projection.rows("alice").relates if not r.inferred}
    [acme] = services.store.quads(kg, None, KGM.name, Literal("Acme"))
    changes = [
        lambda: remember(services, 2, "Initech"),
        lambda: services.lifecycle.archive("alice", first),
        lambda: services.lifecycle.restore("alice", first),
        # a fact written straight into the graph, with no memory: a link of two entities
        lambda: services.store.commit(
            Changeset.of([Quad(URIRef(me), SDO.knows, acme.subject, kg)])
        ),
        lambda: services.store.commit(
            Changeset.of(remove=[Quad(URIRef(me), SDO.knows, acme.subject, kg)])
        ),
        # the entity's own data: a new alias
        lambda: services.store.commit(
            Changeset.of([Quad(acme.subject, KGM.alias, Literal("Acme Corp"), kg)])
        ),
        lambda: services.lifecycle.forget("alice", first),
    ]
    for number, change in enumerate(changes):
        change()
        settled(services)
        assert in_sync(services.projection), number


def test_an_entry_says_which_nodes_changed_only_by_their_links(
    world: World, queries: QueryRegistry
) -> None:
    """A quad between two nodes of the user is a link of its subject; any other quad changes
    its subject's own data; an entry that does not say (an older one) counts as data."""
    graphs, outbox = UserGraphs("alice"), Outbox(world.store, queries)
    me, acme = (stable_node("alice", NodeKind.ENTITY, n) for n in ("me", "acme"))
    changes = Changeset.of(
        [
            Quad(me, SDO.worksFor, acme, graphs.kg),
            Quad(acme, RDF.type, KGM.Entity, graphs.kg),
            Quad(acme, KGM.name, Literal("Acme"), graphs.kg),
        ]
    )
    world.store.commit(Changeset.of(outbox.entries_for(changes).add))
    [entry] = outbox.entries("alice")
    said = outbox.changes("alice", entry)
    assert said.exact and said.nodes == {me, acme} and said.data == {acme}
    assert said.pairs == {(me, acme)}
    batch = Changes()
    batch.add(said)
    assert batch.links() == Links(frozenset({me}), frozenset({(me, acme)}))
    older = Changes(nodes={me}, exact=False)  # only changedNode: how it changed is unknown
    batch.add(older)
    assert batch.links().only == frozenset()


def test_sources_and_short_notes_reach_the_projections(services: Services) -> None:
    note = services.sources.ingest_note(
        "alice", NoteIn(path="trips/ferry.md", text="The ferry to Skye leaves at nine.")
    ).iri
    short = services.sources.remember("alice", "Buy oat milk").iri
    settled(services)
    kinds = {s.id: s.type for s in services.projection.rows("alice").sources}
    assert kinds == {str(note): "externalNote", str(short): "shortNote"}
    doc = services.lexical.doc("alice", str(note))
    assert doc is not None and doc.kind == "note" and doc.path == "trips/ferry.md"
    assert in_sync(services.projection)


def test_a_consolidation_pass_reaches_both_projections(services: Services) -> None:
    msg = services.sources.ingest_message(
        "alice", MessageIn(chat="c9", turn=0, role="user", text="I live in Lyon.")
    )
    draft = {
        "kind": "semantic",
        "title": "Lives in Lyon",
        "claims": [{"subject": "I", "predicate": "schema:homeLocation", "object": "Lyon"}],
        "entities": [{"name": "Lyon", "types": ["schema:Place"]}],
        "evidence": [{"source": str(msg.iri), "quote": "I live in Lyon"}],
    }
    services.consolidation.queue("alice", [draft])
    assert len(services.consolidation.sweep()) == 1
    settled(services)
    [doc] = [d for d in _lexical_memories(services) if d.title == "Lives in Lyon"]
    assert memory_ids(services.projection)[doc.id] == "active"
    assert "Lyon" in {e.name for e in services.projection.rows("alice").entities}
    assert in_sync(services.projection)


def test_a_direct_store_commit_reaches_both_projections(services: Services) -> None:
    """What the author stage does: a page and its revision, committed straight to the store."""
    entity = stable_node("alice", NodeKind.ENTITY, "skye")
    page = stable_node("alice", NodeKind.PAGE, str(entity))
    revision, g = URIRef(f"{page}#r1"), ALICE.kg
    services.store.commit(
        Changeset.of(
            [
                Quad(page, RDF.type, KGM.Page, g),
                Quad(page, KGM.path, Literal("entities/skye.md"), g),
                Quad(page, KGM.title, Literal("Skye"), g),
                Quad(page, KGM.currentRevision, revision, g),
                Quad(revision, RDF.type, KGM.PageRevision, g),
                Quad(revision, KGM.markdown, Literal("# Skye\nAn island with a ferry."), g),
                Quad(revision, KGM.createdAt, Literal(NOW, datatype=XSD.dateTime), g),
            ]
        )
    )
    settled(services)
    assert {p.id: p.title for p in services.projection.rows("alice").pages} == {str(page): "Skye"}
    doc = services.lexical.doc("alice", str(page))
    assert doc is not None and doc.kind == "page"
    assert in_sync(services.projection)


def _lexical_memories(services: Services) -> list[object]:
    hits = services.search.memory_search("alice", "Lyon")
    return [services.lexical.doc("alice", h.id) for h in hits if h.kind == "memory"]


# -- batching --------------------------------------------------------------------------


def test_many_commits_are_read_in_bounded_batches(
    world: World, queries: QueryRegistry, counting: Counting
) -> None:
    feed = ChangeFeed(world.store, queries, [counting], batch=8)
    feed.attach()  # entries are written, nothing drains in the background
    try:
        messages = ingest(world, 20)
        assert feed.pending("alice") == 20 and counting.calls == []
        report = feed.drain("alice")
    finally:
        feed.detach()
    assert (report.drained, report.batches, report.failed) == (20, 3, ())
    assert len(counting.calls) == 3  # 8 + 8 + 4 commits, one refresh each
    assert feed.pending("alice") == 0
    assert sources_of(counting.inner) == {str(m) for m in messages}
    assert in_sync(counting.inner)


def test_a_burst_is_drained_in_the_background_in_few_refreshes(
    world: World, queries: QueryRegistry, counting: Counting
) -> None:
    feed = ChangeFeed(world.store, queries, [counting], debounce=0.3)
    feed.start()
    try:
        messages = ingest(world, 30)
        deadline = time.monotonic() + 20
        while feed.pending("alice") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert feed.pending("alice") == 0
    finally:
        feed.detach()
    assert 1 <= len(counting.calls) <= 10  # 30 commits, not 30 refreshes
    assert sources_of(counting.inner) == {str(m) for m in messages}
    assert in_sync(counting.inner)


def test_dropping_a_user_graph_lets_go_of_every_node_it_held_at_once(
    world: World, queries: QueryRegistry, counting: Counting
) -> None:
    feed = ChangeFeed(world.store, queries, [counting])
    feed.attach()
    try:
        messages = ingest(world, 3)
        feed.drain("alice")
        assert sources_of(counting.inner) == {str(m) for m in messages}
        world.store.commit(Changeset.of(drop_graphs=[ALICE.sources]))
        # drained by the commit itself, like a forget: no background thread runs here
        assert feed.pending("alice") == 0
    finally:
        feed.detach()
    assert sources_of(counting.inner) == set()
    assert in_sync(counting.inner)


# -- one target ahead of the others ------------------------------------------------------


@pytest.fixture
def behind(world: World, queries: QueryRegistry, tmp_path: Path) -> Iterator[Counting]:
    """A second real projection, for a feed with two targets."""
    projection = KuzuProjection(tmp_path / "kuzu-2", world.store, queries)
    yield Counting(projection)
    projection.close()


def test_an_eager_target_reads_each_commit_and_the_drain_then_skips_it(
    world: World, queries: QueryRegistry, counting: Counting, behind: Counting
) -> None:
    feed = ChangeFeed(world.store, queries, [counting, behind], batch=8, eager=[counting])
    feed.attach()
    try:
        version = counting.inner.version("alice")
        first = ingest(world, 3)  # three commits: the committing thread refreshes each
        assert sources_of(counting.inner) == {str(m) for m in first}
        assert len(counting.calls) == 3
        assert counting.inner.version("alice") > version  # readers' caches see the change
        assert sources_of(behind.inner) == set() and behind.calls == []
        assert feed.pending("alice") == 3  # the other target has not read them yet

        report = feed.drain("alice")
        assert (report.drained, report.batches, report.failed) == (3, 1, ())
        assert len(counting.calls) == 3  # it had every entry of the batch: skipped
        assert len(behind.calls) == 1
        assert feed.pending("alice") == 0

        [fourth] = ingest(world, 1, first=3)
        feed.drain("alice")
        assert (len(counting.calls), len(behind.calls)) == (4, 2)
    finally:
        feed.detach()
    everything = {str(m) for m in (*first, fourth)}
    assert sources_of(counting.inner) == everything == sources_of(behind.inner)
    assert in_sync(counting.inner) and in_sync(behind.inner)


def test_a_commit_an_eager_target_failed_is_read_again_by_the_drain(
    world: World, queries: QueryRegistry, counting: Counting, behind: Counting
) -> None:
    feed = ChangeFeed(world.store, queries, [counting, behind], eager=[counting])
    feed.attach()
    try:
        counting.broken = True
        [message] = ingest(world, 1)  # the commit stands; the target's failure is its own
        assert feed.pending("alice") == 1 and sources_of(counting.inner) == set()
        counting.broken = False
        assert feed.drain("alice").ok
        assert feed.pending("alice") == 0
    finally:
        feed.detach()
    assert sources_of(counting.inner) == {str(message)} == sources_of(behind.inner)
    with pytest.raises(ValueError, match="must be one of the targets"):
        ChangeFeed(world.store, queries, [behind], eager=[counting])


def test_a_search_reads_a_write_before_the_graph_projection_does(services: Services) -> None:
    services.feed.stop()  # entries are written; only what is asked for drains
    memory = remember(services, 0)
    hits = services.search.memory_search("alice", "Where does Alice work? Acme")
    assert str(memory) in [h.id for h in hits]
    assert services.feed.pending("alice") > 0  # the graph projection has not read it yet
    assert str(memory) not in memory_ids(services.projection)
    assert services.feed.drain("alice").ok
    assert memory_ids(services.projection)[str(memory)] == "active"
    assert services.feed.pending("alice") == 0 and in_sync(services.projection)


# -- failures and crashes ----------------------------------------------------------------


def test_a_failing_projection_keeps_the_entries_and_is_retried(
    world: World, queries: QueryRegistry, counting: Counting
) -> None:
    counting.broken = True
    feed = ChangeFeed(world.store, queries, [counting], debounce=0.01, retry=0.05)
    feed.attach()
    try:
        [message] = ingest(world, 1)
        report = feed.drain("alice")
        assert report.failed == ("Counting",) and report.drained == 0
        assert feed.pending("alice") == 1  # kept for a later try
        assert sources_of(counting.inner) == set()
        feed.start()  # the background retries (with backoff) while it keeps failing
        deadline = time.monotonic() + 20
        while len(counting.calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(counting.calls) >= 3 and feed.pending("alice") == 1
        counting.broken = False  # the projection recovers: the next retry drains
        while feed.pending("alice") and time.monotonic() < deadline:
            time.sleep(0.02)
        assert feed.pending("alice") == 0
    finally:
        feed.detach()
    assert sources_of(counting.inner) == {str(message)}
    assert in_sync(counting.inner)


def test_the_outbox_survives_a_stop_and_is_drained_at_the_next_start(
    settings: Settings,
) -> None:
    services = wired(settings)
    try:
        kept = remember(services, 0)
        settled(services)
        services.feed.stop()  # as if the process died: nothing drains from here on
        gone = remember(services, 1, "Globex")
        services.lifecycle.archive("alice", kept)
        waiting = services.feed.pending("alice")
        assert waiting >= 3  # the message, the draft, the archive
        held = memory_ids(services.projection)
        assert str(gone) not in held and held[str(kept)] == "active"
    finally:
        services.close()
    again = wired(settings)
    try:
        # what was waiting, and the pages' own commits the drain made on the way
        assert again.index.drained >= waiting
        assert again.index.repaired == ()  # the outbox alone brought the projection level
        assert again.feed.pending("alice") == 0
        held = memory_ids(again.projection)
        assert held[str(gone)] == "active" and held[str(kept)] == "archived"
        assert in_sync(again.projection)
        assert again.vault is not None  # the pages followed the writes the stop left behind
        assert (again.vault.memory("alice") / "entities" / "globex.md").is_file()
    finally:
        again.close()


# -- forget ------------------------------------------------------------------------------


def test_forget_leaves_no_trace_in_the_store_or_either_projection(services: Services) -> None:
    memory = remember(services, 0)
    other = remember(services, 1, "Globex")
    settled(services)
    record = services.lifecycle.get("alice", memory)
    parts = [memory, *(c.iri for c in record.claims), *(e.iri for e in record.evidence)]
    assert str(memory) in {h.id for h in services.search.memory_search("alice", "Acme")}
    services.feed.stop()  # only the forget itself may drain now
    services.lifecycle.pin("alice", memory)
    assert services.feed.pending("alice") >= 1  # the pin is still waiting, naming the memory
    assert mentions(services.store, [memory])

    services.lifecycle.forget("alice", memory)

    assert mentions(services.store, parts) == []
    assert services.feed.pending("alice") == 0
    rows = services.projection.rows("alice")
    assert str(memory) not in repr(rows)
    assert str(other) in {m.id for m in rows.memories}
    assert services.lexical.doc("alice", str(memory)) is None
    assert str(memory) not in {h.id for h in services.search.memory_search("alice", "Acme")}
    assert in_sync(services.projection)
