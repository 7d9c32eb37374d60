"""What a host application sends to be kept as a source, and what ingesting it reports.

Inputs are pydantic models (frozen, unknown fields refused), so a bad field is refused with
its name. Source text is kept verbatim (evidence spans index into it): it is never stripped,
only required to contain something other than whitespace.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from rdflib import URIRef

from kgmem.memory.model import (
    Role,
    SourceType,
    ToolOutcome,
    check_tool_name,
    check_tool_outcome,
)
from kgmem.memory.times import Instant

__all__ = [
    "MAX_SOURCE_TEXT",
    "RECALL_TOOLS",
    "IngestResult",
    "IngestStatus",
    "MessageIn",
    "NoteIn",
    "ShortNoteIn",
    "TaskIn",
    "TaskState",
    "TaskStateChange",
    "ToolOutcome",
]

#: The longest source text kept (characters); tool outputs can be long, but not unbounded.
MAX_SOURCE_TEXT = 100_000
#: kgmem's own recall tools: their results are always marked as recall, whatever the host says.
RECALL_TOOLS = frozenset({"memory_search", "retrieve_memory", "memory_cite"})


def _has_content(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain more than whitespace")
    return value


SourceText = Annotated[
    str, Field(min_length=1, max_length=MAX_SOURCE_TEXT), AfterValidator(_has_content)
]
Key = Annotated[str, Field(min_length=1, max_length=500), AfterValidator(_has_content)]
Name = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_has_content)]


class TaskState(StrEnum):
    CREATED = "created"
    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class _Input(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MessageIn(_Input):
    """One turn of a chat. ``agent_reported``: reported second-hand by an agent, not the host."""

    chat: Key
    turn: Annotated[int, Field(ge=0)]
    role: Role
    text: SourceText
    timestamp: Instant | None = None  # default: now, by the service's clock
    tool_name: Name | None = None
    tool_outcome: ToolOutcome | None = Field(default=None, validate_default=True)
    recall_tool: bool = False  # memory_search and the like: never evidence
    speaker: Name | None = None
    agent_reported: bool = False

    _tool_only = field_validator("tool_name", "recall_tool")(check_tool_name)
    _tool_outcome = field_validator("tool_outcome")(check_tool_outcome)

    @property
    def is_recall(self) -> bool:
        return self.recall_tool or (self.tool_name or "") in RECALL_TOOLS


class TaskStateChange(_Input):
    state: TaskState
    at: Instant


class TaskIn(_Input):
    """A task's lifecycle as the host reports it: its id, what it is, the states it entered.

    The states are kept in time order, however they were sent (a tie keeps the order given),
    so a state's record is the same whichever report first held it. ``result`` belongs to
    the latest completed or failed state (one is needed). Re-sending the task with more
    state changes appends them; earlier ones never change.
    """

    task_id: Key
    text: SourceText
    states: Annotated[tuple[TaskStateChange, ...], Field(min_length=1, max_length=100)]
    result: SourceText | None = None
    chat: Key | None = None

    @field_validator("states")
    @classmethod
    def _in_time_order(cls, states: tuple[TaskStateChange, ...]) -> tuple[TaskStateChange, ...]:
        return tuple(sorted(states, key=lambda change: change.at))

    @model_validator(mode="after")
    def _result_has_an_end(self) -> Self:
        if self.result is not None and self.result_index is None:
            raise ValueError("a result comes with a completed or failed state")
        return self

    @property
    def result_index(self) -> int | None:
        """The state the result belongs to: the latest completed or failed one."""
        ends = [i for i, c in enumerate(self.states) if c.state in _ENDS]
        return ends[-1] if ends else None


_ENDS = (TaskState.COMPLETED, TaskState.FAILED)


class NoteIn(_Input):
    """A revision of an external note: vault-relative POSIX path, optional revision number.

    Without a revision number the revision is identified by the SHA-256 of the text.
    """

    path: Key
    text: SourceText
    revision: Annotated[int, Field(ge=1)] | None = None
    timestamp: Instant | None = None

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        parts = value.split("/")
        if value.startswith("/") or "\\" in value or any(p in ("", ".", "..") for p in parts):
            raise ValueError("must be a vault-relative POSIX path without '.' or '..' parts")
        return value


class ShortNoteIn(_Input):
    """A short note an agent remembers (memory_remember)."""

    text: SourceText
    chat: Key | None = None


class IngestStatus(StrEnum):
    CREATED = "created"
    UNCHANGED = "unchanged"
    UPDATED = "updated"  # a task record whose result was reported after the record


@dataclass(frozen=True)
class IngestResult:
    """What ingesting one source did."""

    iri: URIRef
    type: SourceType
    status: IngestStatus
