"""A fast slice of the unreliable-author suite (``benchmarks/correctness.py``) as a guard.

A synthetic world written here (no ``../shared``): a handful of cases per mode, each run as
its own user on an on-disk store through both paths of the suite - the real write path
(first-hand sources, then ``gate.draft``) and a real consolidation pass whose recorded model
answers the proposal as its extraction - with the outcome the design asks for asserted case
by case. Known gaps of the consolidation path are strict xfails: they fail the run once fixed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.memory.gate import ItemResult, Outcome
from kgmem.pipeline import Consolidation, ExtractClaims, PassStatus
from kgmem.pipeline.scripted import inputs_of
from kgmem.store import UserGraphs
from kgmem.vocab import KGM, RDF
from tests.helpers import load_benchmark

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
JOB = {
    "name": "currentJobAt",
    "domain": "schema:Person",
    "range": "schema:Organization",
    "functional": True,
}


core = load_benchmark("correctness_core")
passes = load_benchmark("correctness_pass")


def msg(key: str, text: str, speaker: str | None = None, role: str = "user") -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "role": role, "text": text}
    if speaker:
        out["speaker"] = speaker
    return out


def works(
    who: str,
    org: str,
    source: str,
    quote: str,
    predicate: str = "schema:worksFor",
    who_type: str = "schema:Person",
    **claim: Any,
) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": f"{who} works at {org}",
        "confidence": 0.9,
        "claims": [{"subject": who, "predicate": predicate, "object": org, **claim}],
        "entities": [
            {"name": who, "types": [who_type]},
            {"name": org, "types": ["schema:Organization"]},
        ],
        "evidence": [{"source": source, "quote": quote}],
    }


ADA = msg("ada", "I work at Lumen Labs as a chemist.", "Ada Moss")
TRUE = works("Ada Moss", "Lumen Labs", "$ada", "I work at Lumen Labs")
JOB_TRUE = works("Ada Moss", "Lumen Labs", "$ada", "I work at Lumen Labs", "delta:currentJobAt")
MOVED = msg("moved", "I now work at Brightline.", "Ada Moss")
NEW_JOB = works(
    "Ada Moss", "Brightline", "$moved", "I now work at Brightline", "delta:currentJobAt"
)
CRM = {
    "key": "crm",
    "role": "tool",
    "text": "Profile: Ada Moss works at Brightline.",
    "tool_name": "crm",
    "tool_outcome": "success",
}
RECALL = dict(CRM, key="recall", tool_name="memory_search")
ALIASED = works("Ada Moss", "Lumen Labs", "$ada", "I work at Lumen Labs")
ALIASED["entities"][0]["aliases"] = ["Addie"]
BY_ALIAS = works("Addie", "Lumen Labs", "$told", "Addie works at Lumen Labs")
BY_ALIAS["entities"] = BY_ALIAS["entities"][1:]

BEA = msg("bea", "I work at Lumen Labs.", "Bea Hart")
BEA_JOB = works("Bea Hart", "Lumen Labs", "$bea", "I work at Lumen Labs")
FOR_BEA = works("Ada Moss", "Bea Hart", "$boss", "I work for Bea Hart")
FOR_BEA["entities"] = FOR_BEA["entities"][:1]
FOUNDED = msg("founded", "Lumen Labs was founded on 12 March 1990.", "Reader")
ORG_BIRTH = {
    "kind": "semantic",
    "title": "Lumen Labs born 1990",
    "confidence": 0.9,
    "claims": [{"subject": "Lumen Labs", "predicate": "schema:birthDate", "value": "1990-03-12"}],
    "entities": [{"name": "Lumen Labs", "types": ["schema:Organization"]}],
    "evidence": [{"source": "$founded", "quote": "Lumen Labs was founded on 12 March 1990"}],
}

# (case, kgmem's outcome on the draft path)
CASES: list[tuple[dict[str, Any], str]] = [
    (core.case("true", "true", "user", [ADA], TRUE, "keep"), "active"),
    (
        core.case(
            "inv-value",
            "invention",
            "unstated_value",
            [ADA],
            works("Ada Moss", "Brightline", "$ada", "I work at Lumen Labs"),
            "refuse",
        ),
        "refused",
    ),
    (
        core.case(
            "inv-quote",
            "invention",
            "altered_quote",
            [ADA],
            works("Ada Moss", "Brightline", "$ada", "I work at Brightline"),
            "refuse",
        ),
        "refused",
    ),
    (
        core.case(
            "inv-agent",
            "invention",
            "agent_prose",
            [msg("agent", "Ada Moss works at Lumen Labs.", role="assistant")],
            works("Ada Moss", "Lumen Labs", "$agent", "Ada Moss works at Lumen Labs"),
            "refuse",
        ),
        "refused",
    ),
    (
        core.case(
            "inv-recall",
            "invention",
            "recall_tool_quote",
            [RECALL],
            works("Ada Moss", "Brightline", "$recall", "Ada Moss works at Brightline"),
            "refuse",
        ),
        "refused",
    ),
    (
        core.case(
            "mis-pred",
            "mislabel",
            "improvised_predicate",
            [ADA],
            works("Ada Moss", "Lumen Labs", "$ada", "I work at Lumen Labs", "kgm:employedBy"),
            "catch",
        ),
        "pending",
    ),
    (
        core.case(
            "mis-coined",
            "mislabel",
            "improvised_predicate",
            [ADA],
            works("Ada Moss", "Lumen Labs", "$ada", "I work at Lumen Labs", "kgm:toilsAt"),
            "catch",
        ),
        "pending",
    ),
    (
        core.case(
            "mis-range",
            "mislabel",
            "range_violation",
            [BEA, msg("boss", "I work for Bea Hart.", "Ada Moss")],
            FOR_BEA,
            "catch",
            [BEA_JOB],
        ),
        "refused",
    ),
    (
        core.case("mis-domain", "mislabel", "domain_violation", [FOUNDED], ORG_BIRTH, "catch"),
        "refused",
    ),
    (
        core.case(
            "mis-disjoint",
            "mislabel",
            "person_as_org",
            [ADA],
            works(
                "Ada Moss",
                "Lumen Labs",
                "$ada",
                "I work at Lumen Labs",
                who_type="schema:Organization",
            ),
            "catch",
            [TRUE],
        ),
        "refused",
    ),
    (
        core.case(
            "re-evidence",
            "restatement",
            "new_evidence",
            [ADA, msg("again", "As I said, I work at Lumen Labs.", "Ada Moss")],
            works("Ada Moss", "Lumen Labs", "$again", "I work at Lumen Labs"),
            "fold",
            [TRUE],
        ),
        "discarded",
    ),
    (
        core.case(
            "re-alias",
            "restatement",
            "alias",
            [ADA, msg("told", "Addie works at Lumen Labs.", "Reader")],
            BY_ALIAS,
            "fold",
            [ALIASED],
        ),
        "discarded",
    ),
    (
        core.case(
            "re-twins",
            "restatement",
            "same_first_name",
            [ADA, msg("other", "I work at Lumen Labs too.", "Ada Quinn")],
            works("Ada Quinn", "Lumen Labs", "$other", "I work at Lumen Labs"),
            "separate",
            [TRUE],
        ),
        "active",
    ),
    (
        core.case(
            "con-lower",
            "contradiction",
            "lower_authority",
            [ADA, CRM],
            works(
                "Ada Moss",
                "Brightline",
                "$crm",
                "Ada Moss works at Brightline",
                "delta:currentJobAt",
            ),
            "quarantine",
            [JOB_TRUE],
            declare=[JOB],
        ),
        "quarantined",
    ),
    (
        core.case(
            "con-pinned",
            "contradiction",
            "against_pinned",
            [ADA, MOVED],
            NEW_JOB,
            "quarantine",
            [JOB_TRUE],
            pin=True,
            declare=[JOB],
        ),
        "quarantined",
    ),
    (
        core.case(
            "con-newer",
            "contradiction",
            "newer_authoritative",
            [ADA, MOVED],
            {**NEW_JOB, "claims": [{**NEW_JOB["claims"][0], "valid_from": "2026-05-01T00:00:00Z"}]},
            "supersede",
            [JOB_TRUE],
            declare=[JOB],
        ),
        "active",
    ),
    (
        core.case(
            "con-negation",
            "contradiction",
            "explicit_negation",
            [ADA, msg("left", "I no longer work at Lumen Labs.", "Ada Moss")],
            works(
                "Ada Moss", "Lumen Labs", "$left", "I no longer work at Lumen Labs", negated=True
            ),
            "contest",
            [TRUE],
        ),
        "active",  # "no longer" says the world changed: the negation supersedes (#23 g)
    ),
]


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    home = tmp_path_factory.mktemp("correctness")
    built = build_services(load_settings(env={"KGMEM_HOME": str(home)}), clock=FixedClock(NOW))
    yield built
    built.close()


@pytest.mark.parametrize(("case", "outcome"), CASES, ids=[c["id"] for c, _ in CASES])
def test_correctness_case_is_handled_as_designed(
    services: Services, case: dict[str, Any], outcome: str
) -> None:
    verdict = core.run_case(services, f"slice-{case['id']}", case, NOW)
    assert verdict.outcome == outcome, verdict.why
    assert verdict.kgmem, verdict.why


def test_correctness_baselines_fail_what_only_a_gate_catches(services: Services) -> None:
    verdicts = [core.run_case(services, f"base-{c['id']}", c, NOW) for c, _ in CASES]
    assert core.summary(verdicts)["invention_caught"] == 1.0
    accept_all, dedupe = core.summary(verdicts, "accept_all"), core.summary(verdicts, "dedupe")
    assert accept_all["true_kept"] == dedupe["true_kept"] == 1.0
    assert accept_all["invention_caught"] == dedupe["invention_caught"] == 0.0
    assert accept_all["restatement_folded"] == 0.0
    assert dedupe["restatement_folded"] == 0.5  # the repeat with only new evidence


def test_correctness_cases_round_trip_through_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    assert core.write_cases(path, [c for c, _ in CASES]) == len(CASES)
    assert core.read_cases(path) == [c for c, _ in CASES]
    path.write_text('{"format": "kgmem-correctness/0", "id": "x"}\n')
    with pytest.raises(ValueError, match="format"):
        core.read_cases(path)


# -- the consolidation path -------------------------------------------------------------

#: case id -> (kgmem's outcome on the consolidation path, where the pass refused the claim)
PASS_OUTCOMES = {
    "true": ("active", ""),
    "inv-value": ("refused", "ground: quote_does_not_state_value"),
    "inv-quote": ("refused", "ground: quote_not_in_source"),
    "inv-agent": ("refused", "ground: agent_only"),
    "inv-recall": ("refused", "never extracted"),  # a recall result is never shown the model
    "mis-pred": ("aligned", ""),  # kgm:employedBy is schema:worksFor's alternate label
    "mis-coined": ("pending", ""),  # a placeholder term, deferred by assemble
    # Bea Hart is the known person; an Organization inferred from the range sets none aside
    "mis-range": ("refused", "validate: "),
    # the answer types Ada Moss an Organization (refused at ground: no quote says so) and
    # makes her the subject of schema:worksFor (domain Person): it contradicts itself
    "mis-disjoint": ("refused", "classify: self_contradictory_type"),
    # the same with Lumen Labs, known nowhere: no Person is guessed from birthDate's domain
    "mis-domain": ("refused", "classify: self_contradictory_type"),
    "re-evidence": ("discarded", ""),
    "re-alias": ("discarded", ""),
    "re-twins": ("active", ""),
    "con-lower": ("quarantined", ""),
    "con-pinned": ("quarantined", ""),
    "con-newer": ("active", ""),
    "con-negation": ("active", ""),  # said later, the negation supersedes the claim
}
#: known gaps of the consolidation path (the draft path handles these cases), as strict xfails
PASS_GAPS: dict[str, str] = {}
PASS_CASES = [
    pytest.param(c, *PASS_OUTCOMES.get(c["id"], ("", "")), id=c["id"])
    if c["id"] not in PASS_GAPS
    else pytest.param(
        c, "", "", id=c["id"], marks=pytest.mark.xfail(strict=True, reason=PASS_GAPS[c["id"]])
    )
    for c, _ in CASES
]


@pytest.fixture(scope="module")
def pipeline(services: Services) -> tuple[Any, Consolidation]:
    model = passes.CaseModel()
    return model, passes.consolidation(services, model)


def _memories(services: Services, uid: str) -> set[Any]:
    graphs = UserGraphs(uid)
    return {
        q.subject
        for graph in (graphs.kg, graphs.quarantine)
        for q in services.store.quads(graph, None, RDF.type, KGM.Memory)
    }


@pytest.mark.parametrize(("case", "outcome", "refusal"), PASS_CASES)
def test_correctness_case_is_handled_as_designed_by_a_consolidation_pass(
    services: Services,
    pipeline: tuple[Any, Consolidation],
    case: dict[str, Any],
    outcome: str,
    refusal: str,
) -> None:
    model, consolidation = pipeline
    uid = f"pass-{case['id']}"
    done = passes.consolidate_case(services, consolidation, model, uid, case, NOW)
    assert not isinstance(done, str), done
    verdict = passes.judged(services, uid, case, *done)
    assert verdict.kgmem, verdict.why
    assert verdict.outcome == outcome, verdict.why
    _, fates, _ = done
    assert refusal in fates[0].why
    records = consolidation.checkpoints.passes(uid, 10)
    assert {r.status for r in records} == {PassStatus.COMMITTED}
    if outcome == "refused":  # nothing of the lie became memory, in any graph
        assert len(_memories(services, uid)) == len(case["setup"])


def test_consolidation_path_renders_the_proposal_as_the_models_answer() -> None:
    by_alias = next(c for c, _ in CASES if c["id"] == "re-alias")
    aliased = core.case("x", "true", "x", by_alias["sources"], ALIASED, "keep")
    parts = passes.render(aliased)
    assert [(p.key, p.typing) for p in parts] == [
        ("chat:c1#000", False),
        ("chat:c1#001", True),
        ("chat:c1#002", True),
    ]
    said = parts[0].claim
    assert (said["subject"], said["predicate"], said["object"]) == (
        "Ada Moss",
        "schema:worksFor",
        "Lumen Labs",
    )
    assert said["subject_aliases"] == ["Addie"] and said["statement"] == ALIASED["title"]
    assert [(p.claim["subject"], p.claim["object"]) for p in parts[1:]] == [
        ("Ada Moss", "schema:Person"),
        ("Lumen Labs", "schema:Organization"),
    ]
    assert {(e["source"], e["quote"]) for p in parts for e in p.claim["evidence"]} == {
        ("$ada", "I work at Lumen Labs")
    }
    job = passes.render(core.case("y", "true", "y", [ADA], JOB_TRUE, "keep"))
    assert job[0].claim["predicate"] == "currentJobAt"  # the model never sees the namespace


def test_consolidation_pass_answers_the_segment_that_shows_the_cited_source(
    services: Services,
) -> None:
    model = passes.CaseModel()
    consolidation = passes.consolidation(services, model)
    case = next(c for c, _ in CASES if c["id"] == "re-alias")
    done = passes.consolidate_case(services, consolidation, model, "pass-shown", case, NOW)
    assert not isinstance(done, str), done
    [request] = model.engine.calls(ExtractClaims)
    segment = inputs_of(request)["segment"]
    assert "I work at Lumen Labs as a chemist." in segment
    assert "Addie works at Lumen Labs." in segment
    _, fates, last = done
    assert fates[0].outcome == "discarded"
    assert fates[0].decided is not None and fates[0].decided.memory == str(last)


def test_a_draft_reconcile_defers_is_decided_by_the_next_pass(services: Services) -> None:
    model = passes.CaseModel()
    consolidation = passes.consolidation(services, model)
    twice = works("Ada Moss", "Lumen Labs", "$ada", "I work at Lumen Labs")
    twice["claims"] *= 2  # one claim twice: the second waits for the first to commit
    twice["entities"] = []
    case = core.case("twice", "true", "x", [ADA], twice, "keep")
    done = passes.consolidate_case(services, consolidation, model, "pass-twice", case, NOW)
    assert not isinstance(done, str), done
    _, fates, _ = done
    assert [f.outcome for f in fates] == ["active", "discarded"]
    assert fates[0].decided is not None and fates[1].decided is not None
    assert fates[0].decided.memory == fates[1].decided.memory
    assert len(consolidation.checkpoints.passes("pass-twice", 10)) == 2


def test_only_an_improvised_predicate_stored_as_a_known_term_is_judged_aligned(
    services: Services,
) -> None:
    def judged_aligned(uid: str, setup: dict[str, Any], predicate: str, own: bool = True) -> bool:
        """The setup's memory judged as if the proposal (on ``predicate``) had become it;
        ``own``: the case itself declares JOB (else something else, a pass, did)."""
        proposal = works("Ada Moss", "Lumen Labs", "$ada", "I work at Lumen Labs", predicate)
        ran = core.case("x", "mislabel", "x", [ADA], proposal, "catch", [setup], declare=[JOB])
        prepared = core.prepare(services, uid, ran, NOW)
        assert not isinstance(prepared, str), prepared
        judged = ran if own else {k: v for k, v in ran.items() if k != "declare"}
        item = ItemResult(0, Outcome.ACTIVE, prepared[1])
        return bool(core.aligned(services, uid, judged, item))

    assert judged_aligned("al-1", TRUE, "kgm:employedBy")  # stored as schema:worksFor
    assert not judged_aligned("al-2", TRUE, "schema:worksFor")  # nothing was improvised
    assert judged_aligned("al-3", JOB_TRUE, "kgm:employedBy")  # the case's own term
    assert not judged_aligned("al-4", JOB_TRUE, "kgm:employedBy", own=False)


def test_scores_over_paths_take_each_modes_worst() -> None:
    nan = float("nan")
    draft = {"true_kept": 1.0, "mislabel_caught": 0.5, "false_merges": 0.0}
    consolidation = {"true_kept": 0.9, "mislabel_caught": nan, "false_merges": 0.25}
    assert core.worst([draft, consolidation]) == {
        "true_kept": 0.9,
        "mislabel_caught": 0.5,
        "false_merges": 0.25,
    }
