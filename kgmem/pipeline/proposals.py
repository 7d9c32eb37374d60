"""The typed values model stages read and write: what a model may propose, field by field.

Pydantic models with ``extra="forbid"``: a misnamed or extra field is malformed output, not
something to guess at. Field descriptions reach the model in the JSON schema DSPy shows it.
Nothing here is trusted: extracted claims go on to deterministic grounding, chosen terms and
candidates are checked against what was offered, a schema patch is validated before commit.
No DSPy import here, so deterministic code can use these types cheaply.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from kgmem.memory.model import SupportKind

__all__ = [
    "NEW_ENTITY",
    "NO_TERM",
    "EntityCandidate",
    "EntityChoice",
    "ExtractedClaim",
    "ExtractedEvidence",
    "ExtractedProcedure",
    "PageFact",
    "PageMemory",
    "SchemaPatch",
    "TermCandidate",
    "TermChoice",
    "TermDecision",
    "UndeclaredTerm",
]

NO_TERM = "none"  # ClassifyTerm: no candidate fits
NEW_ENTITY = "new"  # ResolveTieBreak: no candidate is the mention

ClaimKind = Literal["semantic", "procedural", "episodic"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ExtractedEvidence(_Model):
    source: str = Field(description="the id of a source shown in the segment, e.g. S3")
    quote: str = Field(description="words copied character for character from that source")
    support: SupportKind = Field(
        description="explicit: the quote states the claim; derived: it follows from the quote "
        "in one step; inferred: plausible from the quote but not stated"
    )


class ExtractedClaim(_Model):
    subject: str = Field(description='who or what the claim is about; "user" for the user')
    predicate: str = Field(description="an ontology term (CURIE such as schema:worksFor) or words")
    object: str | None = Field(default=None, description="the entity it relates to, if any")
    value: str | None = Field(default=None, description="a literal value (date, number, text)")
    negated: bool = Field(default=False, description="true when the source says it is NOT so")
    kind: ClaimKind = Field(
        description="semantic: a fact or relation; procedural: a how-to, rule or preference; "
        "episodic: an event at a time"
    )
    occurred_at: datetime | None = Field(
        default=None, description="ISO 8601; required for episodic claims, else null"
    )
    statement: str = Field(default="", description="the claim as one short plain sentence")
    subject_aliases: list[str] = Field(
        default_factory=list,
        description="other names a quote itself gives the subject (Robert, 'Bob to friends')",
    )
    object_aliases: list[str] = Field(
        default_factory=list, description="other names a quote itself gives the object"
    )
    evidence: list[ExtractedEvidence] = Field(description="one or more quotes that state it")
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = Field(
        description="0 to 1: how sure you are the quotes state exactly this claim"
    )


class ExtractedProcedure(_Model):
    """A how-to the sources state as steps: what the model proposes becomes a procedural
    memory only if every step is what its quotes say, in their order."""

    title: str = Field(description="what the routine is for, in a few words")
    steps: list[str] = Field(
        description="each step in the sources' own words (numbers, amounts, names as said), "
        "in the order they give them"
    )
    triggers: list[str] = Field(
        default_factory=list,
        description="when it applies, in the sources' words ('before painting'); may be empty",
    )
    about: list[str] = Field(
        default_factory=list, description="people or things it is about, by name; may be empty"
    )
    evidence: list[ExtractedEvidence] = Field(description="the quotes that state the steps")
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = Field(
        description="0 to 1: how sure you are the quotes state exactly these steps"
    )


class TermCandidate(_Model):
    term: str = Field(description="CURIE of an ontology term, e.g. schema:Person")
    label: str
    description: str = ""


class TermChoice(_Model):
    term: str = Field(description=f'one candidate CURIE exactly as offered, or "{NO_TERM}"')
    reason: str = Field(default="", description="one short sentence")


class EntityCandidate(_Model):
    id: str = Field(description="the candidate's id, to be returned as is")
    name: str
    types: list[str] = Field(default_factory=list)
    aliases: list[str] = Field(default_factory=list)
    facts: list[str] = Field(default_factory=list, description="known facts, one per line")


class EntityChoice(_Model):
    candidate: str = Field(description=f'one candidate id exactly as offered, or "{NEW_ENTITY}"')
    reason: str = Field(default="", description="one short sentence")


class UndeclaredTerm(_Model):
    surface: str = Field(description="the term as the pass proposes it, e.g. dietaryRestriction")
    role: Literal["class", "property"]
    uses: list[str] = Field(default_factory=list, description="claims of the pass that use it")
    candidates: list[TermCandidate] = Field(
        default_factory=list, description="nearby terms of the effective ontology"
    )


TermAction = Literal["declare", "align", "merge", "restrict", "amend", "defer"]


class TermDecision(_Model):
    surface: str = Field(description="the undeclared term this decision is about")
    action: TermAction
    label: str | None = Field(default=None, description="declare/amend: a human label")
    parent: str | None = Field(default=None, description="declare/amend: superclass/property")
    target: str | None = Field(
        default=None, description="align: the existing term; merge: the other undeclared term"
    )
    domain: str | None = Field(default=None, description="declare/restrict (property)")
    range: str | None = Field(default=None, description="declare/restrict (property)")
    reason: str = Field(default="", description="one short sentence; required for defer")


class SchemaPatch(_Model):
    decisions: list[TermDecision] = Field(description="exactly one decision per undeclared term")


class PageFact(_Model):
    predicate: str
    value: str
    memory: str = Field(description="id of the memory that asserts it")


class PageMemory(_Model):
    id: str
    kind: str
    title: str
    body: str = ""
