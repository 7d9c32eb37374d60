"""The memory domain model: kinds, statuses, sources, drafts, claims and evidence.

Drafts are what agents and people send (pydantic models, so a bad field is refused with its
name); records are what kgmem has stored (frozen dataclasses). Enumerations map one-to-one
onto the individuals of kgmem's vocabulary (``ontologies/kgmem.ttl``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from rdflib import URIRef

from kgmem.vocab import KGM, VocabEnum

__all__ = [
    "Authority",
    "ClaimDraft",
    "DraftMemory",
    "EntityDraft",
    "EvidenceDraft",
    "MemoryKind",
    "MemoryStatus",
    "ReportedSource",
    "Role",
    "SourceRecord",
    "SourceType",
    "SupportKind",
]


class MemoryKind(VocabEnum):
    SEMANTIC = "semantic"  # facts and relations
    PROCEDURAL = "procedural"  # how-to, rules, preferences; can become a playbook
    EPISODIC = "episodic"  # events with occurred_at
    REFERENCE = "reference"  # imported content


class MemoryStatus(VocabEnum):
    PROPOSED = "proposed"
    PENDING = "pending"
    ACTIVE = "active"
    QUARANTINED = "quarantined"
    ARCHIVED = "archived"
    SUPERSEDED = "superseded"
    OUTDATED = "outdated"
    ERRONEOUS = "erroneous"
    EXPIRED = "expired"


class SupportKind(VocabEnum):
    EXPLICIT = "explicit"  # the quote states the claim
    DERIVED = "derived"  # follows from the quote with a step of reasoning
    INFERRED = "inferred"  # plausible from the quote, not stated


class SourceType(VocabEnum):
    USER_MESSAGE = "userMessage"
    AGENT_MESSAGE = "agentMessage"
    TOOL_RESULT = "toolResult"
    TASK_RECORD = "taskRecord"
    EXTERNAL_NOTE = "externalNote"
    SHORT_NOTE = "shortNote"


class Authority(VocabEnum):
    """Who stands behind a source. The default order is user > tool > task > agent."""

    USER = "user"
    TOOL = "tool"
    TASK = "task"
    AGENT = "agent"

    @property
    def iri(self) -> URIRef:
        return URIRef(KGM[f"{self.value}Authority"])


class Role(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True)
class SourceRecord:
    """One stored source, as grounding sees it."""

    iri: URIRef
    type: SourceType
    text: str
    authority: Authority
    timestamp: datetime
    chat: str | None = None
    turn: int | None = None
    role: Role | None = None
    speaker: str | None = None  # display name of who wrote it, when known
    tool_name: str | None = None
    tool_succeeded: bool | None = None
    recall_tool: bool = False  # memory_search and the like: never evidence
    agent_reported: bool = False  # reported second-hand by an agent, not ingested first-hand
    note_path: str | None = None
    task_id: str | None = None


_Text = Annotated[str, Field(min_length=1, max_length=20000)]


class _Draft(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


class EntityDraft(_Draft):
    """An entity a memory is about: a name, optional types (ontology terms) and aliases."""

    name: Annotated[str, Field(min_length=1, max_length=200)]
    types: tuple[str, ...] = ()
    aliases: tuple[Annotated[str, Field(min_length=1, max_length=200)], ...] = ()


class ClaimDraft(_Draft):
    """One structured claim: subject, predicate (an ontology term), and an entity or a value.

    ``subject`` and ``object`` name entities (or "I"/"me" for the speaker of a user message);
    ``value`` is a literal. Exactly one of ``object`` and ``value`` is given.
    """

    subject: Annotated[str, Field(min_length=1, max_length=200)]
    predicate: Annotated[str, Field(min_length=1, max_length=500)]
    object: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    value: Annotated[str, Field(min_length=1, max_length=2000)] | None = None
    negated: bool = False
    valid_from: datetime | None = None

    @model_validator(mode="after")
    def _one_object(self) -> Self:
        if (self.object is None) == (self.value is None):
            raise ValueError("give exactly one of object (an entity) or value (a literal)")
        return self


class EvidenceDraft(_Draft):
    """Where a claim is stated: a stored source, the exact quote, and how it supports it."""

    source: Annotated[str, Field(min_length=1, max_length=500)]
    quote: _Text | None = None
    support: SupportKind = SupportKind.EXPLICIT


class ReportedSource(_Draft):
    """A source an agent reports inline ("the user said: ..."): second-hand, agent authority."""

    role: Role
    text: _Text
    chat: str | None = None


class DraftMemory(_Draft):
    """A memory an agent or a person proposes; nothing is stored until the gate accepts it."""

    kind: MemoryKind
    title: Annotated[str, Field(min_length=1, max_length=200)]
    excerpt: Annotated[str, Field(max_length=500)] = ""
    body: Annotated[str, Field(max_length=20000)] = ""
    tags: tuple[Annotated[str, Field(min_length=1, max_length=64)], ...] = ()
    confidence: Annotated[float, Field(ge=0.0, le=1.0)] = 0.8
    domain: Annotated[str, Field(max_length=100)] | None = None
    entities: tuple[EntityDraft, ...] = ()
    claims: tuple[ClaimDraft, ...] = ()
    evidence: tuple[EvidenceDraft, ...] = ()
    reported_source: ReportedSource | None = None
    occurred_at: datetime | None = None
    ttl: timedelta | None = None
    source_refs: tuple[str, ...] = ()

    @field_validator("excerpt")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value:
            raise ValueError("an excerpt is one line")
        return value

    @field_validator("tags")
    @classmethod
    def _tag_cap(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        cap = (info.context or {}).get("max_tags", 20)
        if len(value) > cap:
            raise ValueError(f"at most {cap} tags, got {len(value)}")
        return value

    @model_validator(mode="after")
    def _episode_time(self) -> Self:
        if self.kind is MemoryKind.EPISODIC and self.occurred_at is None:
            raise ValueError("an episodic memory needs occurred_at")
        if self.ttl is not None and self.ttl <= timedelta(0):
            raise ValueError("ttl must be positive")
        return self
