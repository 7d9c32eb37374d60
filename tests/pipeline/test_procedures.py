"""Procedures on the consolidation path (#23 i): the memory model proposes a routine it read in
a conversation as an extracted procedure; the pass grounds its steps and triggers with the
write gate's own code, and what holds becomes a procedural memory with ``kgm:Step`` steps in
order, its triggers, and the context packet's procedure. Invented or changed steps are
refused naming the step, and the refusal is in the decisions feed. The model is scripted
(and lies); store, grounding, gate and validation are real."""

from __future__ import annotations

from datetime import timedelta

import pytest

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.memory.decisions import Action, DecisionRecord
from kgmem.memory.model import MemoryKind, MemoryStatus
from kgmem.pipeline import ExtractClaims, PassRecord, PassStatus, StageName
from kgmem.pipeline.consolidation import Consolidation
from kgmem.pipeline.worklist import Dropped, worklist
from kgmem.vocab import KGM
from tests.pipeline.passes import UID, G, consolidation, memories, say
from tests.pipeline.scripted import ScriptedEngine, claims_reply, procedure, prompt_of, quote

SAID = (
    "Before painting, the rule is: fill the cracks, sand everything, wipe it down, "
    "then one coat of primer."
)
QUOTE = "fill the cracks, sand everything, wipe it down, then one coat of primer"
STEPS = ["fill the cracks", "sand everything", "wipe it down", "one coat of primer"]
TRIGGERS = ["before painting"]


def _pass(
    services: Services, clock: FixedClock, *procedures: dict[str, object]
) -> tuple[Consolidation, PassRecord]:
    engine = ScriptedEngine({ExtractClaims: [claims_reply(procedures=procedures)]})
    say(services, "reno", (("user", SAID), ("assistant", "Saved that prep routine.")))
    clock.advance(timedelta(minutes=10))
    pipeline = consolidation(services, engine)
    [record] = pipeline.consolidate(UID)
    assert record.status is PassStatus.COMMITTED, record.error
    return pipeline, record


def _dropped(pipeline: Consolidation, record: PassRecord) -> list[Dropped]:
    return list(worklist(pipeline.checkpoints.state(UID, record.pass_id)).dropped)


def _refusals(services: Services) -> list[DecisionRecord]:
    return [d for d in services.gate.decisions.feed(UID, 1000) if d.action is Action.REFUSE]


def test_an_extracted_procedure_becomes_a_procedural_memory_with_its_steps_in_order(
    services: Services, clock: FixedClock
) -> None:
    prep = procedure("Wall prep before painting", STEPS, quote("S1", QUOTE), triggers=TRIGGERS)
    pipeline, record = _pass(services, clock, prep)
    assert _dropped(pipeline, record) == []
    [memory] = memories(services).values()
    assert (memory.kind, memory.status) == (MemoryKind.PROCEDURAL, MemoryStatus.ACTIVE)
    assert list(memory.steps) == STEPS and list(memory.triggers) == TRIGGERS
    assert [e.quote for e in memory.evidence] == [QUOTE]
    nodes = list(services.store.quads(G.kg, memory.iri, KGM.step))
    assert len(nodes) == len(STEPS)  # kgm:Step nodes, as the gate writes them
    packet = services.retrieval.retrieve_memory(UID, "painting the kitchen walls", "execute")
    assert packet.procedure is not None and packet.procedure.id == str(memory.iri)
    assert list(packet.procedure.steps) == STEPS
    assert list(packet.procedure.triggers) == TRIGGERS
    assert _refusals(services) == []


@pytest.mark.parametrize(
    ("steps", "triggers", "support", "named"),
    [
        ([*STEPS[:3], "two coats of primer"], TRIGGERS, "explicit", "steps[3]"),
        ([*STEPS, "paint the ceiling"], TRIGGERS, "explicit", "steps[4]"),
        (STEPS, ["before painting at 20 degrees"], "explicit", "triggers[0]"),
        # a "derived" label exempts no step from the check
        ([STEPS[0], "sand everything twice", *STEPS[2:]], TRIGGERS, "derived", "steps[1]"),
    ],
    ids=["changed-number", "invented-step", "trigger-number", "derived-label"],
)
def test_a_changed_or_invented_step_is_refused_naming_it_and_the_refusal_is_in_the_feed(
    services: Services,
    clock: FixedClock,
    steps: list[str],
    triggers: list[str],
    support: str,
    named: str,
) -> None:
    lie = procedure("Wall prep", steps, quote("S1", QUOTE, support), triggers=triggers)
    pipeline, record = _pass(services, clock, lie)
    [dropped] = _dropped(pipeline, record)
    assert dropped.stage is StageName.GROUND and dropped.key.endswith("#p000")
    assert dropped.code == ("unstated_trigger" if named.startswith("t") else "unstated_step")
    assert named in dropped.message
    [refusal] = _refusals(services)
    assert refusal.target is None and refusal.actor == "consolidation"
    assert refusal.draft is not None
    assert (refusal.draft.title, refusal.draft.kind) == ("Wall prep", MemoryKind.PROCEDURAL)
    assert named in refusal.reason
    assert memories(services) == {}
    assert list(services.store.quads(G.kg, None, KGM.instruction)) == []  # no step anywhere


def test_a_true_procedure_and_a_lie_in_one_answer_are_decided_each_on_its_own(
    services: Services, clock: FixedClock
) -> None:
    true = procedure("Wall prep before painting", STEPS, quote("S1", QUOTE), triggers=TRIGGERS)
    lie = procedure("Primer", ["two coats of primer"], quote("S1", QUOTE))
    pipeline, record = _pass(services, clock, true, lie)
    assert [d.key.rpartition("#")[2] for d in _dropped(pipeline, record)] == ["p001"]
    [memory] = memories(services).values()
    assert memory.title == "Wall prep before painting" and list(memory.steps) == STEPS
    [refusal] = _refusals(services)
    assert refusal.draft is not None and refusal.draft.title == "Primer"


def test_the_model_is_told_it_may_propose_procedures(services: Services, clock: FixedClock) -> None:
    engine = ScriptedEngine({ExtractClaims: [claims_reply()]})
    say(services, "reno", (("user", SAID),))
    clock.advance(timedelta(minutes=10))
    [record] = consolidation(services, engine).consolidate(UID)
    assert record.status is PassStatus.COMMITTED, record.error
    [request] = engine.calls(ExtractClaims)
    prompt = prompt_of(request)
    assert "`procedures`" in prompt and "never add a step" in prompt
    assert '"steps"' in prompt and '"triggers"' in prompt  # the JSON schema it answers in
