"""The extract stage: what the model is shown, and each lie caught (here or at grounding)."""

from __future__ import annotations

from datetime import UTC, datetime
from itertools import count
from typing import Any

import pytest
from rdflib import URIRef

from kgmem.errors import ModelOutputError
from kgmem.memory.grounding import GroundingContext, RefusalCode
from kgmem.memory.model import (
    Authority,
    MemoryKind,
    Role,
    SourceRecord,
    SourceType,
    SupportKind,
)
from kgmem.pipeline import (
    DropReason,
    ExclusionReason,
    ExtractClaims,
    ExtractedClaim,
    ExtractionResult,
    GroundedDraft,
    RenderedSegment,
    Segment,
    extract_claims,
    ground_extraction,
    to_drafts,
)
from tests.pipeline import scripted
from tests.pipeline.scripted import (
    ScriptedEngine,
    claim,
    claims_reply,
    procedure,
    quote,
    scripted_lm,
)

CTX = GroundingContext(user="Alice", entities={"Robert": ("Bob",)})
AT = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
_ids = count()


def _record(text: str, type_: SourceType, authority: Authority, **kw: Any) -> SourceRecord:
    iri = URIRef(f"https://w3id.org/kgmem/user/alice/msg/{next(_ids)}")
    return SourceRecord(iri, type_, text, authority, AT, chat="c1", **kw)


def user(text: str, turn: int = 0) -> SourceRecord:
    return _record(text, SourceType.USER_MESSAGE, Authority.USER, turn=turn, role=Role.USER)


def agent(text: str, turn: int = 1) -> SourceRecord:
    kw: dict[str, Any] = {"turn": turn, "role": Role.ASSISTANT}
    return _record(text, SourceType.AGENT_MESSAGE, Authority.AGENT, **kw)


def tool(text: str, name: str, ok: bool = True) -> SourceRecord:
    kw: dict[str, Any] = {"role": Role.TOOL, "tool_name": name, "tool_succeeded": ok}
    return _record(text, SourceType.TOOL_RESULT, Authority.TOOL, **kw)


WORK = user("I work at Acme since 2019. My birthday is 12 March 1990.")
RECALL = tool("Memory: the user works at Acme.", "memory_search")
FAILED = tool("Error: Acme directory unreachable; user works at Initech", "web_fetch", ok=False)
SEGMENT = Segment((WORK, RECALL, FAILED))


def _extract(*claims: dict[str, Any], segment: Segment = SEGMENT) -> tuple[ExtractionResult, str]:
    engine = ScriptedEngine({ExtractClaims: [claims_reply(*claims)]})
    result = extract_claims(segment, scripted_lm(engine), ["Robert", "Acme"])
    (request,) = engine.calls(ExtractClaims)
    return result, scripted.prompt_of(request)


def _grounded(result: ExtractionResult, segment: Segment = SEGMENT) -> GroundedDraft:
    (item,) = ground_extraction(result, segment.sources, CTX)
    return item


def test_extract_claims_makes_a_grounded_draft_citing_the_source_iri() -> None:
    result, _ = _extract(claim("user", "worksFor", quote("S1", "I work at Acme"), object="Acme"))
    (item,) = result.drafts
    assert item.draft.kind is MemoryKind.SEMANTIC
    assert item.draft.evidence[0].source == str(WORK.iri)
    assert item.draft.source_refs == (str(WORK.iri),)
    assert item.draft.claims[0].object == "Acme"
    assert _grounded(result).grounded


def test_extract_claims_shows_the_model_ids_turns_and_verbatim_text() -> None:
    _, prompt = _extract()
    assert "=== S1 | turn 0 | user message |" in prompt
    assert WORK.text in prompt
    assert "Robert" in prompt  # known entity names are passed on


def test_extract_claims_never_shows_recall_or_failed_tools() -> None:
    result, prompt = _extract()
    assert RECALL.text not in prompt and FAILED.text not in prompt
    assert "=== S2" not in prompt
    reasons = {(x.iri, x.reason) for x in result.excluded}
    assert reasons == {
        (RECALL.iri, ExclusionReason.RECALL_TOOL),
        (FAILED.iri, ExclusionReason.FAILED_TOOL),
    }


def test_extract_claims_skips_the_model_when_nothing_can_be_shown() -> None:
    engine = ScriptedEngine()
    result = extract_claims(Segment((RECALL,)), scripted_lm(engine))
    assert result.drafts == () and len(result.excluded) == 1
    assert engine.requests == []


@pytest.mark.parametrize(
    "answer",
    [scripted.BROKEN_JSON, scripted.NO_FIELDS, scripted.wrong_types(), scripted.missing_field()],
    ids=["broken-json", "no-fields", "wrong-types", "missing-field"],
)
def test_extract_claims_refuses_malformed_output_naming_the_stage(answer: str) -> None:
    engine = ScriptedEngine({ExtractClaims: [answer]})
    with pytest.raises(ModelOutputError, match="stage extract") as caught:
        extract_claims(SEGMENT, scripted_lm(engine))
    assert caught.value.stage == "extract"


def test_extract_claims_drops_a_citation_of_a_source_not_shown() -> None:
    result, _ = _extract(claim("user", "worksFor", quote("S7", "I work at Acme"), object="Acme"))
    assert result.drafts == ()
    (dropped,) = result.dropped
    assert dropped.reason is DropReason.SOURCE_NOT_SHOWN
    assert "S7" in dropped.message


def test_extract_claims_drops_a_recall_tool_echo_cited_by_iri() -> None:
    echo = scripted.recall_echo(str(RECALL.iri), "the user works at Acme")
    result, _ = _extract(echo)
    (dropped,) = result.dropped
    assert dropped.reason is DropReason.SOURCE_NOT_SHOWN
    assert "recall_tool" in dropped.message


def test_grounding_refuses_a_recall_tool_echo_that_reaches_it() -> None:
    # Defence in depth: even a draft that cites a recall result cannot ground on it.
    shown = RenderedSegment("", {"S1": WORK.iri, "S2": RECALL.iri})
    echo = ExtractedClaim.model_validate(scripted.recall_echo("S2", "the user works at Acme"))
    item = _grounded(to_drafts([echo], shown))
    assert not item.grounded
    assert item.refusals == (RefusalCode.RECALL_TOOL,)


@pytest.mark.parametrize(
    ("lie", "code"),
    [
        (scripted.invented_quote("S1"), RefusalCode.QUOTE_NOT_IN_SOURCE),
        (scripted.paraphrase("S1", "I am employed by Acme"), RefusalCode.QUOTE_NOT_IN_SOURCE),
        (scripted.paraphrase("S1", "i work at  acme"), RefusalCode.QUOTE_NOT_IN_SOURCE),
        (
            scripted.changed_value("S1", "My birthday is 12 March 1990", "12 March 1991"),
            RefusalCode.QUOTE_DOES_NOT_STATE_VALUE,
        ),
    ],
    ids=["invented-quote", "paraphrase", "case-and-space", "changed-value"],
)
def test_a_lie_is_extracted_then_refused_at_grounding(
    lie: dict[str, Any], code: RefusalCode
) -> None:
    result, _ = _extract(lie)
    assert len(result.drafts) == 1  # extraction does not judge: grounding does
    item = _grounded(result)
    assert not item.grounded
    assert code in item.refusals


def test_agent_prose_alone_is_extracted_then_refused_at_grounding() -> None:
    said = agent("You work at Acme, I believe.")
    segment = Segment((said,))
    lie = claim("user", "worksFor", quote("S1", "You work at Acme"), object="Acme")
    result, _ = _extract(lie, segment=segment)
    item = _grounded(result, segment)
    assert not item.grounded and RefusalCode.AGENT_ONLY in item.refusals


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        (claim("user", "worksFor", quote("S1", "I work at Acme"), object="Acme", value="x"), ""),
        (
            claim("user", "started", quote("S1", "I work at Acme since 2019"), value="2019")
            | {"kind": "episodic"},
            "occurred_at",
        ),
    ],
    ids=["object-and-value", "episode-without-time"],
)
def test_extract_claims_drops_a_claim_no_draft_can_hold(bad: dict[str, Any], where: str) -> None:
    good = claim("user", "worksFor", quote("S1", "I work at Acme"), object="Acme")
    result, _ = _extract(bad, good)
    assert [d.index for d in result.drafts] == [1]
    (dropped,) = result.dropped
    assert dropped.index == 0 and dropped.reason is DropReason.INVALID_DRAFT
    assert where in dropped.message


def test_extract_claims_passes_later_stage_lies_on_as_drafts() -> None:
    """An undeclared type, one person under two names, a contradiction of a pinned fact are
    well grounded here; classify, resolve and reconcile catch them."""
    bob = user("Bob, my brother Robert, is a dentist. I live in Lyon now.", turn=2)
    segment = Segment((bob,))
    said = "Bob, my brother Robert, is a dentist"
    lies = [
        *scripted.two_names("S1", "Robert", "Bob", said),
        scripted.contradiction("S1", "I live in Lyon now", "Lyon"),
        scripted.undeclared_type("S1", said, "Dentist") | {"subject": "Robert"},
    ]
    result, _ = _extract(*lies, segment=segment)
    assert len(result.drafts) == 4 and result.dropped == ()
    subjects = [d.draft.claims[0].subject for d in result.drafts]
    assert subjects == ["Robert", "Bob", "user", "Robert"]


PREP = user("Before painting: fill the cracks, sand everything, then one coat of primer.")
PREP_QUOTE = "fill the cracks, sand everything, then one coat of primer"
PREP_STEPS = ["fill the cracks", "sand everything", "one coat of primer"]


def _procedures(*procedures: dict[str, Any]) -> ExtractionResult:
    engine = ScriptedEngine({ExtractClaims: [claims_reply(procedures=procedures)]})
    return extract_claims(Segment((PREP,)), scripted_lm(engine))


def test_an_extracted_procedure_is_a_procedural_draft_without_claims() -> None:
    said = procedure(
        "Wall prep",
        PREP_STEPS,
        quote("S1", PREP_QUOTE, "inferred"),
        triggers=["before painting"],
        about=["the kitchen", " the  kitchen "],
    )
    (item,) = _procedures(said).drafts
    assert item.ref == "p000"
    draft = item.draft
    assert (draft.kind, draft.title, draft.claims) == (MemoryKind.PROCEDURAL, "Wall prep", ())
    assert list(draft.steps) == PREP_STEPS and draft.triggers == ("before painting",)
    assert [e.name for e in draft.entities] == ["the kitchen"]
    assert [(e.source, e.support) for e in draft.evidence] == [
        (str(PREP.iri), SupportKind.EXPLICIT)  # its quotes must state its steps
    ]
    grounded = ground_extraction(_procedures(said), {str(PREP.iri): PREP}, CTX)
    assert [g.grounded for g in grounded] == [True]


def test_an_extracted_procedure_with_an_unstated_step_is_refused_at_grounding() -> None:
    said = procedure("Wall prep", ["two coats of primer"], quote("S1", PREP_QUOTE))
    (item,) = ground_extraction(_procedures(said), {str(PREP.iri): PREP}, CTX)
    assert not item.grounded
    assert item.quotes is not None and "steps[0]" in item.quotes.reasons[0]


@pytest.mark.parametrize(
    ("said", "reason", "where"),
    [
        (procedure("Wall prep", [], quote("S1", PREP_QUOTE)), DropReason.INVALID_DRAFT, "steps"),
        (procedure(" ", PREP_STEPS, quote("S1", PREP_QUOTE)), DropReason.INVALID_DRAFT, "title"),
        (
            procedure("Wall prep", PREP_STEPS, quote("S4", PREP_QUOTE)),
            DropReason.SOURCE_NOT_SHOWN,
            "S4",
        ),
    ],
    ids=["no-steps", "no-title", "unshown-source"],
)
def test_a_procedure_no_draft_can_hold_is_dropped_at_extract(
    said: dict[str, Any], reason: DropReason, where: str
) -> None:
    result = _procedures(said)
    assert result.drafts == ()
    (dropped,) = result.dropped
    assert (dropped.ref, dropped.reason) == ("p000", reason) and where in dropped.message
