"""The batch view: pending changes laid over the store, read exactly as if committed."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import StoreOperationFailed
from kgmem.memory.entities import name_key, self_entity
from kgmem.memory.gate import Actor, WriteMode
from kgmem.memory.model import MemoryStatus
from kgmem.memory.overlay import BatchView
from kgmem.memory.records import claim_key
from kgmem.memory.view_queries import VIEW_QUERIES
from kgmem.store import Changeset, Quad, QueryRegistry, Row
from kgmem.vocab import KGM, RDF, SDO
from tests.memory.world import ALICE, World, works_at


def _rows(rows: Iterable[Row]) -> set[frozenset[tuple[str, object]]]:
    return {frozenset(r.items()) for r in rows}


def _bindings(world: World) -> list[tuple[str, Mapping[str, object]]]:
    """Bindings for every view query, from what the store holds."""
    kg, out = ALICE.kg, []
    for q in world.store.quads(kg, None, KGM.claimKey):
        claim = q.subject
        [subject] = [x.object for x in world.store.quads(kg, claim, KGM.subject)]
        [predicate] = [x.object for x in world.store.quads(kg, claim, KGM.predicate)]
        for status in (MemoryStatus.ACTIVE.iri, MemoryStatus.PENDING.iri):
            out.append(
                (
                    "memory/claims_about",
                    {"graph": kg, "status": status, "subject": subject, "predicate": predicate},
                )
            )
            out.append(
                ("memory/claims_with_value", {"graph": kg, "status": status, "key": q.object})
            )
            for held in (KGM.object, KGM.objectValue):
                for h in world.store.quads(kg, claim, held):
                    bound = {"graph": kg, "status": status, "predicate": predicate}
                    out.append(("memory/claims_holding", {**bound, "held": h.object}))
        out.append(("memory/asserting_memories", {"graph": kg, "key": q.object}))
    for q in world.store.quads(kg, None, KGM.nameKey):
        out.append(("memory/entities_by_key", {"graph": kg, "key": q.object}))
    missing = Literal(claim_key(self_entity("alice"), SDO.knows, URIRef("urn:x:nobody")))
    out.append(("memory/asserting_memories", {"graph": kg, "key": missing}))
    out.append(("memory/entities_by_key", {"graph": kg, "key": Literal(name_key("nobody"))}))
    assert {name for name, _ in out} == set(VIEW_QUERIES)
    return out


def _fill(world: World) -> None:
    acme = world.say("user", "I work at Acme and I like jazz.")
    jazz = works_at(acme)
    jazz["claims"].append({"subject": "I", "predicate": "kgm:likes", "value": "jazz"})
    jazz["evidence"].append({"source": acme, "quote": "I like jazz"})
    world.draft(jazz)
    agent = world.say("assistant", "You work at Globex.")
    world.draft(works_at(agent, "Globex", quote="work at Globex", confidence=0.5))  # refused
    world.draft(works_at(world.say("user", "I work at Initech."), "Initech"), mode=WriteMode.REVIEW)
    [pinned] = world.draft(works_at(world.say("user", "I work at Hooli."), "Hooli"))
    world.lifecycle.pin("alice", pinned.memory)
    rock = world.say("user", "I don't like rock.")
    dislike = {
        "kind": "semantic",
        "title": "Alice does not like rock",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "kgm:likes", "value": "rock", "negated": True}],
        "evidence": [{"source": rock, "quote": "I don't like rock"}],
    }
    [negated] = world.draft(dislike)
    assert negated.memory is not None, negated.reasons
    # a node that goes by an entity's name key but is no entity: entities_by_key leaves it out
    impostor = URIRef("urn:kgmem:test:not-an-entity")
    world.store.commit(
        Changeset.of(
            [
                Quad(impostor, KGM.nameKey, Literal(name_key("Acme")), ALICE.kg),
                Quad(impostor, KGM.name, Literal("Acme"), ALICE.kg),
                Quad(impostor, RDF.type, KGM.Memory, ALICE.kg),
            ]
        )
    )


def test_view_queries_give_the_rows_of_their_sparql(world: World, queries: QueryRegistry) -> None:
    _fill(world)
    view = BatchView(world.store)
    for name, bindings in _bindings(world):
        expected = world.store.select(queries[name], bindings)
        assert _rows(view.select(queries[name], bindings)) == _rows(expected), name


def test_view_queries_see_pending_changes_as_committed(
    world: World, queries: QueryRegistry
) -> None:
    _fill(world)
    view = BatchView(world.store)
    acme = world.say("user", "I still work at Acme, and I know Bob.")
    drafts = [
        works_at(acme),  # a restatement: new evidence on a stored memory
        {
            "kind": "semantic",
            "title": "Alice knows Bob",
            "confidence": 0.9,
            "claims": [{"subject": "I", "predicate": "schema:knows", "object": "Bob"}],
            "entities": [{"name": "Bob", "types": ["schema:Person"]}],
            "evidence": [{"source": acme, "quote": "I know Bob"}],
        },
    ]
    for index, payload in enumerate(world.gate.parse(drafts)):
        work = world.gate.decide(
            "alice", index, payload, Actor.AGENT, WriteMode.AUTONOMOUS, "Alice", store=view
        )
        view.apply(work.change_add, work.change_remove)
    pending = view.changeset()
    assert pending.add
    before = {
        (name, frozenset(b.items())): _rows(view.select(queries[name], b))
        for name, b in _bindings(world)
    }
    world.store.commit(pending)
    for name, bindings in _bindings(world):  # now with Bob's claim and entity too
        expected = _rows(world.store.select(queries[name], bindings))
        seen = before.get((name, frozenset(bindings.items())))
        if seen is not None:
            assert seen == expected, name


def test_view_quads_are_the_store_after_the_change(world: World) -> None:
    _fill(world)
    kg, me = ALICE.kg, self_entity("alice")
    view = BatchView(world.store)
    stored = list(world.store.quads(kg, me))
    gone, new = stored[0], Quad(me, KGM.alias, Literal("Ali"), kg)
    view.apply([new], [gone])
    view.apply([gone], [])  # removed, then added back: no change for it
    view.apply([Quad(me, KGM.alias, Literal("Al"), kg)], [])
    view.apply([], [Quad(me, KGM.alias, Literal("Al"), kg)])  # added, then removed
    assert view.changeset().add == (new,) and not view.changeset().remove
    assert set(view.quads(kg, me)) == {*stored, new}
    assert list(view.quads(kg, None, KGM.alias, Literal("Ali"))) == [new]
    assert not list(view.quads(kg, None, KGM.alias, Literal("Al")))
    assert list(world.store.quads(kg, me, KGM.alias, Literal("Ali"))) == []  # nothing written


def test_view_refuses_writes_and_queries_it_cannot_answer(
    world: World, queries: QueryRegistry
) -> None:
    view = BatchView(world.store)
    assert view.select(queries["memory/decisions"], {"graph": ALICE.ops}) == []  # nothing pending
    view.apply([Quad(self_entity("alice"), KGM.alias, Literal("Ali"), ALICE.kg)], [])
    with pytest.raises(StoreOperationFailed):
        view.select(queries["memory/decisions"], {"graph": ALICE.ops})
    with pytest.raises(StoreOperationFailed):
        view.commit(view.changeset())
