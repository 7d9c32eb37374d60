"""The memory domain model: kinds, statuses, sources, drafts, claims and evidence.

Drafts are what agents and people send (pydantic models, so a bad field is refused with its
name); records are what kgmem has stored (frozen dataclasses). Enumerations map one-to-one
onto the individuals of kgmem's vocabulary (``ontologies/kgmem.ttl``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from rdflib import URIRef

from kgmem.memory.times import Duration, Instant
from kgmem.vocab import KGM, VocabEnum

__all__ = [
    "MAX_STEPS",
    "MAX_STEP_CHARS",
    "MAX_TRIGGERS",
    "MAX_TRIGGER_CHARS",
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


class ToolOutcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"


def check_tool_name(value: Any, info: ValidationInfo) -> Any:
    """A field validator: only a tool's message names a tool (``role`` is validated first)."""
    if value and info.data.get("role") not in (None, Role.TOOL):
        raise ValueError("only a message with role 'tool' names a tool")
    return value


def check_tool_outcome(value: Any, info: ValidationInfo) -> Any:
    """A field validator: a tool's message has an outcome, no other message has one."""
    role = info.data.get("role")
    if role is Role.TOOL and value is None:
        raise ValueError("required when role is 'tool' (success or failure)")
    if role not in (None, Role.TOOL) and value is not None:
        raise ValueError("only a message with role 'tool' has an outcome")
    return value


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

#: The most steps a procedure lists and the most triggers it has (``shapes/core.ttl`` agrees),
#: and the longest a step's and a trigger's text may be.
MAX_STEPS, MAX_TRIGGERS = 50, 20
MAX_STEP_CHARS, MAX_TRIGGER_CHARS = 1000, 300
_Step = Annotated[str, Field(min_length=1, max_length=MAX_STEP_CHARS)]
_Trigger = Annotated[str, Field(min_length=1, max_length=MAX_TRIGGER_CHARS)]


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
    valid_from: Instant | None = None

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
    """A source an agent reports inline ("the user said: ..."): second-hand, agent authority.

    A tool's output reported this way names the tool's outcome, as an ingested one does."""

    role: Role
    text: _Text
    chat: str | None = None
    tool_name: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    tool_outcome: ToolOutcome | None = Field(default=None, validate_default=True)

    _tool_only = field_validator("tool_name")(check_tool_name)
    _tool_outcome = field_validator("tool_outcome")(check_tool_outcome)


class DraftMemory(_Draft):
    """A memory an agent or a person proposes; nothing is stored until the gate accepts it.

    A procedural draft may list its ``steps`` (in order) and its ``triggers`` (the situations
    it applies in); no other kind has them.
    """

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
    occurred_at: Instant | None = Field(default=None, validate_default=True)
    ttl: Duration | None = None
    source_refs: tuple[str, ...] = ()
    steps: tuple[_Step, ...] = Field(default=(), max_length=MAX_STEPS)
    triggers: tuple[_Trigger, ...] = Field(default=(), max_length=MAX_TRIGGERS)

    @field_validator("steps", "triggers")
    @classmethod
    def _procedural_only(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        # a field validator (``kind`` is validated first), so the error names the field
        kind = info.data.get("kind")
        if value and kind is not None and kind is not MemoryKind.PROCEDURAL:
            raise ValueError(f"only a procedural memory has {info.field_name}")
        return value

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

    @field_validator("occurred_at")
    @classmethod
    def _episode_time(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        # a field validator (``kind`` is validated first), so the error names occurred_at
        if value is None and info.data.get("kind") is MemoryKind.EPISODIC:
            raise ValueError("an episodic memory needs occurred_at")
        return value

    @field_validator("ttl")
    @classmethod
    def _positive_ttl(cls, value: timedelta | None) -> timedelta | None:
        if value is not None and value <= timedelta(0):
            raise ValueError("ttl must be positive")
        return value
