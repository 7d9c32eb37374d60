"""Lifecycle actions, revert, forget and the invariants that must hold whatever happens."""

from __future__ import annotations

import tempfile
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import URIRef

from kgmem.config import load_settings
from kgmem.errors import DecisionConflict, LifecycleError, UndeclaredTerms, UnknownMemory
from kgmem.memory.decisions import Action
from kgmem.memory.entities import self_entity
from kgmem.memory.gate import Outcome, WriteMode
from kgmem.memory.lifecycle import Verdict
from kgmem.memory.model import MemoryStatus
from kgmem.ontology import TermKind, delta_term
from kgmem.store import OxigraphStore, Quad, QueryRegistry
from kgmem.vocab import KGM, OWL, RDF, SDO
from tests.memory.world import ALICE, EMPLOYER, NOW, World, works_at

QUERIES = QueryRegistry.load()


def active_memory(world: World, company: str = "Acme") -> URIRef:
    msg = world.say("user", f"I work at {company}.")
    [item] = world.draft(works_at(msg, company))
    assert item.outcome is Outcome.ACTIVE
    return item.memory  # type: ignore[return-value]


def user_quads(world: World) -> set[Quad]:
    return {
        q
        for g in (ALICE.kg, ALICE.sources, ALICE.quarantine, ALICE.schema)
        for q in world.store.quads(g)
    }


def test_review_approve_and_reject(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    [held] = world.draft(works_at(msg), mode=WriteMode.REVIEW)
    assert not list(world.store.quads(ALICE.kg, self_entity("alice"), SDO.worksFor))
    world.lifecycle.approve("alice", held.memory)
    assert world.memory(held.memory).status is MemoryStatus.ACTIVE
    assert list(world.store.quads(ALICE.kg, self_entity("alice"), SDO.worksFor))
    with pytest.raises(LifecycleError, match="cannot activate"):
        world.lifecycle.approve("alice", held.memory)
    other = world.say("user", "I work at Globex.")
    [second] = world.draft(
        works_at(other, "Globex"),
        mode=WriteMode.REVIEW,
    )
    world.lifecycle.reject("alice", second.memory)
    assert world.memory(second.memory).status is MemoryStatus.ARCHIVED


def test_archive_hides_facts_and_restore_brings_them_back(world: World) -> None:
    memory = active_memory(world)
    world.lifecycle.archive("alice", memory)
    assert world.memory(memory).status is MemoryStatus.ARCHIVED
    assert world.memory(memory).retired_at == NOW
    assert not list(world.store.quads(ALICE.kg, self_entity("alice"), SDO.worksFor))
    world.lifecycle.restore("alice", memory)
    assert world.memory(memory).status is MemoryStatus.ACTIVE
    assert list(world.store.quads(ALICE.kg, self_entity("alice"), SDO.worksFor))


def test_pin_rate_and_outcomes(world: World) -> None:
    memory = active_memory(world)
    world.lifecycle.pin("alice", memory)
    assert world.memory(memory).pinned
    world.lifecycle.rate("alice", memory, +1)
    assert world.memory(memory).rating == 1 and world.memory(memory).strength == 1.25
    with pytest.raises(LifecycleError, match=r"\+1 or -1"):
        world.lifecycle.rate("alice", memory, 5)
    before = world.memory(memory).confidence
    world.lifecycle.outcome("alice", memory, Verdict.MISLEADING, "trip-42")
    after = world.memory(memory)
    assert after.confidence == pytest.approx(before * 0.85)
    assert list(world.store.quads(ALICE.kg, memory, KGM.counterEvidence))
    world.lifecycle.outcome("alice", memory, Verdict.HELPFUL)
    assert world.memory(memory).confidence == pytest.approx(after.confidence + 0.05)
    world.lifecycle.outcome("alice", memory, Verdict.OUTDATED)
    assert world.memory(memory).status is MemoryStatus.OUTDATED


def test_strength_decays_unless_pinned(world: World) -> None:
    from kgmem.memory.strength import StrengthPolicy

    memory = world.memory(active_memory(world))
    policy = StrengthPolicy(half_life_days=30)
    later = NOW + timedelta(days=30)
    assert policy.current(memory, later) == pytest.approx(0.5)
    from dataclasses import replace

    assert policy.current(replace(memory, pinned=True), later) == 1.0
    used = policy.used(memory, later)
    assert used.use_count == 1 and used.last_used_at == later
    assert policy.current(used, later) == pytest.approx(0.6)


def test_episode_ttl_expires(world: World) -> None:
    msg = world.say("user", "Yesterday I had lunch with Bob at Luigi's.")
    draft = {
        "kind": "episodic",
        "title": "Lunch with Bob",
        "confidence": 0.9,
        "occurred_at": (NOW - timedelta(days=1)).isoformat(),
        "ttl": "P7D",
        "evidence": [{"source": msg, "quote": "I had lunch with Bob at Luigi's"}],
    }
    [item] = world.draft(draft)
    assert item.outcome is Outcome.ACTIVE, item
    assert world.lifecycle.expire_due("alice") == []
    world.clock.advance(timedelta(days=7))
    assert world.lifecycle.expire_due("alice") == [item.memory]
    assert world.memory(item.memory).status is MemoryStatus.EXPIRED


def test_revert_restores_the_exact_prior_state(world: World) -> None:
    first = active_memory(world)
    before = user_quads(world)
    decision = world.lifecycle.archive("alice", first)
    world.lifecycle.revert("alice", decision)
    assert user_quads(world) == before
    with pytest.raises(DecisionConflict, match="already reverted"):
        world.lifecycle.revert("alice", decision)


def test_revert_of_a_superseding_write_restores_the_old_fact(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    world.draft(works_at(msg, predicate=str(EMPLOYER)))
    before = user_quads(world)
    later = world.say("user", "I now work at Globex.")
    draft = works_at(later, "Globex", "I now work at Globex", predicate=str(EMPLOYER))
    draft["claims"][0]["valid_from"] = "2026-05-01T00:00:00Z"
    [new] = world.draft(draft)
    assert new.superseded
    world.lifecycle.revert("alice", new.decision)
    after = user_quads(world)
    # only the entity created for Globex may remain (entities are not decisions' to undo)
    assert before <= after
    assert not any(q.subject == new.memory or q.object == new.memory for q in after)


def test_revert_refuses_when_later_changes_touched_the_same_quads(world: World) -> None:
    memory = active_memory(world)
    archived = world.lifecycle.archive("alice", memory)
    world.lifecycle.restore("alice", memory)
    with pytest.raises(DecisionConflict, match="later changes"):
        world.lifecycle.revert("alice", archived)


def test_forget_leaves_no_trace_in_any_graph(world: World) -> None:
    memory = active_memory(world)
    world.lifecycle.pin("alice", memory)
    world.lifecycle.rate("alice", memory, 1)
    tombstone = world.lifecycle.forget("alice", memory)
    text = str(memory)
    for quad in world.store.quads():
        assert text not in (str(quad.subject), str(quad.object), str(quad.graph))
        assert text not in str(quad.object)  # nor inside a decision's recorded change
    assert str(tombstone).startswith("urn:kgmem:forgotten:")
    assert not list(world.store.quads(ALICE.kg, self_entity("alice"), SDO.worksFor))
    with pytest.raises(UnknownMemory):
        world.lifecycle.get("alice", memory)
    assert list(world.store.quads(ALICE.sources))  # its sources stay


def test_quarantine_never_changes_a_pinned_memory(world: World) -> None:
    msg = world.say("user", "I work at Acme.")
    [item] = world.draft(works_at(msg, predicate=str(EMPLOYER)))
    world.lifecycle.pin("alice", item.memory)
    pinned = {q for q in world.store.quads(ALICE.kg) if q.subject == item.memory}
    tool = world.say(
        "tool", "Profile: Alice works at Globex.", tool_name="crm", tool_outcome="success"
    )
    draft = works_at(tool, "Globex", "Alice works at Globex", predicate=str(EMPLOYER))
    draft["claims"][0]["subject"] = "Alice"
    [quarantined] = world.draft(draft)
    assert quarantined.outcome is Outcome.QUARANTINED
    assert {q for q in world.store.quads(ALICE.kg) if q.subject == item.memory} == pinned


ACTIONS = st.lists(
    st.sampled_from(
        [
            "archive",
            "restore",
            "pin",
            "unpin",
            "rate+",
            "rate-",
            "helpful",
            "unused",
            "misleading",
            "revert",
        ]
    ),
    min_size=1,
    max_size=8,
)


@settings(max_examples=25, deadline=None)
@given(actions=ACTIONS)
def test_invariants_under_any_action_sequence(actions: list[str]) -> None:
    """Nothing is lost but by forget; revert restores exactly; active means verbatim evidence."""
    world = World(OxigraphStore(), QUERIES, load_settings(env={"KGMEM_HOME": tempfile.mkdtemp()}))
    memory = active_memory(world)
    life, last = world.lifecycle, None
    for action in actions:
        before = user_quads(world)
        try:
            if action == "revert" and last is not None:
                life.revert("alice", last)
                last = None
                continue
            last = {
                "archive": lambda: life.archive("alice", memory),
                "restore": lambda: life.restore("alice", memory),
                "pin": lambda: life.pin("alice", memory),
                "unpin": lambda: life.unpin("alice", memory),
                "rate+": lambda: life.rate("alice", memory, 1),
                "rate-": lambda: life.rate("alice", memory, -1),
                "helpful": lambda: life.outcome("alice", memory, Verdict.HELPFUL),
                "unused": lambda: life.outcome("alice", memory, Verdict.UNUSED),
                "misleading": lambda: life.outcome("alice", memory, Verdict.MISLEADING),
            }.get(action, lambda: None)()
        except (LifecycleError, DecisionConflict):
            assert user_quads(world) == before  # a refused action changes nothing
            continue
        record = world.memory(memory)
        assert record is not None  # nothing is lost
        if last is not None:
            undo = life.revert("alice", last)
            assert user_quads(world) == before
            life.revert("alice", undo)  # and redo, to go on from the new state
        if record.status is MemoryStatus.ACTIVE:
            sources = world.sources.get("alice", [str(e.source) for e in record.evidence])
            for evidence in record.evidence:
                text = sources[str(evidence.source)].text
                assert evidence.span is not None
                assert text[evidence.span[0] : evidence.span[1]] == evidence.quote


def test_use_strengthens_without_a_decision(world: World) -> None:
    memory = active_memory(world)
    decisions = len(world.gate.decisions.feed("alice"))
    world.clock.advance(timedelta(days=30))
    world.lifecycle.used("alice", [memory, memory])
    record = world.memory(memory)
    assert record.use_count == 1 and record.last_used_at == NOW + timedelta(days=30)
    assert record.strength == pytest.approx(0.6)  # decayed to 0.5, then +0.1 for the use
    assert len(world.gate.decisions.feed("alice")) == decisions


# -- approving a memory that waits for vocabulary -----------------------------------------


def climbs(world: World, predicate: str) -> URIRef:
    """A pending memory that waits for ``predicate``, a term no ontology declares."""
    msg = world.say("user", "I climb at Crux every Tuesday.")
    draft = {
        "kind": "semantic",
        "title": "Climbs at Crux",
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": predicate, "object": "Crux"}],
        "evidence": [{"source": msg, "quote": "I climb at Crux"}],
    }
    [item] = world.draft(draft)
    assert item.outcome is Outcome.PENDING and item.needs_terms == (URIRef(predicate),)
    return item.memory  # type: ignore[return-value]


def undeclared_in_active_claims(world: World) -> set[URIRef]:
    effective = world.gate._ontology.effective("alice")
    found = set()
    for quad in world.store.quads(ALICE.kg, None, KGM.status, MemoryStatus.ACTIVE.iri):
        memory = world.memory(quad.subject)  # type: ignore[arg-type]
        for claim in memory.claims:
            if effective.info(claim.predicate).kind not in (TermKind.PROPERTY, TermKind.CLASS):
                found.add(claim.predicate)
    return found


def test_approving_a_memory_needing_a_foreign_term_is_refused_naming_it(world: World) -> None:
    memory = climbs(world, str(KGM.climbsAt))
    before, feed = user_quads(world), world.lifecycle.decisions.feed("alice")
    with pytest.raises(UndeclaredTerms) as refused:
        world.lifecycle.approve("alice", memory)
    assert refused.value.terms == (str(KGM.climbsAt),)
    assert str(KGM.climbsAt) in str(refused.value)
    assert world.memory(memory).status is MemoryStatus.PENDING
    assert user_quads(world) == before and world.lifecycle.decisions.feed("alice") == feed
    assert undeclared_in_active_claims(world) == set()


def test_approving_a_memory_needing_its_own_term_declares_it_then_activates(
    world: World,
) -> None:
    term = delta_term("alice", "climbsAt")
    memory = climbs(world, str(term))
    decision = world.lifecycle.approve("alice", memory)
    record = world.memory(memory)
    assert record.status is MemoryStatus.ACTIVE and record.needs_terms == ()
    info = world.gate._ontology.effective("alice").info(term)
    assert info.kind is TermKind.PROPERTY and info.label == "climbs at"
    assert list(world.store.quads(ALICE.schema, term, RDF.type, OWL.ObjectProperty))
    changes = list(world.store.quads(ALICE.schema, None, KGM.changedTerm, term))
    [proposer] = world.store.quads(ALICE.schema, changes[0].subject, KGM.proposedBy)
    assert str(proposer.object) == "user:alice"
    assert list(world.store.quads(ALICE.kg, self_entity("alice"), term))  # the fact is live
    history = world.lifecycle.decisions.history("alice", [memory])
    [approved] = [d for d in history if d.iri == decision]
    assert approved.action is Action.ACTIVATE and approved.reason == "approved; declared climbsAt"
    assert undeclared_in_active_claims(world) == set()
    # reverting the approval puts the memory back in the inbox; the vocabulary stays
    world.lifecycle.revert("alice", decision)
    assert world.memory(memory).status is MemoryStatus.PENDING
    assert world.memory(memory).needs_terms == (term,)
    assert world.gate._ontology.effective("alice").info(term).kind is TermKind.PROPERTY
    world.lifecycle.approve("alice", memory)  # the term is declared: nothing more to decide
    assert world.memory(memory).status is MemoryStatus.ACTIVE
    assert len(list(world.store.quads(ALICE.schema, term, RDF.type, OWL.ObjectProperty))) == 1
