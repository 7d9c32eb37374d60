"""Grounding a draft without claims: its quotes, and a procedure's steps and triggers by them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rdflib import URIRef

from kgmem.memory.model import (
    Authority,
    DraftMemory,
    MemoryKind,
    Role,
    SourceRecord,
    SourceType,
)
from kgmem.memory.unstructured import UnstructuredCode, ground_unstructured

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
SAID = "When you deploy: merge to main, wait for CI, then watch the dashboard for 15 minutes."
QUOTE = "merge to main, wait for CI, then watch the dashboard for 15 minutes"
STEPS = ["merge to main", "wait for CI", "watch the dashboard for 15 minutes"]


def _source(text: str, n: int, **extra: Any) -> SourceRecord:
    iri = URIRef(f"https://w3id.org/kgmem/user/alice/msg/{n}")
    kw: dict[str, Any] = {"chat": "c1", "turn": n, "role": Role.USER, **extra}
    return SourceRecord(iri, SourceType.USER_MESSAGE, text, Authority.USER, AT, **kw)


SOURCE = _source(SAID, 0)
SOURCES = {str(SOURCE.iri): SOURCE}


def _draft(*quotes: tuple[str, str], **fields: Any) -> DraftMemory:
    evidence = [{"source": source, "quote": text} for source, text in quotes]
    payload = {"kind": MemoryKind.PROCEDURAL, "title": "Deploy", "evidence": evidence}
    return DraftMemory.model_validate(payload | fields)


def test_a_procedure_its_quote_states_is_grounded_with_the_quote_span() -> None:
    result = ground_unstructured(_draft((str(SOURCE.iri), QUOTE), steps=STEPS), SOURCES)
    assert result.grounded and result.refusals == () and result.authority is Authority.USER
    [item] = result.items
    assert SAID[item.start : item.end] == QUOTE == item.quote


def test_a_changed_number_refuses_the_whole_procedure_naming_the_step() -> None:
    changed = [*STEPS[:2], "watch the dashboard for 5 minutes"]
    result = ground_unstructured(_draft((str(SOURCE.iri), QUOTE), steps=changed), SOURCES)
    assert not result.grounded and result.items == ()
    [refusal] = result.refusals
    assert refusal.code is UnstructuredCode.UNSTATED_STEP and refusal.message.startswith("steps[2]")


def test_a_trigger_naming_a_number_no_quote_states_refuses_the_procedure() -> None:
    draft = _draft(
        (str(SOURCE.iri), QUOTE), steps=STEPS, triggers=["the build takes over 20 minutes"]
    )
    [refusal] = ground_unstructured(draft, SOURCES).refusals
    assert refusal.code is UnstructuredCode.UNSTATED_TRIGGER and "triggers[0]" in refusal.message


def test_a_quote_from_nowhere_or_from_a_recall_tool_grounds_nothing() -> None:
    recall = _source("Memory: merge to main", 1, recall_tool=True)
    sources = SOURCES | {str(recall.iri): recall}
    draft = _draft(("urn:elsewhere", QUOTE), (str(recall.iri), "merge to main"))
    result = ground_unstructured(draft, sources)
    assert not result.grounded
    codes = [r.code for r in result.refusals]
    assert codes == [UnstructuredCode.UNKNOWN_SOURCE, UnstructuredCode.QUOTE_NOT_USABLE]
