"""GraphQL object types of memories, their evidence and sources, and decisions.

Each type is built from the frozen record the memory layer reads (``from_record``); the
fields that lead to other nodes (a memory's entities and history, evidence's source) are
resolved through the request's dataloaders (:mod:`kgmem.api.graphql_context`).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any

import strawberry
from rdflib import Literal
from rdflib.namespace import XSD
from strawberry.types import Info

from kgmem.api.graphql_context import GraphContext
from kgmem.api.graphql_fields import field
from kgmem.api.tools_args import short_id
from kgmem.memory import (
    DecisionRecord,
    EvidenceRecord,
    MemoryKind,
    MemoryRecord,
    MemoryStatus,
    SourceRecord,
    WriteMode,
)

if TYPE_CHECKING:
    from kgmem.api.graphql_entities import Entity

__all__ = ["Claim", "Decision", "Evidence", "Memory", "RefusedDraft", "Source"]

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


@strawberry.type(description="A decision of the write gate or the lifecycle.")
class Decision:
    id: strawberry.ID
    short_id: str
    action: str
    target: str | None = strawberry.field(
        description="the memory it acted on; none for a refusal (action refuse)"
    )
    reason: str
    actor: str
    at: datetime
    reverted_by: str | None
    draft: RefusedDraft | None = strawberry.field(
        default=None, description="a refusal's draft (title, kind, hash)"
    )

    @classmethod
    def from_record(cls, r: DecisionRecord) -> Decision:
        return cls(
            id=strawberry.ID(str(r.iri)),
            short_id=short_id(r.iri),
            action=r.action.value,
            target=None if r.target is None else str(r.target),
            reason=r.reason,
            actor=r.actor,
            at=r.at,
            reverted_by=None if r.reverted_by is None else str(r.reverted_by),
            draft=None if r.draft is None else RefusedDraft(**asdict(r.draft)),
        )

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Decision:
        """A decision as the decisions_feed tool returns it."""
        draft = d.get("draft")
        return cls(
            id=d["id"],
            short_id=d["short_id"],
            action=d["action"],
            target=d["target"],
            reason=d["reason"],
            actor=d["actor"],
            at=datetime.fromisoformat(d["at"]),
            reverted_by=d["reverted_by"],
            draft=None
            if draft is None
            else RefusedDraft(
                title=draft["title"], kind=MemoryKind(draft["kind"]), hash=draft["hash"]
            ),
        )

    @field("The memory it acted on, as it is now (null: none, or forgotten since).")
    async def memory(self, info: Ctx) -> Memory | None:
        return None if self.target is None else await load_memory(info, self.target)


def _iris(values: tuple[object, ...]) -> list[str]:
    return [str(v) for v in values]


@strawberry.type(description="An atomic memory with every field, its claims and evidence.")
class Memory:
    id: strawberry.ID
    short_id: str
    kind: MemoryKind
    status: MemoryStatus
    title: str
    excerpt: str
    body: str
    tags: list[str]
    confidence: float
    strength: float
    pinned: bool
    domain: str | None
    recorded_at: datetime | None  # null only when the store holds a time kgmem cannot read
    occurred_at: datetime | None
    expires_at: datetime | None
    valid_from: datetime | None
    valid_until: datetime | None
    retired_at: datetime | None
    last_used_at: datetime | None
    ttl: str | None = strawberry.field(description="an xsd:duration, e.g. P30D")
    use_count: int
    rating: int
    source_refs: list[str]
    about: list[str]
    supersedes: list[str]
    contradicts: list[str]
    derived_from: list[str]
    needs_terms: list[str]
    claims: list[Claim]
    evidence: list[Evidence]
    steps: list[str] = strawberry.field(description="a procedure's steps, in order")
    triggers: list[str] = strawberry.field(description="when a procedure applies")

    @classmethod
    def from_record(cls, r: MemoryRecord) -> Memory:
        ttl = None if r.ttl is None else str(Literal(r.ttl, datatype=XSD.duration))
        return cls(
            id=strawberry.ID(str(r.iri)),
            short_id=short_id(r.iri),
            kind=r.kind,
            status=r.status,
            title=r.title,
            excerpt=r.excerpt,
            body=r.body,
            tags=list(r.tags),
            confidence=r.confidence,
            strength=r.strength,
            pinned=r.pinned,
            domain=r.domain,
            recorded_at=r.recorded_at,
            occurred_at=r.occurred_at,
            expires_at=r.expires_at,
            valid_from=r.valid_from,
            valid_until=r.valid_until,
            retired_at=r.retired_at,
            last_used_at=r.last_used_at,
            ttl=ttl,
            use_count=r.use_count,
            rating=r.rating,
            source_refs=list(r.source_refs),
            about=_iris(r.about),
            supersedes=_iris(r.supersedes),
            contradicts=_iris(r.contradicts),
            derived_from=_iris(r.derived_from),
            needs_terms=_iris(r.needs_terms),
            claims=[
                Claim(
                    id=strawberry.ID(str(c.iri)),
                    subject=str(c.subject),
                    predicate=str(c.predicate),
                    object=None if c.object is None else str(c.object),
                    value=None if c.value is None else str(c.value),
                    negated=c.negated,
                )
                for c in r.claims
            ],
            evidence=[Evidence.from_record(e) for e in r.evidence],
            steps=list(r.steps),
            triggers=list(r.triggers),
        )

    @field("The memories that replaced this one (it lists what it replaced in supersedes).")
    async def superseded_by(self, info: Ctx) -> list[str]:
        return await info.context.superseded_by.load(str(self.id))

    @field("The decisions about this memory, newest first.")
    async def history(self, info: Ctx) -> list[Decision]:
        return [Decision.from_record(d) for d in await info.context.history.load(str(self.id))]

    @field("The entities this memory is about.")
    async def entities(
        self, info: Ctx
    ) -> list[Annotated[Entity, strawberry.lazy("kgmem.api.graphql_entities")]]:
        from kgmem.api.graphql_entities import Entity

        rows = await info.context.entity.load_many(self.about)
        return [Entity.from_row(r) for r in rows if r is not None]


async def load_memory(info: Ctx, key: str) -> Memory | None:
    """The caller's memory ``key`` (IRI or short id), or None."""
    record = await info.context.memory.load(key)
    return None if record is None else Memory.from_record(record)
