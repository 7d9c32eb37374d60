"""Every way the memory model lies, through a whole consolidation pass: each lie is caught
at the stage whose job it is, with a reason recorded in the pass, and none becomes an active
memory. The model is scripted; everything else (store, grounding, gate, validation) is real."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from dspy.lm15 import Request
from rdflib import Literal

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.memory.decider import Actor, Outcome
from kgmem.memory.model import MemoryStatus
from kgmem.memory.records import MemoryRecord
from kgmem.memory.source_inputs import MessageIn
from kgmem.ontology import delta_term
from kgmem.pipeline import (
    AssembleTerms,
    ClassifyTerm,
    Consolidation,
    ExtractClaims,
    PassRecord,
    PassStatus,
    StageName,
    Worklist,
)
from kgmem.pipeline.stages.reconcile import Reconciled
from kgmem.pipeline.stages.validate import Validated
from kgmem.pipeline.worklist import Dropped, worklist
from kgmem.vocab import KGM, RDF, SDO
from tests.pipeline.passes import (
    UID,
    G,
    consolidation,
    entity_named,
    memories,
    say,
)
from tests.pipeline.scripted import (
    BROKEN_JSON,
    ScriptedEngine,
    claim,
    claims_reply,
    prompt_of,
    quote,
    reply,
)


def _pass(
    services: Services, clock: FixedClock, engine: ScriptedEngine, *turns: tuple[str, str]
) -> tuple[Consolidation, PassRecord]:
    say(services, f"c{clock.now().timestamp():.0f}", turns)
    clock.advance(timedelta(minutes=10))
    pipeline = consolidation(services, engine)
    [record] = pipeline.consolidate(UID)
    return pipeline, record


def _dropped(pipeline: Consolidation, record: PassRecord) -> list[Dropped]:
    assert record.status is PassStatus.COMMITTED, record.error
    return list(worklist(pipeline.checkpoints.state(UID, record.pass_id)).dropped)


def _for(text: str, said: str) -> Callable[[Request], str]:
    """A reply for the segment that contains ``text``; nothing for any other segment (the
    chat a foreground memory was set up from is consolidated in the same pass)."""
    return lambda request: said if text in prompt_of(request) else claims_reply()


def _foreground(services: Services, text: str, **draft: Any) -> MemoryRecord:
    msg = say(services, "setup", (("user", text),))[0]
    payload = {"kind": "semantic", "confidence": 0.9, **draft}
    payload["evidence"] = [{"source": msg, "quote": q} for q in draft["evidence"]]
    [item] = services.gate.draft(UID, [payload], actor=Actor.PERSON).items
    assert item.outcome is Outcome.ACTIVE, item.reasons
    assert item.memory is not None
    return memories(services)[payload["title"]]


def test_broken_json_fails_the_extract_stage_and_parks_the_pass(
    services: Services, clock: FixedClock
) -> None:
    engine = ScriptedEngine({ExtractClaims: [BROKEN_JSON]})
    _, record = _pass(services, clock, engine, ("user", "I work at Acme."))
    assert record.status is PassStatus.PARKED and record.error_stage is StageName.EXTRACT
    assert record.error_type == "ModelOutputError"
    assert memories(services) == {}


@pytest.mark.parametrize(
    ("lie", "code"),
    [
        (quote("S1", "I have worked at Initech"), "quote_not_in_source"),  # invented
        (quote("S1", "I am employed by Initech"), "quote_not_in_source"),  # a paraphrase
    ],
)
def test_invented_and_paraphrased_quotes_are_dropped_at_ground(
    services: Services, clock: FixedClock, lie: dict[str, str], code: str
) -> None:
    said = claims_reply(claim("user", "schema:worksFor", lie, object="Initech"))
    engine = ScriptedEngine({ExtractClaims: [said]})
    pipeline, record = _pass(services, clock, engine, ("user", "I work for Initech now."))
    [dropped] = [d for d in _dropped(pipeline, record) if "/claim" not in d.key]
    assert (dropped.stage, dropped.code) == (StageName.GROUND, code)
    assert "verbatim" in dropped.message
    assert memories(services) == {}


def test_a_recall_tool_echo_is_dropped_at_extract(services: Services, clock: FixedClock) -> None:
    said = claims_reply(
        claim("user", "schema:worksFor", quote("S2", "the user works at Initech"), object="Initech")
    )
    engine = ScriptedEngine({ExtractClaims: [said]})
    say(services, "echo", (("user", "Where do I work?"),))
    recall = {"tool_name": "memory_search", "tool_outcome": "success"}
    services.sources.ingest_message(
        UID, _tool_message("echo", 1, "Memory: the user works at Initech.", recall)
    )
    clock.advance(timedelta(minutes=10))
    pipeline = consolidation(services, engine)
    [record] = pipeline.consolidate(UID)
    [dropped] = _dropped(pipeline, record)
    assert (dropped.stage, dropped.code) == (StageName.EXTRACT, "source_not_shown")
    prompt = engine.calls(ExtractClaims)[0]
    assert "Initech" not in str(prompt.messages)  # the model was never shown the echo
    assert memories(services) == {}


def _tool_message(chat: str, turn: int, text: str, extra: dict[str, Any]) -> MessageIn:
    return MessageIn(chat=chat, turn=turn, role="tool", text=text, **extra)


def test_an_undeclared_type_with_a_bad_parent_is_deferred_at_assemble(
    services: Services, clock: FixedClock
) -> None:
    said = claims_reply(
        claim("Robert", "rdf:type", quote("S1", "Robert is a dragonrider"), object="Dragonrider")
    )
    patch = {
        "decisions": [
            {"surface": "Dragonrider", "action": "declare", "label": "dragonrider",
             "parent": "schema:Wizard", "reason": "a kind of person"},
        ]
    }  # fmt: skip
    engine = ScriptedEngine({ExtractClaims: [said], AssembleTerms: [reply(patch=patch)]})
    pipeline, record = _pass(services, clock, engine, ("user", "Robert is a dragonrider."))
    state = pipeline.checkpoints.state(UID, record.pass_id)
    assembled = Worklist.of(state.output(StageName.ASSEMBLE))
    [decision] = assembled.decisions
    assert decision.action == "defer" and "schema:Wizard" in decision.reason
    term = delta_term(UID, "Dragonrider")
    assert [d.deferred_terms for d in assembled.drafts] == [(str(term),)]
    [memory] = memories(services).values()
    assert memory.status is MemoryStatus.PENDING  # waits for a vocabulary decision
    assert list(services.store.quads(G.kg, memory.iri, KGM.needsTerm, term))  # proposed
    assert not list(services.store.quads(G.schema, term, None))  # never silently declared


def test_the_same_person_under_two_names_is_one_entity_at_resolve(
    services: Services, clock: FixedClock
) -> None:
    _foreground(
        services,
        "Robert, Bob to his friends, is my neighbour.",
        title="Robert is a neighbour",
        claims=[{"subject": "I", "predicate": "schema:knows", "object": "Robert"}],
        entities=[{"name": "Robert", "types": ["schema:Person"], "aliases": ["Bob"]}],
        evidence=["Robert, Bob to his friends, is my neighbour"],
    )
    text = "Bob is a dentist."
    said = claims_reply(
        claim("Robert", "schema:jobTitle", quote("S1", "Bob is a dentist"), value="dentist"),
        claim("Bob", "schema:jobTitle", quote("S1", "Bob is a dentist"), value="dentist"),
    )
    engine = ScriptedEngine({ExtractClaims: [_for(text, said)] * 2})
    pipeline, record = _pass(services, clock, engine, ("user", text))
    state = pipeline.checkpoints.state(UID, record.pass_id)
    bound = {b.iri for d in worklist(state).drafts for b in d.bindings.values()}
    robert = entity_named(services, "Robert")
    assert bound == {str(robert)}  # both names resolve to the one person
    assert list(services.store.quads(G.kg, None, KGM.name, Literal("Bob"))) == []
    jobs = [q for q in services.store.quads(G.kg, robert, SDO.jobTitle)]
    assert [str(q.object) for q in jobs] == ["dentist"]


def test_a_claim_contradicting_a_pinned_fact_is_quarantined_at_reconcile(
    services: Services, clock: FixedClock
) -> None:
    pinned = _foreground(
        services,
        "My birthday is 12 March 1990.",
        title="Alice was born on 1990-03-12",
        claims=[{"subject": "I", "predicate": "schema:birthDate", "value": "1990-03-12"}],
        evidence=["My birthday is 12 March 1990"],
    )
    services.lifecycle.pin(UID, pinned.iri)
    said = claims_reply(
        claim("Alice", "schema:birthDate", quote("S1", "Alice, born 1991-03-12"),
              value="1991-03-12", statement="Alice was born on 1991-03-12"),
    )  # fmt: skip
    engine = ScriptedEngine({ExtractClaims: [_for("CRM record", said)] * 2})
    crm = {"tool_name": "crm", "tool_outcome": "success"}
    services.sources.ingest_message(
        UID, _tool_message("crm", 0, "CRM record: Alice, born 1991-03-12.", crm)
    )
    clock.advance(timedelta(minutes=10))
    pipeline = consolidation(services, engine)
    [record] = pipeline.consolidate(UID)
    assert record.status is PassStatus.COMMITTED
    state = pipeline.checkpoints.state(UID, record.pass_id)
    [decided] = state.output(StageName.RECONCILE)["decided"]  # type: ignore[index]
    assert decided["outcome"] == "quarantined"
    found = memories(services)
    assert found["Alice was born on 1991-03-12"].graph == G.quarantine
    assert found["Alice was born on 1990-03-12"].confidence == pinned.confidence


def test_an_alias_counts_only_when_a_quote_gives_it_with_the_name(
    services: Services, clock: FixedClock
) -> None:
    text = "My neighbour Robert, Bob to his friends, is a dentist."
    said = claims_reply(
        claim(
            "Robert",
            "schema:jobTitle",
            quote("S1", "Robert, Bob to his friends, is a dentist"),
            value="dentist",
            subject_aliases=["Bob", "Rob the Builder"],
        )
    )
    engine = ScriptedEngine({ExtractClaims: [said]})
    pipeline, record = _pass(services, clock, engine, ("user", text))
    [dropped] = _dropped(pipeline, record)
    assert (dropped.stage, dropped.code) == (StageName.EXTRACT, "unsupported_alias")
    assert "Rob the Builder" in dropped.message
    robert = entity_named(services, "Robert")
    aliases = {str(q.object) for q in services.store.quads(G.kg, robert, KGM.alias)}
    assert aliases == {"Bob"}
    # a later conversation naming him only by the alias lands on the same entity
    later = claims_reply(
        claim("Bob", "schema:worksFor", quote("S1", "Bob works at Globex"), object="Globex")
    )
    engine.add(ExtractClaims, later)
    clock.advance(timedelta(days=1))
    _, second = _pass(services, clock, engine, ("user", "Bob works at Globex now."))
    assert second.status is PassStatus.COMMITTED, second.error
    employers = {q.object for q in services.store.quads(G.kg, robert, SDO.worksFor)}
    assert employers == {entity_named(services, "Globex")}
    assert list(services.store.quads(G.kg, None, KGM.name, Literal("Bob"))) == []


def _speaker_says(services: Services, chat: str, speaker: str, text: str) -> str:
    """``speaker`` says ``text`` in a group chat the user (Alice) opened: ``speaker`` is
    someone else (the one human of a chat would be the user, whatever the host calls them)."""
    opening = MessageIn(chat=chat, turn=0, role="user", text="Morning all.", speaker="Alice")
    services.sources.ingest_message(UID, opening)
    msg = MessageIn(chat=chat, turn=1, role="user", text=text, speaker=speaker)
    return str(services.sources.ingest_message(UID, msg).iri)


def _knows_bea_hart(services: Services) -> None:
    """A grounded, active memory that the user knows Bea Hart, a Person."""
    _foreground(
        services,
        "Bea Hart is my neighbour.",
        title="Alice knows Bea Hart",
        claims=[{"subject": "I", "predicate": "schema:knows", "object": "Bea Hart"}],
        entities=[{"name": "Bea Hart", "types": ["schema:Person"]}],
        evidence=["Bea Hart is my neighbour"],
    )


def test_a_relation_to_a_known_person_against_its_range_is_rejected_at_validate(
    services: Services, clock: FixedClock
) -> None:
    _knows_bea_hart(services)
    text = "I work for Bea Hart."
    said = claims_reply(
        claim("user", "schema:worksFor", quote("S1", "I work for Bea Hart"), object="Bea Hart")
    )
    engine = ScriptedEngine({ExtractClaims: [_for(text, said)] * 2})
    pipeline, record = _pass(services, clock, engine, ("user", text))
    assert record.status is PassStatus.COMMITTED, record.error
    state = pipeline.checkpoints.state(UID, record.pass_id)
    [rejected] = Validated.model_validate(state.output(StageName.VALIDATE)).rejected
    assert "cannot be a https://schema.org/Organization" in rejected.message
    bea = entity_named(services, "Bea Hart")  # one Bea Hart: no organization of her name
    assert {q.object for q in services.store.quads(G.kg, bea, RDF.type)} == {
        KGM.Entity,
        SDO.Person,
    }
    assert list(memories(services)) == ["Alice knows Bea Hart"]


def test_a_known_person_typed_an_organization_in_her_own_words_is_refused_at_reconcile(
    services: Services, clock: FixedClock
) -> None:
    setup = _speaker_says(services, "setup", "Ada Moss", "I work at Lumen Labs.")
    payload = {
        "kind": "semantic",
        "title": "Ada Moss works at Lumen Labs",
        "confidence": 0.9,
        "claims": [{"subject": "Ada Moss", "predicate": "schema:worksFor", "object": "Lumen Labs"}],
        "entities": [
            {"name": "Ada Moss", "types": ["schema:Person"]},
            {"name": "Lumen Labs", "types": ["schema:Organization"]},
        ],
        "evidence": [{"source": setup, "quote": "I work at Lumen Labs"}],
    }
    [item] = services.gate.draft(UID, [payload], actor=Actor.PERSON).items
    assert item.outcome is Outcome.ACTIVE, item.reasons
    text = "Ada Moss is an organization, on paper."
    said = claims_reply(
        claim(
            "Ada Moss",
            "rdf:type",
            quote("S2", "Ada Moss is an organization"),
            object="organization",
        )
    )
    organization = reply(choice={"term": "schema:Organization", "reason": "the label"})
    engine = ScriptedEngine({ExtractClaims: [_for(text, said)] * 2, ClassifyTerm: [organization]})
    _speaker_says(services, "typed", "Ada Moss", text)
    clock.advance(timedelta(minutes=10))
    pipeline = consolidation(services, engine)
    [record] = pipeline.consolidate(UID)
    assert record.status is PassStatus.COMMITTED, record.error
    state = pipeline.checkpoints.state(UID, record.pass_id)
    [dropped] = Reconciled.model_validate(state.output(StageName.RECONCILE)).dropped
    assert dropped.code == "disjoint" and "disjoint" in dropped.message
    ada = entity_named(services, "Ada Moss")  # never a second Ada Moss, never a retype
    assert {q.object for q in services.store.quads(G.kg, ada, RDF.type)} == {
        KGM.Entity,
        SDO.Person,
    }
    assert list(memories(services)) == ["Ada Moss works at Lumen Labs"]


def test_a_deferred_draft_is_queued_with_the_types_it_states_only(
    services: Services, clock: FixedClock
) -> None:
    _knows_bea_hart(services)
    text = "I work for Bea Hart."
    twice = claim("user", "schema:worksFor", quote("S1", "I work for Bea Hart"), object="Bea Hart")
    engine = ScriptedEngine({ExtractClaims: [_for(text, claims_reply(twice, twice))] * 2})
    pipeline, first = _pass(services, clock, engine, ("user", text))
    state = pipeline.checkpoints.state(UID, first.pass_id)
    [waiting] = Reconciled.model_validate(state.output(StageName.RECONCILE)).deferred
    assert waiting.inferred == {"bea hart": (str(SDO.Organization),)}
    # the next pass classifies the queued draft afresh: the Organization is inferred again,
    # never taken for a type the draft states (which would make a namesake organization)
    [second] = pipeline.consolidate(UID, now=True)
    assert second.status is PassStatus.COMMITTED, second.error
    state = pipeline.checkpoints.state(UID, second.pass_id)
    [rejected] = Validated.model_validate(state.output(StageName.VALIDATE)).rejected
    assert "cannot be a https://schema.org/Organization" in rejected.message
    entity_named(services, "Bea Hart")  # still one Bea Hart
    assert list(memories(services)) == ["Alice knows Bea Hart"]


def test_an_answer_typing_a_mention_against_its_own_claim_is_refused_at_classify(
    services: Services, clock: FixedClock
) -> None:
    text = "Lumen Labs was founded on 12 March 1990."
    said = quote("S1", "Lumen Labs was founded on 12 March 1990")
    engine = ScriptedEngine(
        {
            ExtractClaims: [
                claims_reply(
                    claim("Lumen Labs", "schema:birthDate", said, value="1990-03-12"),
                    claim("Lumen Labs", "rdf:type", said, object="schema:Organization"),
                )
            ]
        }
    )
    pipeline, record = _pass(services, clock, engine, ("user", text))
    dropped = {d.key.rpartition("#")[2]: d for d in _dropped(pipeline, record)}
    # no quote states the typing, so it is no fact; but the answer that says Lumen Labs is an
    # organization cannot also give it a birth date (schema:birthDate's domain is Person)
    assert (dropped["001"].stage, dropped["001"].code) == (
        StageName.GROUND,
        "quote_does_not_state_value",
    )
    born = dropped["000"]
    assert (born.stage, born.code) == (StageName.CLASSIFY, "self_contradictory_type")
    assert "schema:Person" in born.message and "schema:Organization" in born.message
    assert memories(services) == {}
    assert list(services.store.quads(G.kg, None, KGM.name, Literal("Lumen Labs"))) == []
