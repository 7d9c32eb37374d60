"""A guard for the realistic suite (``benchmarks/realistic.py``), the instrument of issue #23.

Two kinds of test. The data: every conversation under ``benchmarks/realistic/`` parses as
``kgmem-realistic/1``, the suite is as large as the issue asks, every phenomenon a-j has
true, lying and ambiguous cases, and every quote a careful model wrote is verbatim in the
turn it cites. The runner: a few real cases per phenomenon, whose right answer is plain today
(an invented value refused, a sentence that names its subject kept, two people apart, a
restatement folded, a spurious change leaving the old value alone), run through both paths
as the suite runs them, must be judged as the data says; and the judgements the suite adds
(``close``, ``stand``, ``hold``, the ``also`` checks) are checked on real records. Nothing
here asserts what the gate does with the cases it gets wrong today: the suite measures that.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.memory.gate import ItemResult, Outcome
from tests.helpers import load_benchmark, load_realistic

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "realistic"
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo" / "locomo10.json"

data = load_realistic()
runs = load_benchmark("realistic_run")
state = load_benchmark("realistic_state")
passes = load_benchmark("correctness_pass")
locomo = load_benchmark("realistic_locomo")

CONVERSATIONS = data.read_conversations(DATA)
CASES = {c["id"]: c for conv in CONVERSATIONS for c in data.compile_cases(conv)}

# Cases whose right answer is plain on today's code, a few per phenomenon.
SLICE = [
    "c01-new-city/a-intro-name",
    "c01-new-city/a-lie-title",
    "c01-new-city/b-my-brother",
    "c02-grandmothers-90th/b-lie-born-elsewhere",
    "c03-team-reorg/c-lie-renewal-month",
    "c05-asthma-and-meds/c-lie-puffs",
    "c06-japan-trip/d-two-sams-apart",
    "c10-marathon-training/d-magda-alias",
    "c01-new-city/e-lie-denied-area",
    "c03-team-reorg/f-jb-as-org",
    "c04-ledger-service/g-lie-dba-unchanged",
    "c06-japan-trip/h-ortiz-again",
    "c01-new-city/h-lie-posing-new",
    "c04-ledger-service/j-kept-in-feed",
]


# -- the data -------------------------------------------------------------------------------


def test_suite_is_as_large_as_the_issue_asks() -> None:
    assert len(CONVERSATIONS) >= 12
    assert len(CASES) >= 300
    assert len({conv["kind"] for conv in CONVERSATIONS}) >= 7


def test_every_phenomenon_has_true_lying_and_ambiguous_cases() -> None:
    found = Counter((c["phenomenon"], c["variant"]) for c in CASES.values())
    missing = [(p, v) for p in data.PHENOMENA for v in data.VARIANTS if not found[(p, v)]]
    assert not missing


def test_every_careful_quote_is_verbatim_in_its_turn() -> None:
    assert [bad for conv in CONVERSATIONS for bad in data.unquoted(conv)] == []


def test_every_conversation_has_a_feed_and_end_state_checks() -> None:
    for conv in CONVERSATIONS:
        assert conv["feed"] and conv["checks"], conv["id"]
        assert all(c["id"].startswith(conv["id"] + "/") for c in conv["cases"])


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"format": "kgmem-realistic/0"}, "format"),
        ({"cases": [{"id": "x", "phenomenon": "k"}]}, "phenomenon"),
        ({"feed": ["nowhere"]}, "feed"),
    ],
)
def test_a_malformed_conversation_is_refused_naming_the_field(
    change: dict[str, Any], error: str
) -> None:
    conv = dict(CONVERSATIONS[0]) | change
    with pytest.raises(data.FormatError, match=error):
        data.check(conv)


def test_a_case_of_the_wrong_mode_for_its_variant_is_refused() -> None:
    conv = dict(CONVERSATIONS[0])
    case = dict(conv["cases"][0], variant="lie", mode="true")
    with pytest.raises(data.FormatError, match="mode"):
        data.check(conv | {"cases": [case]})


# -- the runner -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    home = tmp_path_factory.mktemp("realistic")
    built = build_services(load_settings(env={"KGMEM_HOME": str(home)}), clock=FixedClock(NOW))
    yield built
    built.close()


def _uid(path: str, case_id: str) -> str:
    return f"{path}{SLICE.index(case_id)}" if case_id in SLICE else path


@pytest.mark.parametrize("case_id", SLICE)
def test_the_draft_path_judges_as_the_data_says(services: Services, case_id: str) -> None:
    judged = runs.run_draft_case(services, _uid("d", case_id), CASES[case_id], NOW)
    assert judged.outcome != "broken", judged.why
    assert judged.right, judged


@pytest.mark.parametrize("case_id", SLICE)
def test_the_consolidation_path_judges_as_the_data_says(services: Services, case_id: str) -> None:
    model = passes.CaseModel()
    pipeline = passes.consolidation(services, model)
    c = CASES[case_id]
    judged = runs.run_pass_case(services, pipeline, model, _uid("p", case_id), c, NOW)
    assert judged.path == "consolidation" and judged.outcome != "broken", judged.why
    assert judged.right, judged


@pytest.mark.parametrize(
    ("case_id", "outcome"),
    [
        ("c04-ledger-service/i-deploy", "active"),  # and its steps in the packet, in order
        ("c04-ledger-service/i-lie-watch-time", "refused"),  # "5 minutes" for "15 minutes"
        ("c04-ledger-service/j-refusal-in-feed", "refused"),  # refused at ground, in the feed
    ],
)
def test_procedures_and_ground_refusals_are_judged_right_on_the_consolidation_path(
    services: Services, case_id: str, outcome: str
) -> None:
    model = passes.CaseModel()
    pipeline = passes.consolidation(services, model)
    c = CASES[case_id]
    uid = f"proc{case_id.rsplit('/', 1)[-1]}"
    judged = runs.run_pass_case(services, pipeline, model, uid, c, NOW)
    assert (judged.outcome, judged.right) == (outcome, True), judged


def _known(services: Services, uid: str) -> Any:
    """A memory the gate keeps today: 'I'm on call this week' about the speaker."""
    c = CASES["c04-ledger-service/a-on-call"]
    prepared = runs.prepare(services, uid, dict(c, setup=[]), NOW)
    keys, _ = prepared
    item = runs.draft_one(services, uid, c["proposal"], keys)
    assert item.outcome is Outcome.ACTIVE, item
    return c, item


def test_stand_close_and_hold_read_the_records(services: Services) -> None:
    c, kept = _known(services, "judges")
    active = ItemResult(0, Outcome.ACTIVE)
    assert runs.judge(services, "judges", c | {"expect": "stand"}, active, kept.memory)
    assert not runs.judge(services, "judges", c | {"expect": "close"}, active, kept.memory)
    held = {"expect": "hold"}
    assert runs.judge(
        services, "judges", held, ItemResult(0, Outcome.PENDING, reasons=("why",)), None
    )
    assert runs.judge(
        services, "judges", held, ItemResult(0, Outcome.REFUSED, reasons=("why",)), None
    )
    assert not runs.judge(services, "judges", held, ItemResult(0, Outcome.REFUSED), None)
    assert not runs.judge(services, "judges", held, active, None)
    assert not runs.judge(services, "judges", held, ItemResult(0, Outcome.DISCARDED), None)


def test_close_holds_once_the_old_value_is_superseded(services: Services) -> None:
    uid = "closes"
    said = {"key": "t0", "role": "user", "text": "I was born on 12 March 1990.", "chat": "b"}
    fixed = {
        "key": "t1",
        "role": "user",
        "text": "Sorry, I was born on 12 March 1991.",
        "chat": "b",
    }

    def born(value: str, turn: int, quote: str, **claim: Any) -> dict[str, Any]:
        return {
            "kind": "semantic",
            "title": "born",
            "confidence": 0.9,
            "claims": [{"subject": "I", "predicate": "schema:birthDate", "value": value, **claim}],
            "evidence": [{"source": f"chat:b#{turn}", "quote": quote}],
        }

    old = born("1990-03-12", 0, "I was born on 12 March 1990")
    new = born("1991-03-12", 1, "I was born on 12 March 1991", valid_from="2026-05-01T00:00:00Z")
    c = {"id": "close", "sources": [said, fixed], "setup": [{"draft": old}], "expect": "close"}
    keys, last = runs.prepare(services, uid, c, NOW)
    item = runs.draft_one(services, uid, new, keys)
    assert item.outcome is Outcome.ACTIVE and last in item.superseded, item
    assert runs.judge(services, uid, c, item, last)
    assert not runs.judge(services, uid, c | {"expect": "stand"}, item, last)


def test_in_feed_and_steps_checks_read_the_feed_and_the_packet(services: Services) -> None:
    c, kept = _known(services, "extras")
    assert runs.also(services, "extras", c | {"also": ["in_feed"]}, kept, set()) == []
    refused = ItemResult(0, Outcome.REFUSED, reasons=("made up",))
    everything = {d.iri for d in services.gate.decisions.feed("extras", 1000)}
    [why] = runs.also(services, "extras", c | {"also": ["in_feed"]}, refused, everything)
    assert why.startswith("in_feed:")
    why = runs.steps_shown(services, "extras", "on call", kept.memory, ["page Lena"], {})
    assert why  # a semantic memory is no procedure with steps


def test_end_state_checks_run_on_the_feed(services: Services) -> None:
    conv = next(c for c in CONVERSATIONS if c["id"] == "c04-ledger-service")
    memories = state.feed_by_draft(services, "feedcheck", conv, NOW)
    results = state.checks(services, "feedcheck", conv, memories, "draft")
    assert len(results) == len(conv["checks"])
    by = {r.check: r for r in results}
    assert by["count:Mercury"].ok, by["count:Mercury"]  # the planet and the broker apart
    assert all(r.ok is not None for r in results)


def test_locomo_rendering_takes_the_clause_that_states_the_value() -> None:
    turn = "Hey Mel! I went to a LGBTQ support group yesterday, it was so powerful."
    fact = "Caroline attended an LGBTQ support group."
    start, end = locomo._run(turn, fact)
    assert turn[start:end] == "LGBTQ support group"
    assert locomo._clause(turn, start, end) == "I went to a LGBTQ support group yesterday"
    assert locomo._subject("The support group made Caroline feel accepted.", "Caroline") == (
        "Caroline"
    )
    assert locomo._subject("Pixie has become friends with the dogs.", "Audrey") == "Pixie"


@pytest.mark.shared
def test_locomo_observations_none_skipped() -> None:
    cases, counts = locomo.locomo_cases(LOCOMO, 40)
    assert counts["used"] == 40
    # every observation is a case: a truth, or one the blind review found its quote does not
    # state (a misattribution to refuse)
    judged = [c for c in cases if c["id"].endswith("/true") and c["mode"] == "misattribution"]
    assert sum(c["variant"] == "true" for c in cases) + len(judged) == 40
    assert counts["reviewed"] == 40 and counts["misattributed"] == len(judged)
    assert all(c["expect"] == "refuse" for c in judged)
    for c in cases:
        quote = c["proposal"]["evidence"][0]["quote"]
        assert quote in c["sources"][-1]["text"], c["id"]
