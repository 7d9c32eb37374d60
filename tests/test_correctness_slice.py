"""A fast slice of the unreliable-author suite (``benchmarks/correctness.py``) as a guard.

A synthetic world written here (no ``../shared``): a handful of cases per mode, each run as
its own user through the real write path (first-hand sources, then ``gate.draft``) on an
on-disk store, with the outcome the design asks for asserted case by case.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import load_settings

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CORE = Path(__file__).resolve().parents[1] / "benchmarks" / "correctness_core.py"
JOB = {
    "name": "currentJobAt",
    "domain": "schema:Person",
    "range": "schema:Organization",
    "functional": True,
}


def _core() -> ModuleType:
    spec = importlib.util.spec_from_file_location("correctness_core", CORE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("correctness_core", module)
    spec.loader.exec_module(module)
    return module


core = _core()


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

# (case, kgmem's outcome)
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
        "pending",
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
