"""Refusals of a consolidation pass in the decisions feed (#23 j): a draft refused at any stage
(extract, ground, classify, reconcile) is a ``refuse`` decision, shaped as the foreground gate
records one (no target, the draft's title, kind and hash, its reasons), marked with its pass,
written with the pass's commit, and there once; a drop of less than a draft (an alias) is
not a refusal. The model is scripted and lies; store, grounding and gate are real."""

from __future__ import annotations

from datetime import timedelta

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.memory.decider import Actor
from kgmem.memory.decisions import Action, DecisionRecord
from kgmem.memory.model import MemoryKind
from kgmem.pipeline import ExtractClaims, PassRecord, PassStatus, StageName, pass_iri
from kgmem.pipeline.worklist import Dropped, worklist
from kgmem.vocab import KGM
from tests.pipeline.passes import UID, G, consolidation, known_hiker, memories, say
from tests.pipeline.scripted import ScriptedEngine, claim, claims_reply, prompt_of, quote

SAID = "I work at Acme. My sister Dana lives in Porto."


def _pass(
    services: Services, clock: FixedClock, *claims: dict[str, object], text: str = SAID
) -> tuple[PassRecord, list[Dropped]]:
    said = claims_reply(*claims)
    engine = ScriptedEngine({ExtractClaims: [lambda r: said if text in prompt_of(r) else ""]})
    engine.stand(ExtractClaims, claims_reply())
    say(services, f"c{clock.now().timestamp():.0f}", (("user", text),))
    clock.advance(timedelta(minutes=10))
    pipeline = consolidation(services, engine)
    [record] = pipeline.consolidate(UID)
    assert record.status is PassStatus.COMMITTED, record.error
    dropped = list(worklist(pipeline.checkpoints.state(UID, record.pass_id)).dropped)
    return record, dropped


def _refusals(services: Services) -> list[DecisionRecord]:
    feed = services.gate.decisions.feed(UID, 1000)
    assert all((d.action is Action.REFUSE) == (d.draft is not None) for d in feed)
    return [d for d in feed if d.action is Action.REFUSE]


def _in_pass(services: Services, decision: DecisionRecord, record: PassRecord) -> bool:
    node = pass_iri(UID, record.pass_id)
    return bool(list(services.store.quads(G.ops, decision.iri, KGM.inPass, node)))


def test_a_claim_refused_at_ground_is_one_decision_in_the_feed_with_its_reason(
    services: Services, clock: FixedClock
) -> None:
    lie = claim(
        "user",
        "schema:worksFor",
        quote("S1", "I work at Acme"),
        object="Globex",
        statement="Alice works at Globex",
    )
    record, dropped = _pass(services, clock, lie)
    [summary] = [d for d in dropped if "/claim" not in d.key]
    assert (summary.stage, summary.code) == (StageName.GROUND, "quote_does_not_state_value")
    [refusal] = _refusals(services)
    assert refusal.target is None and refusal.actor == Actor.CONSOLIDATION.value
    assert refusal.draft is not None
    assert (refusal.draft.title, refusal.draft.kind) == (
        "Alice works at Globex",
        MemoryKind.SEMANTIC,
    )
    assert refusal.reason.startswith("claim 0: ") and "does not state 'Globex'" in refusal.reason
    assert _in_pass(services, refusal, record)
    assert memories(services) == {}
    # a later pass (here with nothing to refuse) records it no second time
    clock.advance(timedelta(days=1))
    _pass(services, clock, text="Nothing new today.")
    assert [d.iri for d in _refusals(services)] == [refusal.iri]


def test_a_claim_citing_a_source_never_shown_is_refused_at_extract_in_the_feed(
    services: Services, clock: FixedClock
) -> None:
    unseen = claim("user", "schema:worksFor", quote("S9", "I work at Acme"), object="Acme")
    record, dropped = _pass(services, clock, unseen)
    [drop] = dropped
    assert (drop.stage, drop.code) == (StageName.EXTRACT, "source_not_shown")
    [refusal] = _refusals(services)
    assert "'S9' is not one of the sources the model was shown" in refusal.reason
    assert refusal.draft is not None and refusal.draft.title == "user schema:worksFor Acme"
    assert _in_pass(services, refusal, record)


def test_a_negated_typing_refused_at_classify_is_in_the_feed(
    services: Services, clock: FixedClock
) -> None:
    text = "Dana is not a doctor."
    negated = claim(
        "Dana", "rdf:type", quote("S1", "Dana is not a doctor"), object="doctor", negated=True
    )
    _, dropped = _pass(services, clock, negated, text=text)
    [drop] = dropped
    assert (drop.stage, drop.code) == (StageName.CLASSIFY, "negated_type")
    [refusal] = _refusals(services)
    assert "a negated typing cannot be a type" in refusal.reason


def test_a_dropped_alias_refuses_no_draft_and_the_kept_claim_is_no_refusal(
    services: Services, clock: FixedClock
) -> None:
    sister = claim(
        "Dana",
        "schema:homeLocation",
        quote("S1", "My sister Dana lives in Porto"),
        object="Porto",
        subject_aliases=["Dee"],
    )
    _, dropped = _pass(services, clock, sister)
    [drop] = dropped
    assert (drop.stage, drop.code, drop.decision) == (StageName.EXTRACT, "unsupported_alias", "")
    assert _refusals(services) == []
    assert len(memories(services)) == 1


def test_each_draft_a_pass_refuses_is_in_the_feed_once_whatever_stage_refused_it(
    services: Services, clock: FixedClock
) -> None:
    """Queued drafts, no model: one refused at ground (a quote not in its source), one at
    reconcile (its cited speaker typed as an organization); one refusal each, none for the
    draft that became memory, and none for the speaker's own memory set up before."""
    said, known = known_hiker(services)
    as_org = known | {
        "title": "Nora Lind is an organization in the Alps",
        "claims": [{"subject": "Nora Lind", "predicate": "schema:description", "value": "Alps"}],
        "entities": [{"name": "Nora Lind", "types": ["schema:Organization"]}],
        "evidence": [{"source": said, "quote": "I love hiking in the Alps"}],
    }
    invented = known | {
        "title": "Nora Lind loves skiing",
        "claims": [{"subject": "Nora Lind", "predicate": "schema:description", "value": "skiing"}],
        "evidence": [{"source": said, "quote": "I love skiing"}],
    }
    alps = known | {
        "title": "Nora Lind hikes in the Alps",
        "claims": [{"subject": "Nora Lind", "predicate": "schema:description", "value": "Alps"}],
        "evidence": [{"source": said, "quote": "I love hiking in the Alps"}],
    }
    pipeline = consolidation(services, None)
    pipeline.queue(UID, [as_org, invented, alps])
    [done] = pipeline.consolidate(UID)
    assert done.status is PassStatus.COMMITTED, done.error
    by_title = {d.draft.title: d for d in _refusals(services) if d.draft is not None}
    assert sorted(by_title) == [
        "Nora Lind is an organization in the Alps",
        "Nora Lind loves skiing",
    ]
    assert len(_refusals(services)) == 2
    assert "disjoint" in by_title["Nora Lind is an organization in the Alps"].reason
    assert "verbatim" in by_title["Nora Lind loves skiing"].reason
    assert all(_in_pass(services, d, done) for d in by_title.values())
    assert sorted(memories(services)) == ["Nora Lind hikes in the Alps", "Nora Lind loves hiking"]
