"""From the memory model's answer to drafts: each extracted claim and procedure becomes a
:class:`~kgmem.memory.model.DraftMemory` citing full source IRIs, or is dropped with a reason.

Dropped here: an item citing a source the model was not shown (it cannot have read it), one
no draft can hold (an object and a value, an episode without a time, a procedure without
steps), and a claim's alias no quote gives together with the name (the claim goes on without
it). A claim's draft has that one claim; a procedure's is a procedural draft without claims,
as an agent drafts one: title, steps, triggers, the entities it is about and its quotes, all
of them explicit support whatever the model labels them (a procedure read from a
conversation asserts its steps, so its quotes must state them: a "derived" label must not
exempt an invented step from the step check). Nothing here judges the quotes: grounding does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from hashlib import sha256

from pydantic import ValidationError
from rdflib import URIRef

from kgmem.memory.decisions import RefusedDraft
from kgmem.memory.model import (
    ClaimDraft,
    DraftMemory,
    EntityDraft,
    EvidenceDraft,
    MemoryKind,
    SupportKind,
)
from kgmem.pipeline.proposals import ExtractedClaim, ExtractedProcedure
from kgmem.pipeline.segment import ExcludedSource, RenderedSegment

__all__ = [
    "DropReason",
    "DroppedClaim",
    "ExtractedDraft",
    "ExtractedItem",
    "ExtractionResult",
    "refused_name",
    "to_drafts",
]

#: one item of the model's answer: a claim, or a procedure
ExtractedItem = ExtractedClaim | ExtractedProcedure


class DropReason(StrEnum):
    SOURCE_NOT_SHOWN = "source_not_shown"  # cites a source that was not in what it was shown
    INVALID_DRAFT = "invalid_draft"  # well-typed, but not a valid memory draft
    UNSUPPORTED_ALIAS = "unsupported_alias"  # an alias no quote gives together with the name


def _ref(index: int, item: ExtractedItem) -> str:
    return f"p{index:03d}" if isinstance(item, ExtractedProcedure) else f"{index:03d}"


@dataclass(frozen=True)
class DroppedClaim:
    index: int  # position in the model's answer (among its claims, or its procedures)
    reason: DropReason
    message: str
    claim: ExtractedItem

    @property
    def ref(self) -> str:
        """Where in the answer: ``003`` (a claim), ``p000`` (a procedure)."""
        return _ref(self.index, self.claim)


@dataclass(frozen=True)
class ExtractedDraft:
    index: int
    claim: ExtractedItem
    draft: DraftMemory

    @property
    def ref(self) -> str:
        """Where in the answer: ``003`` (a claim), ``p000`` (a procedure)."""
        return _ref(self.index, self.claim)


@dataclass(frozen=True)
class ExtractionResult:
    drafts: tuple[ExtractedDraft, ...]
    dropped: tuple[DroppedClaim, ...]
    excluded: tuple[ExcludedSource, ...]  # sources never shown to the model


def to_drafts(
    claims: Sequence[ExtractedClaim],
    rendered: RenderedSegment,
    excluded: tuple[ExcludedSource, ...] = (),
    *,
    procedures: Sequence[ExtractedProcedure] = (),
) -> ExtractionResult:
    """Each claim and each procedure as a draft citing full source IRIs, or dropped with its
    reason."""
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
    for index, procedure in enumerate(procedures):
        outcome = _to_draft(index, procedure, rendered.ids, excluded)
        if isinstance(outcome, DroppedClaim):
            dropped.append(outcome)
        else:
            drafts.append(ExtractedDraft(index, procedure, outcome))
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
    claim: ExtractedItem,
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
    if isinstance(claim, ExtractedProcedure) and not claim.steps:
        why = "steps: a procedure needs at least one step"
        return DroppedClaim(index, DropReason.INVALID_DRAFT, why, claim)
    try:
        if isinstance(claim, ExtractedProcedure):
            return _procedure_draft(claim, sources)
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


def _procedure_draft(procedure: ExtractedProcedure, sources: Sequence[URIRef]) -> DraftMemory:
    evidence = tuple(
        EvidenceDraft(source=str(iri), quote=ev.quote, support=SupportKind.EXPLICIT)
        for iri, ev in zip(sources, procedure.evidence, strict=True)
    )
    names = dict.fromkeys(" ".join(n.split()) for n in procedure.about)
    return DraftMemory(
        kind=MemoryKind.PROCEDURAL,
        title=" ".join(procedure.title.split())[:200],
        confidence=procedure.confidence,
        entities=tuple(EntityDraft(name=name) for name in names if name),
        evidence=evidence,
        source_refs=tuple(dict.fromkeys(str(iri) for iri in sources)),
        steps=tuple(procedure.steps),
        triggers=tuple(procedure.triggers),
    )


def refused_name(item: ExtractedItem) -> RefusedDraft:
    """What names a proposal that never became a draft in its refusal: the title its draft
    would have had, its kind, and the hash of the model's answer for it."""
    digest = sha256(item.model_dump_json().encode()).hexdigest()
    if isinstance(item, ExtractedProcedure):
        title = " ".join(item.title.split())[:200]
        return RefusedDraft(title, MemoryKind.PROCEDURAL, digest)
    return RefusedDraft(_title(item), MemoryKind(item.kind), digest)
