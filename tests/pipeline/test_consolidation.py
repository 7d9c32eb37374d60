"""End to end: conversations in, consolidation passes with a scripted model, exact memory out.

Two sessions are ingested as real messages into a real on-disk store; each pass runs the nine
stages (extract with a scripted model that also lies, then the deterministic stages on the
write path's own code). The tests assert the exact entities, types, memories, evidence spans,
superseded history and quarantine that result, the reason each lie was refused, and that the
no-model mode turns queued agent drafts into the same memories.
"""

from __future__ import annotations

from datetime import timedelta

from rdflib import Literal

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.memory import Action
from kgmem.memory.entities import self_entity
from kgmem.memory.model import MemoryStatus
from kgmem.pipeline import ExtractClaims, PassStatus, StageName
from kgmem.pipeline.stages.reconcile import Reconciled
from kgmem.pipeline.stages.validate import Validated
from kgmem.pipeline.worklist import worklist
from kgmem.vocab import KGM, SDO
from tests.pipeline.passes import (
    JOB,
    SESSION_1,
    SESSION_2,
    T2,
    UID,
    G,
    consolidation,
    entity_named,
    known_hiker,
    memories,
    say,
    session_one_reply,
    types_of,
)
from tests.pipeline.scripted import ScriptedEngine, claim, claims_reply, quote


def test_two_sessions_consolidate_into_exact_memories(
    services: Services, clock: FixedClock
) -> None:
    engine = ScriptedEngine()
    pipeline = consolidation(services, engine)
    engine.add(ExtractClaims, session_one_reply())
    say(services, "c1", SESSION_1)
    clock.advance(timedelta(minutes=1))
    assert pipeline.consolidate(UID) == []  # the chat is not idle yet: nothing starts
    clock.advance(timedelta(minutes=10))
    [first] = pipeline.consolidate(UID)
    assert first.status is PassStatus.COMMITTED, first.error

    state = pipeline.checkpoints.state(UID, first.pass_id)
    dropped = {d.code for d in worklist(state).dropped}
    assert "quote_not_in_source" in dropped  # the invented quote
    assert "agent_only" in dropped  # the assistant's own words are not proof

    alice, acme = self_entity(UID), entity_named(services, "Acme")
    robert, paris = entity_named(services, "Robert"), entity_named(services, "Paris")
    assert types_of(services, acme) == {SDO.Organization}
    assert types_of(services, robert) == {SDO.Person}
    assert types_of(services, paris) == {SDO.Place}
    assert list(services.store.quads(G.kg, None, KGM.name, Literal("Initech"))) == []
    assert {q.object for q in services.store.quads(G.kg, alice, JOB)} == {acme}
    assert {q.object for q in services.store.quads(G.kg, alice, SDO.knows)} == {robert}
    assert {q.object for q in services.store.quads(G.kg, robert, SDO.homeLocation)} == {paris}

    after_one = memories(services)
    assert sorted(after_one) == [
        "Alice knows Robert",
        "Alice was born on 1990-03-12",
        "Alice works at Acme",
        "Robert lives in Paris",
    ]
    assert {m.status for m in after_one.values()} == {MemoryStatus.ACTIVE}
    text = SESSION_1[0][1]
    [evidence] = after_one["Alice works at Acme"].evidence
    assert evidence.span == (text.index("I work at Acme"), text.index("I work at Acme") + 14)
    assert evidence.quote == "I work at Acme"
    # pages for the changed entities
    pages = {q.object for q in services.store.quads(G.kg, None, KGM.pageOf)}
    assert {alice, acme, robert, paris} <= pages

    # the user pins their birthday; session 2 changes the job and a CRM disagrees on the birthday
    birthday = after_one["Alice was born on 1990-03-12"].iri
    services.lifecycle.pin(UID, birthday)
    clock.current = T2
    engine.add(
        ExtractClaims,
        claims_reply(
            claim(
                "user",
                "currentJobAt",
                quote("S1", "I now work at Globex"),
                object="Globex",
                statement="Alice works at Globex",
            ),
            claim(
                "Alice",
                "schema:birthDate",
                quote("S2", "Alice, born 1991-03-12"),
                value="1991-03-12",
                statement="Alice was born on 1991-03-12",
            ),
            # a paraphrase presented as a quote
            claim(
                "user",
                "currentJobAt",
                quote("S1", "I have joined Globex"),
                object="Globex",
                statement="Alice joined Globex",
            ),
        ),
    )
    say(services, "c2", SESSION_2)
    clock.advance(timedelta(minutes=10))
    [second] = pipeline.consolidate(UID)
    assert second.status is PassStatus.COMMITTED, second.error

    after_two = memories(services)
    old_job, new_job = after_two["Alice works at Acme"], after_two["Alice works at Globex"]
    assert old_job.status is MemoryStatus.SUPERSEDED and old_job.retired_at is not None
    assert new_job.status is MemoryStatus.ACTIVE and new_job.supersedes == (old_job.iri,)
    globex = entity_named(services, "Globex")
    assert {q.object for q in services.store.quads(G.kg, alice, JOB)} == {globex}

    crm = after_two["Alice was born on 1991-03-12"]
    assert crm.status is MemoryStatus.QUARANTINED and crm.graph == G.quarantine
    assert crm.contradicts == (birthday,)
    pinned = after_two["Alice was born on 1990-03-12"]
    assert pinned.status is MemoryStatus.ACTIVE and pinned.pinned
    assert pinned.confidence == after_one["Alice was born on 1990-03-12"].confidence
    assert "Alice joined Globex" not in after_two
    state = pipeline.checkpoints.state(UID, second.pass_id)
    assert "quote_not_in_source" in {d.code for d in worklist(state).dropped}


def test_without_a_model_queued_drafts_consolidate_and_transcripts_wait(
    services: Services, clock: FixedClock
) -> None:
    pipeline = consolidation(services, None)
    [work] = say(services, "c1", (SESSION_1[0],))
    clock.advance(timedelta(hours=1))
    assert pipeline.consolidate(UID) == []  # a transcript without a model waits
    drafts = [
        {
            "kind": "semantic",
            "title": "Alice works at Acme",
            "claims": [{"subject": "I", "predicate": str(JOB), "object": "Acme"}],
            "entities": [{"name": "Acme", "types": ["schema:Organization"]}],
            "evidence": [{"source": work, "quote": "I work at Acme"}],
        },
        {
            "kind": "semantic",
            "title": "Robert lives in Paris",
            "claims": [
                {"subject": "Robert", "predicate": "schema:homeLocation", "object": "Paris"}
            ],
            "evidence": [{"source": work, "quote": "Robert lives in Paris"}],
        },
        {  # an invented quote: refused at grounding, never stored
            "kind": "semantic",
            "title": "Alice works at Initech",
            "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": "Initech"}],
            "evidence": [{"source": work, "quote": "I work at Initech"}],
        },
    ]
    pipeline.queue(UID, drafts)
    [done] = pipeline.consolidate(UID)
    assert done.status is PassStatus.COMMITTED, done.error
    found = memories(services)
    assert sorted(found) == ["Alice works at Acme", "Robert lives in Paris"]
    assert all(m.status is MemoryStatus.ACTIVE for m in found.values())
    acme, paris = entity_named(services, "Acme"), entity_named(services, "Paris")
    assert types_of(services, acme) == {SDO.Organization}
    assert types_of(services, paris) == {SDO.Place}  # the range of schema:homeLocation
    state = pipeline.checkpoints.state(UID, done.pass_id)
    assert "quote_not_in_source" in {d.code for d in worklist(state).dropped}
    reconciled = Reconciled.model_validate(state.output(StageName.RECONCILE))
    assert len(reconciled.decided) == 2
    status = pipeline.status(UID)
    assert status.model is None and status.waiting_sources == 1 and status.waiting_drafts == 0


def test_validate_repairs_an_entity_typed_with_disjoint_classes(
    services: Services, clock: FixedClock
) -> None:
    pipeline = consolidation(services, None)
    [said] = say(services, "c1", (("user", "I met Mercury at the gallery."),))
    draft = {
        "kind": "semantic",
        "title": "Alice knows Mercury",
        "claims": [{"subject": "I", "predicate": "schema:knows", "object": "Mercury"}],
        "entities": [{"name": "Mercury", "types": ["schema:Person", "schema:Place"]}],
        "evidence": [{"source": said, "quote": "I met Mercury"}],
    }
    pipeline.queue(UID, [draft])
    [done] = pipeline.consolidate(UID)
    assert done.status is PassStatus.COMMITTED, done.error
    state = pipeline.checkpoints.state(UID, done.pass_id)
    validated = Validated.model_validate(state.output(StageName.VALIDATE))
    [repair] = validated.repaired
    assert repair.code == "repaired" and "schema.org/Person" in repair.message
    assert validated.rejected == ()
    mercury = entity_named(services, "Mercury")
    assert types_of(services, mercury) == set()  # neither of two contradicting types
    [memory] = memories(services).values()
    assert memory.status is MemoryStatus.ACTIVE


def test_a_draft_the_pass_refuses_is_one_decision_in_the_feed(
    services: Services, clock: FixedClock
) -> None:
    pipeline = consolidation(services, None)
    said, known = known_hiker(services)
    as_org = {  # the speaker of the cited message, typed as an organization: a clash
        **known,
        "title": "Nora Lind is in the Alps",
        "claims": [{"subject": "Nora Lind", "predicate": "schema:description", "value": "Alps"}],
        "entities": [{"name": "Nora Lind", "types": ["schema:Organization"]}],
        "evidence": [{"source": said, "quote": "I love hiking in the Alps"}],
    }
    pipeline.queue(UID, [as_org])
    [done] = pipeline.consolidate(UID)
    assert done.status is PassStatus.COMMITTED, done.error
    state = pipeline.checkpoints.state(UID, done.pass_id)
    [dropped] = Reconciled.model_validate(state.output(StageName.RECONCILE)).dropped
    assert dropped.code == "disjoint"
    refusals = [d for d in services.gate.decisions.feed(UID, 1000) if d.action is Action.REFUSE]
    [refusal] = refusals
    assert refusal.target is None and refusal.actor == "consolidation"
    assert refusal.reason == dropped.message
    assert refusal.draft is not None and refusal.draft.title == "Nora Lind is in the Alps"
    assert list(services.store.quads(G.ops, refusal.iri, KGM.inPass))
    assert "Nora Lind is in the Alps" not in memories(services)
