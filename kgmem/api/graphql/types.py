"""GraphQL object types of memories, their evidence and sources, and decisions.

Each type is built from the frozen record the memory layer reads (``from_record``); the
fields that lead to other nodes (a memory's entities and history, evidence's source) are
resolved through the request's dataloaders (:mod:`kgmem.api.graphql.context`).
"""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry.types import Info

from kgmem.api.graphql.context import GraphContext
from kgmem.api.graphql.fields import field
from kgmem.memory import (
    EvidenceRecord,
    MemoryKind,
    MemoryStatus,
    SourceRecord,
    WriteMode,
)

__all__ = ["Claim", "Evidence", "RefusedDraft", "Source"]

Ctx = Info[GraphContext, None]
strawberry.enum(MemoryKind, name="MemoryKind")
strawberry.enum(MemoryStatus, name="MemoryStatus")
strawberry.enum(WriteMode, name="ReviewMode")


@strawberry.type(description="A stored source: a chat turn, tool result, task record or note.")
class Source:
    id: strawberry.ID
    type: str
    text: str
    authority: str
    timestamp: datetime
    chat: str | None
    turn: int | None
    role: str | None
    speaker: str | None
    tool_name: str | None
    note_path: str | None
    task_id: str | None
    agent_reported: bool
    link: str = strawberry.field(
        description="chat:<chat>#<turn>, task:<id>, note:<path>, or the source IRI"
    )

    @classmethod
    def from_record(cls, r: SourceRecord) -> Source:
        if r.chat is not None and r.turn is not None:
            link = f"chat:{r.chat}#{r.turn}"
        elif r.task_id:
            link = f"task:{r.task_id}"
        elif r.note_path:
            link = f"note:{r.note_path}"
        else:
            link = str(r.iri)
        return cls(
            id=strawberry.ID(str(r.iri)),
            type=r.type.value,
            text=r.text,
            authority=r.authority.value,
            timestamp=r.timestamp,
            chat=r.chat,
            turn=r.turn,
            role=None if r.role is None else r.role.value,
            speaker=r.speaker,
            tool_name=r.tool_name,
            note_path=r.note_path,
            task_id=r.task_id,
            agent_reported=r.agent_reported,
            link=link,
        )


@strawberry.type(description="One item of a memory's evidence.")
class Evidence:
    id: strawberry.ID
    source_id: str
    source_type: str
    support: str = strawberry.field(description="explicit, derived or inferred")
    authority: str
    quote: str | None
    span_start: int | None
    span_end: int | None
    agent_reported: bool
    confirms: str | None

    @classmethod
    def from_record(cls, r: EvidenceRecord) -> Evidence:
        return cls(
            id=strawberry.ID(str(r.iri)),
            source_id=str(r.source),
            source_type=r.source_type.value,
            support=r.support.value,
            authority=r.authority.value,
            quote=r.quote,
            span_start=None if r.span is None else r.span[0],
            span_end=None if r.span is None else r.span[1],
            agent_reported=r.agent_reported,
            confirms=None if r.confirms is None else str(r.confirms),
        )

    @field("The source the quote is taken from (null: not stored).")
    async def source(self, info: Ctx) -> Source | None:
        record = await info.context.source.load(self.source_id)
        return None if record is None else Source.from_record(record)


@strawberry.type(description="A structured claim: subject, predicate and object or value.")
class Claim:
    id: strawberry.ID
    subject: str
    predicate: str
    object: str | None
    value: str | None
    negated: bool


@strawberry.type(description="The draft a refusal refused (its content is not kept).")
class RefusedDraft:
    title: str
    kind: MemoryKind
    hash: str = strawberry.field(description="SHA-256 of the draft as the gate read it")
