"""Extract (model): claims with exact quotes from one segment, as drafts; nothing trusted.

The model sees the segment's admissible sources (see :mod:`kgmem.pipeline.segment`) and
answers a list of :class:`~kgmem.pipeline.proposals.ExtractedClaim`. Output that does not
parse as that type raises :class:`~kgmem.errors.ModelOutputError` naming the stage. Each claim
then becomes a :class:`~kgmem.memory.model.DraftMemory` or is dropped with a recorded reason:
a claim citing a source it was not shown (it cannot have read it), or one a draft refuses
(an object and a value, an episode without a time); its refusal is a decision in the feed,
written with the pass (:mod:`kgmem.pipeline.refusals`). Grounding is the next stage's work;
:func:`ground_extraction` runs it on the drafts so a pass (or a test) sees each refusal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from hashlib import sha256
from typing import TYPE_CHECKING

from pydantic import ValidationError
from rdflib import URIRef

from kgmem.errors import ModelOutputError
from kgmem.memory.decisions import RefusedDraft
from kgmem.memory.grounding import GroundingContext, GroundingResult, RefusalCode, ground_claim
from kgmem.memory.model import (
    ClaimDraft,
    DraftMemory,
    EntityDraft,
    EvidenceDraft,
    MemoryKind,
    SourceRecord,
)
from kgmem.pipeline.contributions import Contributions, is_queued_draft
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import ExtractedClaim
from kgmem.pipeline.refusals import refused
from kgmem.pipeline.segment import ExcludedSource, RenderedSegment, Segment
from kgmem.pipeline.stages import ItemKey, ItemResult, PassContext, PassState, StageName
from kgmem.pipeline.worklist import Dropped, PassDraft, Worklist

if TYPE_CHECKING:
    import dspy

__all__ = [
    "EXTRACT_STAGE",
    "DropReason",
    "DroppedClaim",
    "ExtractStage",
    "ExtractedDraft",
    "ExtractionResult",
    "GroundedDraft",
    "extract_claims",
    "ground_extraction",
    "to_drafts",
]

EXTRACT_STAGE = "extract"


class DropReason(StrEnum):
    SOURCE_NOT_SHOWN = "source_not_shown"  # cites a source that was not in what it was shown
    INVALID_DRAFT = "invalid_draft"  # well-typed, but not a valid memory draft
    UNSUPPORTED_ALIAS = "unsupported_alias"  # an alias no quote gives together with the name


@dataclass(frozen=True)
class DroppedClaim:
    index: int  # position in the model's answer
    reason: DropReason
    message: str
    claim: ExtractedClaim


@dataclass(frozen=True)
class ExtractedDraft:
    index: int
    claim: ExtractedClaim
    draft: DraftMemory


@dataclass(frozen=True)
class ExtractionResult:
    drafts: tuple[ExtractedDraft, ...]
    dropped: tuple[DroppedClaim, ...]
    excluded: tuple[ExcludedSource, ...]  # sources never shown to the model


@dataclass(frozen=True)
class GroundedDraft:
    """A draft with the grounding result of each of its claims."""

    extracted: ExtractedDraft
    results: tuple[GroundingResult, ...]

    @property
    def grounded(self) -> bool:
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
    claims = answer.claims
    if not isinstance(claims, list) or not all(isinstance(c, ExtractedClaim) for c in claims):
        raise ModelOutputError(EXTRACT_STAGE, "claims is not a list of claims")
    return to_drafts(claims, rendered, segment.excluded)


def to_drafts(
    claims: Sequence[ExtractedClaim],
    rendered: RenderedSegment,
    excluded: tuple[ExcludedSource, ...] = (),
) -> ExtractionResult:
    """Each claim as a draft citing full source IRIs, or dropped with its reason."""
    drafts: list[ExtractedDraft] = []
    dropped: list[DroppedClaim] = []
    for index, claim in enumerate(claims):
        claim, unsupported = _evidenced_aliases(claim)
        dropped += [
            DroppedClaim(index, DropReason.UNSUPPORTED_ALIAS, why, claim) for why in unsupported
        ]
        outcome = _to_draft(index, claim, rendered.ids, excluded)
        if isinstance(outcome, DroppedClaim):
            dropped.append(outcome)
        else:
            drafts.append(ExtractedDraft(index, claim, outcome))
    return ExtractionResult(tuple(drafts), tuple(dropped), excluded)


def _cited(label: str, ids: Mapping[str, URIRef]) -> URIRef | None:
    """The IRI a citation names: a shown id (S3), or the full IRI of a shown source."""
    key = label.strip().strip("[]")
    if key in ids:
        return ids[key]
    return next((iri for iri in ids.values() if str(iri) == key), None)


def _unshown(label: str, excluded: tuple[ExcludedSource, ...]) -> str:
    for item in excluded:
        if str(item.iri) == label.strip():
            why = f"held back from the model ({item.reason.value})"
            return f"{label!r} was {why} and cannot be cited"
    return f"{label!r} is not one of the sources the model was shown"


def _to_draft(
    index: int,
    claim: ExtractedClaim,
    ids: Mapping[str, URIRef],
    excluded: tuple[ExcludedSource, ...],
) -> DraftMemory | DroppedClaim:
    sources: list[URIRef] = []
    for ev in claim.evidence:
        iri = _cited(ev.source, ids)
        if iri is None:
            why = _unshown(ev.source, excluded)
            return DroppedClaim(index, DropReason.SOURCE_NOT_SHOWN, why, claim)
        sources.append(iri)
    try:
        return _draft(claim, sources)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "draft"
        why = f"{where}: {first['msg']}"
        return DroppedClaim(index, DropReason.INVALID_DRAFT, why, claim)


def _evidenced_aliases(claim: ExtractedClaim) -> tuple[ExtractedClaim, list[str]]:
    """The claim with only the aliases a quote gives together with the name (an alias is an
    identity claim too: "Robert, Bob to his friends" evidences it, a bare "Bob" does not)."""
    quotes = [ev.quote.casefold() for ev in claim.evidence]
    unsupported: list[str] = []
    kept: dict[str, list[str]] = {}
    for field, name in (("subject_aliases", claim.subject), ("object_aliases", claim.object)):
        kept[field] = []
        for alias in getattr(claim, field):
            together = name is not None and any(
                name.casefold() in q and alias.casefold() in q for q in quotes
            )
            if together:
                kept[field].append(alias)
            else:
                unsupported.append(f"{alias!r} as another name of {name!r}: no quote gives both")
    return claim.model_copy(update=kept), unsupported


def _entities(claim: ExtractedClaim) -> tuple[EntityDraft, ...]:
    pairs = ((claim.subject, claim.subject_aliases), (claim.object, claim.object_aliases))
    return tuple(
        EntityDraft(name=name, aliases=tuple(aliases))
        for name, aliases in pairs
        if name is not None and aliases
    )


def _title(claim: ExtractedClaim) -> str:
    if claim.statement.strip():
        return " ".join(claim.statement.split())[:200]
    target = claim.object if claim.object is not None else claim.value
    words = [claim.subject, "not" if claim.negated else "", claim.predicate, target or ""]
    return " ".join(" ".join(words).split())[:200]


def _draft(claim: ExtractedClaim, sources: Sequence[URIRef]) -> DraftMemory:
    evidence = tuple(
        EvidenceDraft(source=str(iri), quote=ev.quote, support=ev.support)
        for iri, ev in zip(sources, claim.evidence, strict=True)
    )
    structured = ClaimDraft(
        subject=claim.subject,
        predicate=claim.predicate,
        object=claim.object,
        value=claim.value,
        negated=claim.negated,
    )
    return DraftMemory(
        kind=MemoryKind(claim.kind),
        title=_title(claim),
        excerpt=" ".join(claim.statement.split())[:500],
        confidence=claim.confidence,
        entities=_entities(claim),
        claims=(structured,),
        evidence=evidence,
        occurred_at=claim.occurred_at,
        source_refs=tuple(dict.fromkeys(str(iri) for iri in sources)),
    )


def ground_extraction(
    result: ExtractionResult,
    sources: Mapping[str, SourceRecord],
    ctx: GroundingContext,
) -> tuple[GroundedDraft, ...]:
    """Run deterministic grounding on every claim of every draft; ``sources`` by IRI."""
    return tuple(
        GroundedDraft(
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
            PassDraft(key=f"{item}#{d.index:03d}", draft=_valid_from(d.draft, when), origin=origin)
            for d in result.drafts
        )
        dropped_claims = tuple(_dropped(ctx, item, d) for d in result.dropped)
        return ItemResult(value=Worklist(drafts=drafts, dropped=dropped_claims).to_json())


def _dropped(ctx: PassContext, item: str, claim: DroppedClaim) -> Dropped:
    """A claim dropped here: its refusal is a decision in the feed, unless only its alias
    was dropped (the claim goes on without it)."""
    key, code, message = f"{item}#{claim.index:03d}", claim.reason, claim.message
    if claim.reason is DropReason.UNSUPPORTED_ALIAS:
        return Dropped(key=f"{key}/alias", stage=StageName.EXTRACT, code=code, message=message)
    drop = Dropped(key=key, stage=StageName.EXTRACT, code=code, message=message)
    return refused(ctx, drop, _named(claim.claim))


def _named(claim: ExtractedClaim) -> RefusedDraft:
    """What names a claim that never became a draft in its refusal: the title its draft
    would have had, its kind, and the hash of the model's answer for it."""
    digest = sha256(claim.model_dump_json().encode()).hexdigest()
    return RefusedDraft(_title(claim), MemoryKind(claim.kind), digest)


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
