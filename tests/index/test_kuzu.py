"""The Kùzu projection on real stores: rebuild, refresh, neighbourhood, user scoping."""

from __future__ import annotations

from typing import Any

import pytest
from rdflib import Literal, URIRef

from kgmem.index import KuzuProjection, LinkKind, UserRows
from kgmem.index.kuzu.schema import NODE_KINDS, NODES
from kgmem.index.reader import StoreReader
from kgmem.memory.entities import self_entity
from kgmem.store import Changeset, NodeKind, Quad, QueryRegistry
from kgmem.vocab import KGM, RDF, SDO
from tests.index.scenes import ALICE_SELF, BOB, Scene, changed_nodes, snapshot, works_at
from tests.memory.world import ALICE, World


def entity(rows: UserRows, name: str) -> str:
    [found] = [e.id for e in rows.entities if e.name == name]
    return found


def in_sync(projection: KuzuProjection, uid: str = "alice") -> bool:
    return projection.fingerprint(uid) == projection.store_fingerprint(uid)


# -- rebuild ---------------------------------------------------------------------------


def test_rebuild_matches_the_store(projection: KuzuProjection, scene: Scene) -> None:
    assert projection.opened.created and projection.opened.rebuilt == ("alice", "bob")
    assert in_sync(projection) and in_sync(projection, "bob")
    fingerprint = projection.rebuild("alice")
    assert fingerprint == projection.fingerprint("alice") == projection.store_fingerprint("alice")
    rows = projection.rows("alice")
    statuses = {m.id: m.status for m in rows.memories}
    assert statuses[str(scene.acme)] == "active"
    assert statuses[str(scene.pending)] == "pending"
    assert statuses[str(scene.quarantined)] == "quarantined"
    assert {e.name for e in rows.entities} >= {"Alice", "Acme", "Bob", "Carol"}
    me, acme = str(ALICE_SELF), entity(rows, "Acme")
    assert {(r.source, r.predicate, r.target) for r in rows.relates if not r.inferred} >= {
        (me, str(SDO.worksFor), acme),
        (entity(rows, "Bob"), str(SDO.worksFor), acme),
        (me, str(SDO.spouse), entity(rows, "Carol")),
    }
    # schema:spouse is symmetric: the reverse fact is inferred, backed by the same memory
    [reverse] = [r for r in rows.relates if r.inferred]
    assert (reverse.source, reverse.target) == (entity(rows, "Carol"), me)
    assert reverse.memory == str(scene.spouse)
    assert all(s.source < s.target for s in rows.shares)


def test_rows_carry_the_memory_fields(projection: KuzuProjection, scene: Scene) -> None:
    [memory] = [m for m in projection.rows("alice").memories if m.id == str(scene.acme)]
    assert memory.kind == "semantic" and memory.title == "Alice works at Acme"
    assert memory.confidence == 0.9 and memory.pinned is False
    assert memory.recorded_at is not None and memory.recorded_at.tzinfo is None
    sources = projection.rows("alice").sources
    assert {s.type for s in sources} == {"userMessage", "toolResult"}
    assert {s.chat for s in sources} == {"c1"}


# -- refresh ---------------------------------------------------------------------------


def test_refresh_after_a_new_memory(projection: KuzuProjection, world: World, scene: Scene) -> None:
    before = snapshot(world.store)
    msg = world.say("user", "I also work at Globex.")
    [item] = world.draft(works_at(msg, "Globex", "I also work at Globex"))
    assert not in_sync(projection)
    projection.refresh("alice", changed_nodes(world.store, before))
    assert in_sync(projection)
    rows = projection.rows("alice")
    globex = entity(rows, "Globex")
    assert str(item.memory) in {m.id for m in rows.memories}
    assert (str(item.memory), globex) in {(a.memory, a.entity) for a in rows.about}
    assert (str(ALICE_SELF), str(SDO.worksFor), globex, str(item.memory)) in {
        (r.source, r.predicate, r.target, r.memory) for r in rows.relates
    }


_EDGES_AT = "MATCH (a:Entity)-[e]-(b) WHERE a.key = $key RETURN DISTINCT ID(e)"


def test_a_refresh_leaves_the_unchanged_edges_of_an_entity_as_they_are(
    projection: KuzuProjection, world: World, scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's own entity is a hub: a write about it writes only the edges it changed
    (not every edge at the hub again), and a duplicated edge there (drift) is mended."""
    graph = projection._graph  # the projection's own database, to see what it is sent
    key = {"key": f"alice|{ALICE_SELF}"}
    at_hub = len(graph.run(_EDGES_AT, key))
    [dup] = graph.run(
        "MATCH (a:Entity)-[e:RELATES]->(b:Entity) WHERE a.key = $key "
        "RETURN b.key, e.uid, e.predicate, e.memory, e.inferred LIMIT 1",
        key,
    )
    graph.run(
        "MATCH (a:Entity {key: $key}), (b:Entity {key: $b}) CREATE (a)-[:RELATES "
        "{uid: $uid, predicate: $p, memory: $m, inferred: $i}]->(b)",
        {**key, "b": dup[0], "uid": dup[1], "p": dup[2], "m": dup[3], "i": dup[4]},
    )
    assert not in_sync(projection)
    stored = snapshot(world.store)
    msg = world.say("user", "I also work at Globex.")
    [item] = world.draft(works_at(msg, "Globex", "I also work at Globex"))
    written: list[tuple[str, int]] = []
    run = graph.run

    def recording(
        cypher: str, params: dict[str, Any] | None = None, prepared: bool = False
    ) -> list[list[Any]]:
        if cypher.startswith("COPY") and "$rows" in cypher:
            written.append((cypher.split()[1], len((params or {})["rows"])))
        return run(cypher, params, prepared=prepared)

    monkeypatch.setattr(graph, "run", recording)
    projection.refresh("alice", changed_nodes(world.store, stored) | {ALICE_SELF})
    assert in_sync(projection)  # the duplicate is gone, the new facts are there
    edges = sum(n for table, n in written if table.isupper())
    # the new memory's ABOUT and EVIDENCE, the new RELATES (and its reverse), the new
    # shared-memory pair, and the mended duplicate: a handful, not the hub's edges again
    assert at_hub >= 12 and edges <= 8, (at_hub, written)
    rows = projection.rows("alice")
    globex = entity(rows, "Globex")
    assert (str(item.memory), globex) in {(a.memory, a.entity) for a in rows.about}


def test_refresh_of_the_memory_alone_after_archive(
    projection: KuzuProjection, world: World, scene: Scene
) -> None:
    world.lifecycle.archive("alice", scene.acme)
    assert not in_sync(projection)
    projection.refresh("alice", [scene.acme])  # the facts' entities follow from the memory
    assert in_sync(projection)
    rows = projection.rows("alice")
    [memory] = [m for m in rows.memories if m.id == str(scene.acme)]
    assert memory.status == "archived"
    assert str(scene.acme) not in {r.memory for r in rows.relates}
    acme = entity(rows, "Acme")
    assert (str(ALICE_SELF), str(SDO.worksFor), acme) not in {
        (r.source, r.predicate, r.target) for r in rows.relates
    }
    assert (min(str(ALICE_SELF), acme), max(str(ALICE_SELF), acme)) not in {
        (s.source, s.target) for s in rows.shares
    }


def test_refresh_of_the_memory_alone_after_forget(
    projection: KuzuProjection, world: World, scene: Scene
) -> None:
    world.lifecycle.forget("alice", scene.spouse)
    assert not in_sync(projection)
    projection.refresh("alice", [scene.spouse])  # the store has nothing left of it
    assert in_sync(projection)
    rows = projection.rows("alice")
    gone = str(scene.spouse)
    assert gone not in {m.id for m in rows.memories}
    assert gone not in {a.memory for a in rows.about} | {e.memory for e in rows.evidence}
    assert gone not in {r.memory for r in rows.relates}
    assert str(SDO.spouse) not in {r.predicate for r in rows.relates}


def test_refresh_after_every_change_of_a_sequence(
    projection: KuzuProjection, world: World, scene: Scene
) -> None:
    for action in (
        lambda: world.lifecycle.archive("alice", scene.colleague),
        lambda: world.lifecycle.restore("alice", scene.colleague),
        lambda: world.lifecycle.approve("alice", scene.pending),
        lambda: world.lifecycle.forget("alice", scene.acme),
        lambda: world.lifecycle.pin("alice", scene.spouse),
    ):
        before = snapshot(world.store)
        action()
        assert not in_sync(projection)
        projection.refresh("alice", changed_nodes(world.store, before))
        assert in_sync(projection)


def test_the_facts_read_at_an_entity_are_the_whole_reads_facts_at_it(
    world: World, scene: Scene, queries: QueryRegistry
) -> None:
    """A refresh reads facts one entity at a time with its own query (index/facts_at, typed
    after the fact pattern so a bound object is an index lookup), or one pair of entities at
    a time (from the pair's triples and claim keys, and index/shares_pair): each must find
    exactly what the whole user's read has at that entity or between that pair."""
    reader = StoreReader(world.store, queries)
    whole, shares = reader.relates("alice"), reader.shares("alice")
    assert any(r.inferred for r in whole) and any(not r.inferred for r in whole) and shares
    ends = {end for r in whole for end in (r.source, r.target)}
    for entity in sorted(ends):
        at = reader.relates("alice", [URIRef(entity)])
        assert at == {r for r in whole if entity in (r.source, r.target)}, entity
    pairs = {tuple(sorted((r.source, r.target))) for r in whole}
    pairs |= {(s.source, s.target) for s in shares} | {(min(ends), max(ends))}
    for a, b in sorted(pairs):
        found = reader.between("alice", [(URIRef(a), URIRef(b))])
        assert set(found.relates) == {r for r in whole if {r.source, r.target} == {a, b}}
        assert set(found.shares) == {s for s in shares if {s.source, s.target} == {a, b}}


def test_refresh_of_pages_and_sources(
    projection: KuzuProjection, world: World, scene: Scene
) -> None:
    page = URIRef(f"{ALICE.node_base}page/acme")
    acme = URIRef(entity(projection.rows("alice"), "Acme"))
    quads = [
        Quad(page, RDF.type, KGM.Page, ALICE.kg),
        Quad(page, KGM.pageOf, acme, ALICE.kg),
        Quad(page, KGM.path, Literal("entities/acme.md"), ALICE.kg),
        Quad(page, KGM.title, Literal("Acme"), ALICE.kg),
    ]
    world.store.commit(Changeset.of(quads))
    message = world.say("user", "Hello again.", chat="c2")
    projection.refresh("alice", [page, URIRef(message)])
    assert in_sync(projection)
    rows = projection.rows("alice")
    assert [(p.path, p.title) for p in rows.pages] == [("entities/acme.md", "Acme")]
    assert [(p.page, p.entity) for p in rows.page_of] == [(str(page), str(acme))]
    assert "c2" in {s.chat for s in rows.sources}
    world.store.commit(Changeset.of(remove=quads))
    projection.refresh("alice", [page])
    assert in_sync(projection)
    assert not projection.rows("alice").pages and not projection.rows("alice").page_of


def test_a_node_of_an_unknown_form_is_found_in_any_table(
    projection: KuzuProjection, world: World, scene: Scene
) -> None:
    """A refresh looks a node up only in the table its IRI's kind can be in; a page whose
    IRI is not one kgmem minted is looked for everywhere, so its removal still reaches the
    projection."""
    page = URIRef("urn:x:an-imported-page")
    quads = [
        Quad(page, RDF.type, KGM.Page, ALICE.kg),
        Quad(page, KGM.path, Literal("imported/page.md"), ALICE.kg),
        Quad(page, KGM.title, Literal("Imported"), ALICE.kg),
    ]
    world.store.commit(Changeset.of(quads))
    projection.refresh("alice", [page])
    assert [p.id for p in projection.rows("alice").pages] == [str(page)]
    world.store.commit(Changeset.of(remove=quads))
    projection.refresh("alice", [page])
    assert in_sync(projection)
    assert not projection.rows("alice").pages


def test_every_kind_of_node_kgmem_mints_has_its_projection_table() -> None:
    assert set(NODE_KINDS) == {kind.value for kind in NodeKind}
    tables = {t.name for t in NODES}
    assert {t for t in NODE_KINDS.values() if t is not None} == tables


def test_refresh_ignores_unknown_nodes_and_other_users(
    projection: KuzuProjection, scene: Scene
) -> None:
    before = projection.fingerprint("alice"), projection.fingerprint("bob")
    projection.refresh("alice", [scene.bob_memory, URIRef("urn:x:nothing"), self_entity("bob")])
    projection.refresh("alice", [])
    assert (projection.fingerprint("alice"), projection.fingerprint("bob")) == before


# -- neighbourhood ---------------------------------------------------------------------


def test_neighbourhood_one_and_two_hops(projection: KuzuProjection, scene: Scene) -> None:
    near = projection.neighbourhood("alice", ALICE_SELF, hops=1)
    # Globex is only named by the quarantined memory: no fact, no shared active memory
    assert {n.name: n.distance for n in near} == {"Acme": 1, "Carol": 1, "Initech": 1}
    two = {n.name: n for n in projection.neighbourhood("alice", ALICE_SELF, hops=2)}
    assert {name: n.distance for name, n in two.items()} == {
        "Acme": 1,
        "Carol": 1,
        "Initech": 1,
        "Bob": 2,
    }
    # one shortest path, walked whichever way its edges point: me - Acme - Bob
    walk = [ALICE_SELF, two["Acme"].entity, two["Bob"].entity]
    assert [{link.source, link.target} for link in two["Bob"].path] == [
        {walk[0], walk[1]},
        {walk[1], walk[2]},
    ]
    assert [n.distance for n in projection.neighbourhood("alice", ALICE_SELF, 2, limit=3)] == [
        1
    ] * 3
    assert projection.neighbourhood("alice", URIRef("urn:x:unknown"), hops=2) == []


def test_neighbourhood_reports_the_connecting_predicates(
    projection: KuzuProjection, scene: Scene
) -> None:
    carol = next(n for n in projection.neighbourhood("alice", ALICE_SELF) if n.name == "Carol")
    links = carol.path
    assert len(links) == 1
    if links[0].kind is LinkKind.RELATES:
        assert carol.predicates == (SDO.spouse,)
        assert links[0].memory == scene.spouse
    else:
        assert links[0].count == 1 and carol.predicates == ()


def test_neighbourhood_never_crosses_users(projection: KuzuProjection, scene: Scene) -> None:
    bob_self = self_entity("bob")
    alice_ids = {e.id for e in projection.rows("alice").entities}
    bob_ids = {e.id for e in projection.rows("bob").entities}
    assert bob_ids and not alice_ids & bob_ids
    for hops in (1, 2, 3):
        found = {str(n.entity) for n in projection.neighbourhood("alice", ALICE_SELF, hops=hops)}
        assert found and not found & bob_ids
    assert projection.neighbourhood("alice", bob_self, hops=3) == []
    assert projection.neighbourhood("bob", ALICE_SELF, hops=3) == []
    assert {n.name for n in projection.neighbourhood("bob", bob_self)} == {"Acme"}
    assert BOB.uid in projection.users()


def test_neighbourhood_refuses_out_of_range_hops(projection: KuzuProjection) -> None:
    with pytest.raises(ValueError, match="hops"):
        projection.neighbourhood("alice", ALICE_SELF, hops=4)
    with pytest.raises(ValueError, match="limit"):
        projection.neighbourhood("alice", ALICE_SELF, limit=0)
