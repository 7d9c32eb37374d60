"""Grounding a draft without claims: by its quotes alone, and a procedure's steps by them.

A note, a reference or a procedure has no subject and value for
:func:`~kgmem.memory.grounding.ground_claim` to check; what it asserts is its quotes. So each
quote must occur verbatim in a usable source of the caller's (not a recall tool, not a failed
tool). A procedure asserts more: its steps and triggers. Its steps are claims too, so with
explicit evidence each must be what the quotes say, in their words' order ("one coat of
primer" is no evidence for "two coats of primer"), and a trigger may name no number no quote
states; one such refusal refuses the whole draft, naming the step or trigger.

Pure (no store). The foreground gate (:mod:`kgmem.memory.planning`) and consolidation's
ground stage both call :func:`ground_unstructured`, so a procedure a model extracts is held
to exactly the rules an agent's draft is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

from kgmem.memory.grounding import source_authority
from kgmem.memory.grounding_types import DEFAULT_AUTHORITY_ORDER, GroundedEvidence
from kgmem.memory.model import Authority, DraftMemory, SourceRecord, SupportKind
from kgmem.memory.prepass import rank
from kgmem.memory.steps import unstated_numbers, unstated_steps
from kgmem.memory.surface import locate_quote

__all__ = ["QuoteRefusal", "UnstructuredCode", "UnstructuredResult", "ground_unstructured"]


class UnstructuredCode(StrEnum):
    UNKNOWN_SOURCE = "unknown_source"  # not the caller's source, or no quote
    QUOTE_NOT_USABLE = "quote_not_usable"  # not verbatim, or a recall or failed tool
    UNSTATED_STEP = "unstated_step"
    UNSTATED_TRIGGER = "unstated_trigger"  # a trigger names a number no quote states


@dataclass(frozen=True)
class QuoteRefusal:
    code: UnstructuredCode
    message: str  # names the evidence item, step or trigger at fault


@dataclass(frozen=True)
class UnstructuredResult:
    """The accepted quotes (none when the draft is refused) and every refusal."""

    items: tuple[GroundedEvidence, ...]
    refusals: tuple[QuoteRefusal, ...]
    authority: Authority | None  # the strongest authority of the accepted quotes

    @property
    def grounded(self) -> bool:
        return bool(self.items)

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(r.message for r in self.refusals)


def ground_unstructured(
    draft: DraftMemory,
    sources: Mapping[str, SourceRecord],
    order: Sequence[Authority] = DEFAULT_AUTHORITY_ORDER,
) -> UnstructuredResult:
    """Ground ``draft`` (which has no claims) by its quotes; ``sources`` holds only the
    caller's sources, by IRI; ``order`` lists authorities strongest first."""
    items: list[GroundedEvidence] = []
    refusals: list[QuoteRefusal] = []
    authority: Authority | None = None
    for index, item in enumerate(draft.evidence):
        record = sources.get(item.source)
        if record is None or item.quote is None:
            why = f"evidence {index}: unknown source or no quote"
            refusals.append(QuoteRefusal(UnstructuredCode.UNKNOWN_SOURCE, why))
            continue
        span = locate_quote(record.text, item.quote)
        if span is None or record.recall_tool or record.tool_succeeded is False:
            why = f"evidence {index}: quote not verbatim in a usable source"
            refusals.append(QuoteRefusal(UnstructuredCode.QUOTE_NOT_USABLE, why))
            continue
        said = source_authority(record, order)
        items.append(GroundedEvidence.at(record, span, index, item.support, said))
        if authority is None or rank(said, order) > rank(authority, order):
            authority = said
    explicit = all(e.support is SupportKind.EXPLICIT for e in draft.evidence)
    if draft.steps and items and explicit:
        refusals += _unstated(draft, [i.quote for i in items if i.quote])
        if refusals:
            items.clear()
    return UnstructuredResult(tuple(items), tuple(refusals), authority)


def _unstated(draft: DraftMemory, quotes: Sequence[str]) -> list[QuoteRefusal]:
    """A refusal per step the quotes do not state and per trigger naming a number they
    do not state."""
    out = [
        QuoteRefusal(
            UnstructuredCode.UNSTATED_STEP,
            f"steps[{index}]: {draft.steps[index]!r} is not stated by the quotes",
        )
        for index in unstated_steps(draft.steps, quotes)
    ]
    out += [
        QuoteRefusal(
            UnstructuredCode.UNSTATED_TRIGGER,
            f"triggers[{index}]: {draft.triggers[index]!r} names a number no quote states",
        )
        for index in unstated_numbers(draft.triggers, quotes)
    ]
    return out
