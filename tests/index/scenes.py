"""A small shared world for projection tests, and what a change touched.

Alice works at Acme with Bob, is married to Carol (schema:spouse is symmetric in the
starter ontology, so the projection infers the reverse fact), has a pending memory and a
quarantined one. Bob, another user, also works at an "Acme" of his own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rdflib import URIRef

from kgmem.memory.entities import self_entity
from kgmem.memory.gate import Outcome
from kgmem.memory.source_inputs import MessageIn
from kgmem.store import Quad, TripleStore, UserGraphs
from tests.memory.world import EMPLOYER, World, works_at

BOB = UserGraphs("bob")


@dataclass(frozen=True)
class Scene:
    acme: URIRef  # alice's memory: she works at Acme
    colleague: URIRef  # Bob (alice's entity) works at Acme
    spouse: URIRef  # alice is married to Carol
    pending: URIRef
    quarantined: URIRef
    bob_memory: URIRef  # user bob works at his own Acme


def _memory(items: list[Any], outcome: Outcome) -> URIRef:
    [item] = items
    assert item.outcome is outcome, item
    assert isinstance(item.memory, URIRef)
    return item.memory


def person_claim(source: str, subject: str, predicate: str, obj: str, quote: str) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": f"{subject} {predicate} {obj}",
        "confidence": 0.9,
        "claims": [{"subject": subject, "predicate": predicate, "object": obj}],
        "entities": [{"name": n, "types": ["schema:Person"]} for n in (subject, obj) if n != "I"],
        "evidence": [{"source": source, "quote": quote}],
    }


def bob_works_at_acme(world: World) -> URIRef:
    msg = MessageIn(chat="b1", turn=0, role="user", text="I work at Acme.")
    source = str(world.sources.ingest_message("bob", msg).iri)
    items = world.gate.draft("bob", [works_at(source)], account_name="Bob").items
    return _memory(list(items), Outcome.ACTIVE)


def build_scene(world: World) -> Scene:
    msg = world.say("user", "I work at Acme. Bob works at Acme too. I am married to Carol.")
    acme = _memory(world.draft(works_at(msg)), Outcome.ACTIVE)
    colleague = works_at(msg, quote="Bob works at Acme")
    colleague["claims"][0]["subject"] = "Bob"
    colleague["entities"].append({"name": "Bob", "types": ["schema:Person"]})
    bob_at_acme = _memory(world.draft(colleague), Outcome.ACTIVE)
    spouse = person_claim(msg, "I", "schema:spouse", "Carol", "I am married to Carol")
    married = _memory(world.draft(spouse), Outcome.ACTIVE)
    tool = world.say("tool", "CRM: Alice knows Dave.", tool_name="crm", tool_outcome="success")
    likes = person_claim(tool, "Alice", "schema:knows", "Dave", "Alice knows Dave")
    likes["confidence"] = 0.5
    pending = _memory(world.draft(likes), Outcome.PENDING)
    return Scene(acme, bob_at_acme, married, pending, _quarantined(world), bob_works_at_acme(world))


def _quarantined(world: World) -> URIRef:
    msg = world.say("user", "My job is at Initech.")
    [item] = world.draft(works_at(msg, "Initech", "My job is at Initech", predicate=str(EMPLOYER)))
    world.lifecycle.pin("alice", item.memory)
    tool = world.say(
        "tool", "Profile: Alice works at Globex.", tool_name="crm", tool_outcome="success"
    )
    draft = works_at(tool, "Globex", "Alice works at Globex", predicate=str(EMPLOYER))
    draft["claims"][0]["subject"] = "Alice"
    return _memory(world.draft(draft), Outcome.QUARANTINED)


def snapshot(store: TripleStore, uid: str = "alice") -> set[Quad]:
    graphs = UserGraphs(uid)
    return {q for g in (graphs.kg, graphs.sources, graphs.quarantine) for q in store.quads(g)}


def changed_nodes(store: TripleStore, before: set[Quad], uid: str = "alice") -> set[URIRef]:
    """The subjects of every quad added or removed since ``before`` (what an outbox lists)."""
    return {q.subject for q in snapshot(store, uid) ^ before if isinstance(q.subject, URIRef)}


ALICE_SELF = self_entity("alice")
