"""Extract (model): claims and procedures with exact quotes from one segment, as drafts;
nothing trusted.

The model sees the segment's admissible sources (see :mod:`kgmem.pipeline.segment`) and
answers a list of :class:`~kgmem.pipeline.proposals.ExtractedClaim` and a list of
:class:`~kgmem.pipeline.proposals.ExtractedProcedure`. Output that does not parse as those
types raises :class:`~kgmem.errors.ModelOutputError` naming the stage. Each claim, and each
procedure, then becomes a draft or is dropped with a recorded reason
(:mod:`kgmem.pipeline.stages.extract.drafts`); a dropped one's refusal is a decision in the feed,
written with the pass (:mod:`kgmem.pipeline.refusals`). A procedure's steps are checked at
grounding by the same code as an agent's (:func:`~kgmem.memory.ground_unstructured`).

Grounding is the next stage's work; :func:`ground_extraction` runs it on the drafts so a pass
(or a test) sees each refusal. A pass draft's key is ``<item>#<ref>``: ``003`` for the
fourth claim of the answer, ``p000`` for its first procedure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rdflib import URIRef

from kgmem.errors import ModelOutputError
from kgmem.memory.grounding import GroundingContext, GroundingResult, RefusalCode, ground_claim
from kgmem.memory.model import (
    DraftMemory,
    SourceRecord,
)
from kgmem.memory.unstructured import UnstructuredResult, ground_unstructured
from kgmem.pipeline.contributions import Contributions, is_queued_draft
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import ExtractedClaim, ExtractedProcedure
from kgmem.pipeline.refusals import refused
from kgmem.pipeline.segment import Segment
from kgmem.pipeline.stages import ItemKey, ItemResult, PassContext, PassState, StageName
from kgmem.pipeline.stages.extract.drafts import (
    DroppedClaim,
    DropReason,
    ExtractedDraft,
    ExtractedItem,
    ExtractionResult,
    refused_name,
    to_drafts,
)
from kgmem.pipeline.worklist import Dropped, PassDraft, Worklist

if TYPE_CHECKING:
    import dspy

__all__ = [
    "EXTRACT_STAGE",
    "DropReason",
    "DroppedClaim",
    "ExtractStage",
    "ExtractedDraft",
    "ExtractedItem",
    "ExtractionResult",
    "GroundedDraft",
    "extract_claims",
    "ground_extraction",
    "to_drafts",
]

EXTRACT_STAGE = "extract"


@dataclass(frozen=True)
class GroundedDraft:
    """A draft with the grounding result of each of its claims (a procedure: of its quotes,
    steps and triggers, as ``quotes``)."""

    extracted: ExtractedDraft
    results: tuple[GroundingResult, ...]
    quotes: UnstructuredResult | None = None

    @property
    def grounded(self) -> bool:
        if self.quotes is not None:
            return self.quotes.grounded
        return bool(self.results) and all(r.grounded for r in self.results)

    @property
    def refusals(self) -> tuple[RefusalCode, ...]:
        return tuple(refusal.code for r in self.results for refusal in r.reasons)


def extract_claims(
    segment: Segment, lm: dspy.LM, known_entities: Iterable[str] = ()
) -> ExtractionResult:
    """Ask ``lm`` for the claims of ``segment``; one model call (none if nothing is shown)."""
    rendered = segment.render()
    if not rendered.ids:
        return ExtractionResult((), (), segment.excluded)
    from kgmem.pipeline.programs import run_signature
    from kgmem.pipeline.signatures import ExtractClaims

    answer = run_signature(
        ExtractClaims,
        lm,
        EXTRACT_STAGE,
        segment=rendered.text,
        known_entities=sorted(set(known_entities)),
    )
    claims, procedures = answer.claims, answer.procedures
    if not isinstance(claims, list) or not all(isinstance(c, ExtractedClaim) for c in claims):
        raise ModelOutputError(EXTRACT_STAGE, "claims is not a list of claims")
    if not isinstance(procedures, list) or not all(
        isinstance(p, ExtractedProcedure) for p in procedures
    ):
        raise ModelOutputError(EXTRACT_STAGE, "procedures is not a list of procedures")
    return to_drafts(claims, rendered, segment.excluded, procedures=procedures)


def ground_extraction(
    result: ExtractionResult,
    sources: Mapping[str, SourceRecord],
    ctx: GroundingContext,
) -> tuple[GroundedDraft, ...]:
    """Run deterministic grounding on every claim of every draft, and on every procedure's
    quotes, steps and triggers; ``sources`` by IRI."""
    return tuple(
        GroundedDraft(item, (), ground_unstructured(item.draft, sources))
        if isinstance(item.claim, ExtractedProcedure)
        else GroundedDraft(
            item,
            tuple(ground_claim(c, item.draft.evidence, sources, ctx) for c in item.draft.claims),
        )
        for item in result.drafts
    )


class ExtractStage:
    """The extract stage: one item per conversation (its sources, in order) and one per
    queued draft. A conversation's claims come from the memory model; a queued draft is
    already structured and passes through. Without a model a conversation yields nothing
    (its sources are recorded as waiting) — the sweep does not start such passes."""

    name = StageName.EXTRACT

    def __init__(self, ports: PassPorts, contributions: Contributions) -> None:
        self._ports, self._contributions = ports, contributions

    def items(self, ctx: PassContext, state: PassState) -> list[ItemKey]:
        keys: set[str] = set()
        records = self._ports.sources.get(ctx.uid, [str(c) for c in state.contribution_iris])
        for iri in state.contribution_iris:
            if is_queued_draft(iri):
                keys.add(str(iri))
            elif str(iri) in records:
                keys.add(_conversation(records[str(iri)]))
        return sorted(keys)

    def run_item(self, ctx: PassContext, state: PassState, item: ItemKey) -> ItemResult:
        if is_queued_draft(item):
            queued = self._contributions.queued(ctx.uid, [URIRef(item)])
            if not queued:
                dropped = Dropped(
                    key=item, stage=self.name, code="missing", message="queued draft is gone"
                )
                return ItemResult(value=Worklist(dropped=(dropped,)).to_json())
            draft = PassDraft(key=f"{item}#000", draft=queued[URIRef(item)], origin=(item,))
            return ItemResult(value=Worklist(drafts=(draft,)).to_json())
        records = self._ports.sources.get(ctx.uid, [str(c) for c in state.contribution_iris])
        mine = sorted(
            (r for r in records.values() if _conversation(r) == item),
            key=lambda r: (r.timestamp, r.turn if r.turn is not None else -1, str(r.iri)),
        )
        unique = tuple(dict.fromkeys(mine))
        lm = self._ports.models.lm(ModelGroup.MEMORY)
        if lm is None:
            message = f"{len(unique)} sources wait for a model to extract claims from"
            dropped = Dropped(key=item, stage=self.name, code="no_model", message=message)
            return ItemResult(value=Worklist(dropped=(dropped,)).to_json())
        result = extract_claims(Segment(unique), lm)
        origin = tuple(str(r.iri) for r in unique)
        when = {str(r.iri): r.timestamp for r in unique}
        drafts = tuple(
            PassDraft(key=f"{item}#{d.ref}", draft=_valid_from(d.draft, when), origin=origin)
            for d in result.drafts
        )
        dropped_claims = tuple(_dropped(ctx, item, d) for d in result.dropped)
        return ItemResult(value=Worklist(drafts=drafts, dropped=dropped_claims).to_json())


def _dropped(ctx: PassContext, item: str, claim: DroppedClaim) -> Dropped:
    """A claim or procedure dropped here: its refusal is a decision in the feed, unless only
    its alias was dropped (the claim goes on without it)."""
    key, code, message = f"{item}#{claim.ref}", claim.reason, claim.message
    if claim.reason is DropReason.UNSUPPORTED_ALIAS:
        return Dropped(key=f"{key}/alias", stage=StageName.EXTRACT, code=code, message=message)
    drop = Dropped(key=key, stage=StageName.EXTRACT, code=code, message=message)
    return refused(ctx, drop, refused_name(claim.claim))


def _valid_from(draft: DraftMemory, when: Mapping[str, datetime]) -> DraftMemory:
    """A claim read from a conversation holds from when it was said (the latest source it
    cites), unless the model gave a time: a newer statement then supersedes an older one."""
    times = [when[e.source] for e in draft.evidence if e.source in when]
    if not times:
        return draft
    claims = tuple(
        c if c.valid_from is not None else c.model_copy(update={"valid_from": max(times)})
        for c in draft.claims
    )
    return draft.model_copy(update={"claims": claims})


def _conversation(record: SourceRecord) -> str:
    """The unit a source is extracted with: its chat, else its task, else the loose notes."""
    if record.chat:
        return f"chat:{record.chat}"
    if record.task_id:
        return f"task:{record.task_id}"
    return "notes"
