"""The assemble stage on a real store: a scripted model decides the pass's undeclared terms,
deterministic checks and the ontology's own planner keep it honest, drafts follow."""

from __future__ import annotations

from typing import Any

import pytest

from kgmem.config import Settings
from kgmem.errors import ModelOutputError
from kgmem.memory.model import EntityDraft
from kgmem.ontology import (
    Amend,
    DeclareClass,
    DeclareProperty,
    TermKind,
    TermStatus,
    delta_term,
)
from kgmem.pipeline import (
    AssembleTerms,
    PassContext,
    PassState,
    Stage,
    StageName,
    TermDecision,
)
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.stages.assemble import (
    NO_DECISION,
    NO_MODEL,
    PROPOSER,
    AssembleStage,
    delta_patch,
)
from kgmem.pipeline.stages.classify import ClassifyStage
from kgmem.pipeline.worklist import EntityBinding, PassDraft, Worklist, worklist
from kgmem.store import OxigraphStore, QueryRegistry
from kgmem.vocab import SDO
from tests.pipeline.scripted import ScriptedEngine, prompt_of, reply, scripted_lm
from tests.pipeline.test_classify import (
    NOW,
    SEAT_CHOICE,
    UID,
    context,
    item,
    make_ports,
    rel,
    val,
    with_model,
)

PREFERS_SEAT = str(delta_term(UID, "prefersSeat"))
SEAT_PREFERENCE = str(delta_term(UID, "seatPreference"))
EMPLOYED_AT = str(delta_term(UID, "employedAt"))
VEGAN_CAFE = str(delta_term(UID, "VeganCafe"))
FAVOURITE_SEAT = str(delta_term(UID, "favouriteSeat"))


@pytest.fixture
def ports(store: OxigraphStore, queries: QueryRegistry, settings: Settings) -> PassPorts:
    return make_ports(store, queries, settings)


@pytest.fixture
def ctx(store: OxigraphStore, queries: QueryRegistry, settings: Settings) -> PassContext:
    return context(store, queries, settings)


def drafts() -> tuple[PassDraft, ...]:
    cafe = (EntityDraft(name="Green Leaf", types=("vegan cafe",)),)
    return (
        item("a", val("user", "prefers seat", "window")),
        item("b", val("user", "seat preference", "aisle")),
        item("c", rel("user", "employed at", "Acme")),
        item("d", rel("user", "likes", "Green Leaf"), entities=cafe),
    )


def classified(ports: PassPorts, ctx: PassContext, *items: PassDraft) -> PassState:
    """The state after ground and classify (classify without a model)."""
    state = PassState().with_output(StageName.GROUND, Worklist(drafts=items).to_json())
    stage = ClassifyStage(ports)
    results = {key: stage.run_item(ctx, state, key) for key in stage.items(ctx, state)}
    return state.with_items(StageName.CLASSIFY, results)


def assemble(ports: PassPorts, ctx: PassContext, state: PassState) -> Worklist:
    after = AssembleStage(ports).run(ctx, state)
    return Worklist.of(after.output(StageName.ASSEMBLE))


def patch(*decisions: dict[str, Any]) -> str:
    return reply(patch={"decisions": list(decisions)})


def decide(surface: str, action: str, **fields: str) -> dict[str, Any]:
    return {"surface": surface, "action": action, **fields}


def decided(work: Worklist) -> dict[str, TermDecision]:
    return {d.surface: d for d in work.decisions}


def predicate(work: Worklist, key: str) -> str:
    return work.draft(key).draft.claims[0].predicate


GOOD = patch(
    decide("prefersSeat", "declare", label="prefers seat", domain="schema:Person"),
    decide("seatPreference", "merge", target="prefersSeat"),
    decide("employedAt", "align", target="schema:worksFor"),
    decide("VeganCafe", "declare", label="vegan cafe", parent="schema:Restaurant"),
)


def test_assemble_declares_aligns_and_merges_and_rewrites_the_drafts(
    ports: PassPorts, ctx: PassContext
) -> None:
    engine = ScriptedEngine({AssembleTerms: [GOOD]})
    work = assemble(with_model(ports, engine), ctx, classified(ports, ctx, *drafts()))
    assert len(engine.calls(AssembleTerms)) == 1  # every term in one call
    assert predicate(work, "a") == PREFERS_SEAT  # declared: the placeholder stays
    assert predicate(work, "b") == PREFERS_SEAT  # merged into the declared term
    assert predicate(work, "c") == str(SDO.worksFor)  # aligned to the existing term
    assert VEGAN_CAFE in work.draft("d").draft.entities[0].types
    assert all(not d.deferred_terms for d in work.drafts)
    by_surface = decided(work)
    assert [d.action for d in work.decisions] == ["declare", "merge", "align", "declare"]
    assert by_surface["seatPreference"].target == PREFERS_SEAT
    assert by_surface["VeganCafe"].parent == str(SDO.Restaurant)  # CURIEs in full


def test_assemble_shows_the_model_every_term_with_its_uses_and_candidates(
    ports: PassPorts, ctx: PassContext
) -> None:
    engine = ScriptedEngine({AssembleTerms: [GOOD]})
    assemble(with_model(ports, engine), ctx, classified(ports, ctx, *drafts()))
    shown = prompt_of(engine.calls(AssembleTerms)[0])
    for surface in ("prefersSeat", "seatPreference", "employedAt", "VeganCafe"):
        assert f'"surface": "{surface}"' in shown
    assert "user | employedAt | Acme" in shown
    assert "Green Leaf is a VeganCafe" in shown
    assert "schema:worksFor" in shown  # a candidate of employedAt


def test_delta_patch_of_the_decisions_plans_cleanly(ports: PassPorts, ctx: PassContext) -> None:
    engine = ScriptedEngine({AssembleTerms: [GOOD]})
    work = assemble(with_model(ports, engine), ctx, classified(ports, ctx, *drafts()))
    found = delta_patch(UID, work, NOW)
    assert found is not None
    assert found.provenance.proposer == PROPOSER
    assert found.ops == (
        DeclareProperty("prefersSeat", "prefers seat", domain=SDO.Person, datatype=True),
        DeclareClass("VeganCafe", (SDO.Restaurant,), "vegan cafe"),
    )
    plan = ports.ontology.plan_delta(UID, found)
    assert {str(t) for t in plan.terms} == {PREFERS_SEAT, VEGAN_CAFE}
    ports.ontology.apply_delta(UID, found)
    info = ports.ontology.effective(UID).info(delta_term(UID, "VeganCafe"))
    assert (info.status, info.kind) == (TermStatus.DELTA, TermKind.CLASS)


def test_assemble_defers_decisions_with_unknown_or_wrong_terms(
    ports: PassPorts, ctx: PassContext
) -> None:
    answer = patch(
        decide("prefersSeat", "align", target="schema:seatPreference"),  # no such term
        decide("seatPreference", "merge", target="prefersSeat"),  # into a term not declared
        decide("employedAt", "align", target="schema:Person"),  # a class for a property
        decide("VeganCafe", "declare", parent="schema:worksFor"),  # a property as parent
    )
    engine = ScriptedEngine({AssembleTerms: [answer]})
    work = assemble(with_model(ports, engine), ctx, classified(ports, ctx, *drafts()))
    assert {d.action for d in work.decisions} == {"defer"}
    reasons = {d.surface: d.reason for d in work.decisions}
    assert "'schema:seatPreference' is not a known property" in reasons["prefersSeat"]
    assert "is not declared (defer)" in reasons["seatPreference"]
    assert "'schema:Person' is not a known property" in reasons["employedAt"]
    assert "'schema:worksFor' is not a known class" in reasons["VeganCafe"]
    assert work.draft("b").deferred_terms == (SEAT_PREFERENCE,)
    assert work.draft("d").deferred_terms == (VEGAN_CAFE,)
    assert predicate(work, "c") == EMPLOYED_AT  # a deferred term keeps its placeholder
    assert delta_patch(UID, work, NOW) is None


def test_assemble_defers_what_the_ontology_refuses_and_keeps_the_rest(
    ports: PassPorts, ctx: PassContext
) -> None:
    answer = patch(
        decide("prefersSeat", "declare", label="works for"),  # duplicates schema:worksFor
        decide("seatPreference", "merge", target="prefersSeat"),  # so this one waits too
        decide("employedAt", "restrict", target="schema:worksFor", range="schema:Corporation"),
        decide("VeganCafe", "declare", label="vegan cafe", parent="schema:Restaurant"),
    )
    engine = ScriptedEngine({AssembleTerms: [answer]})
    work = assemble(with_model(ports, engine), ctx, classified(ports, ctx, *drafts()))
    by_surface = decided(work)
    assert by_surface["prefersSeat"].action == "defer"
    assert "refused by the ontology" in by_surface["prefersSeat"].reason
    assert "duplicates the known term" in by_surface["prefersSeat"].reason
    assert "is not declared (defer)" in by_surface["seatPreference"].reason
    assert work.draft("a").deferred_terms == (PREFERS_SEAT,)
    assert work.draft("b").deferred_terms == (SEAT_PREFERENCE,)
    assert predicate(work, "c") == EMPLOYED_AT  # restricted: a narrower subproperty
    found = delta_patch(UID, work, NOW)
    assert found is not None
    assert found.ops == (
        DeclareProperty(
            "employedAt", "employed at", range=SDO.Corporation, parents=(SDO.worksFor,)
        ),
        DeclareClass("VeganCafe", (SDO.Restaurant,), "vegan cafe"),
    )
    ports.ontology.plan_delta(UID, found)


def test_assemble_keeps_the_models_reason_for_a_deferral(
    ports: PassPorts, ctx: PassContext
) -> None:
    answer = patch(
        decide("prefersSeat", "defer", reason="too vague"),
        decide("seatPreference", "defer"),
    )
    engine = ScriptedEngine({AssembleTerms: [answer]})
    work = assemble(with_model(ports, engine), ctx, classified(ports, ctx, *drafts()[:2]))
    assert [d.reason for d in work.decisions] == ["too vague", "deferred by the model"]
    assert work.draft("a").deferred_terms == (PREFERS_SEAT,)


def test_assemble_reads_the_latest_worklist_and_rewrites_bindings(
    ports: PassPorts, ctx: PassContext
) -> None:
    """Resolve ran after classify: its worklist (with bindings) is the one assemble reads."""
    state = classified(ports, ctx, *drafts()[3:])
    resolved = worklist(state, before=StageName.RESOLVE)
    binding = EntityBinding(name="Green Leaf", iri="urn:x:green-leaf", types=(VEGAN_CAFE,))
    bound = resolved.drafts[0].model_copy(update={"bindings": {"green leaf": binding}})
    state = state.with_output(
        StageName.RESOLVE, resolved.model_copy(update={"drafts": (bound,)}).to_json()
    )
    answer = patch(decide("VeganCafe", "align", target="schema:Restaurant"))
    engine = ScriptedEngine({AssembleTerms: [answer]})
    work = assemble(with_model(ports, engine), ctx, state)
    (draft,) = work.drafts
    assert draft.bindings["green leaf"].types == (str(SDO.Restaurant),)
    assert str(SDO.Restaurant) in draft.draft.entities[0].types
    assert VEGAN_CAFE not in draft.draft.entities[0].types
    assert delta_patch(UID, work, NOW) is None  # an alignment declares nothing


def test_assemble_amends_the_users_own_term(ports: PassPorts, ctx: PassContext) -> None:
    state = classified(ports, ctx, item("a", val("user", "favourite seat", "aisle")))
    answer = patch(decide("favouriteSeat", "amend", target=str(SEAT_CHOICE), label="seat"))
    engine = ScriptedEngine({AssembleTerms: [answer]})
    work = assemble(with_model(ports, engine), ctx, state)
    assert predicate(work, "a") == str(SEAT_CHOICE)
    found = delta_patch(UID, work, NOW)
    assert found is not None and found.ops == (Amend(SEAT_CHOICE, label="seat"),)
    ports.ontology.plan_delta(UID, found)


def test_assemble_refuses_to_amend_a_catalogue_term(ports: PassPorts, ctx: PassContext) -> None:
    state = classified(ports, ctx, item("a", val("user", "favourite seat", "aisle")))
    answer = patch(decide("favouriteSeat", "amend", target="schema:worksFor", label="seat"))
    engine = ScriptedEngine({AssembleTerms: [answer]})
    work = assemble(with_model(ports, engine), ctx, state)
    (decision,) = work.decisions
    assert decision.action == "defer" and "not a term of the user's own schema" in decision.reason
    assert work.draft("a").deferred_terms == (FAVOURITE_SEAT,)


def test_assemble_defers_terms_without_a_decision_and_ignores_extra_ones(
    ports: PassPorts, ctx: PassContext
) -> None:
    answer = patch(
        decide("prefersSeat", "declare", label="prefers seat"),
        decide("prefersSeat", "defer", reason="second thoughts"),
        decide("windowSeat", "declare", label="window seat"),
    )
    state = classified(ports, ctx, *drafts()[:2])
    work = worklist(state, before=StageName.ASSEMBLE)
    checked = AssembleStage(ports).decide(
        UID, work, scripted_lm(ScriptedEngine({AssembleTerms: [answer]})), NOW
    )
    assert [(d.surface, d.action) for d in checked.decisions] == [
        ("prefersSeat", "declare"),
        ("seatPreference", "defer"),
    ]
    assert checked.decisions[1].reason == NO_DECISION
    assert len(checked.ignored) == 2
    assert "second decision" in checked.ignored[0]
    assert "'windowSeat': not an undeclared term" in checked.ignored[1]


def test_assemble_without_a_model_defers_every_term(ports: PassPorts, ctx: PassContext) -> None:
    work = assemble(ports, ctx, classified(ports, ctx, *drafts()))
    assert [(d.action, d.reason) for d in work.decisions] == [("defer", NO_MODEL)] * 4
    assert work.draft("a").deferred_terms == (PREFERS_SEAT,)
    assert work.draft("d").deferred_terms == (VEGAN_CAFE,)
    assert delta_patch(UID, work, NOW) is None


def test_assemble_passes_a_pass_without_undeclared_terms_through(
    ports: PassPorts, ctx: PassContext
) -> None:
    engine = ScriptedEngine()
    state = classified(ports, ctx, item("a", rel("user", "works for", "Acme")))
    stage = AssembleStage(with_model(ports, engine))
    assert isinstance(stage, Stage) and stage.name is StageName.ASSEMBLE
    work = Worklist.of(stage.run(ctx, state).output(StageName.ASSEMBLE))
    assert engine.requests == []
    assert work.decisions == () and predicate(work, "a") == str(SDO.worksFor)


def test_assemble_refuses_broken_model_output(ports: PassPorts, ctx: PassContext) -> None:
    broken = (
        '[[ ## patch ## ]]\n{"decisions": [{"surface": "prefersSeat", \n\n[[ ## completed ## ]]'
    )
    engine = ScriptedEngine({AssembleTerms: [broken]})
    with pytest.raises(ModelOutputError) as caught:
        assemble(with_model(ports, engine), ctx, classified(ports, ctx, *drafts()))
    assert caught.value.stage == "assemble"


def test_delta_patch_is_none_without_decisions() -> None:
    assert delta_patch(UID, Worklist(), NOW) is None
