"""GraphQL types of what the reading tools return: search hits, context packets, the
consolidation status; each built from the tool's JSON result."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import strawberry
from strawberry.scalars import JSON

from kgmem.api.graphql.nodes import Memory, load_memory
from kgmem.api.graphql.types import Ctx
from kgmem.pipeline.consolidation import ConsolidationStatus, PassReport

__all__ = [
    "Consolidation",
    "ContextItem",
    "ContextPacket",
    "Me",
    "SearchFilters",
    "SearchHit",
    "SearchResults",
    "context_packet",
]


@strawberry.type
class Me:
    id: str
    role: str
    admin: bool


@strawberry.input(description="Narrow a search (see the memory_search tool).")
class SearchFilters:
    kinds: list[str] | None = None
    tags: list[str] | None = None
    entity: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    statuses: list[str] | None = None


@strawberry.type
class PageFile:
    """A page, playbook or note of the caller's, with its Markdown as stored."""

    id: str
    kind: str = strawberry.field(description="page, playbook or note")
    title: str
    path: str = strawberry.field(description="Vault-relative: Memory/entities/acme.md")
    file: str | None = strawberry.field(description="The file's absolute path in the vault")
    revision: int | None
    of: str | None = strawberry.field(description="The entity (or procedure) it is of")
    markdown: str


@strawberry.type
class SearchHit:
    id: str
    short_id: str
    kind: str = strawberry.field(description="memory, page or note")
    title: str
    excerpt: str
    score: float
    why: list[str]
    path: str | None
    memory_kind: str | None
    status: str | None
    consolidated: bool | None = strawberry.field(
        description="a short note: whether a consolidation pass has taken it (null: not one)"
    )

    @strawberry.field
    async def memory(self, info: Ctx) -> Memory | None:
        return await load_memory(info, self.id) if self.kind == "memory" else None


@strawberry.type
class SearchResults:
    query: str
    hits: list[SearchHit]


@strawberry.type
class ContextItem:
    id: str
    kind: str
    title: str
    excerpt: str
    score: float
    why: list[str]
    steps: list[str] = strawberry.field(description="a procedure's steps, in order")
    triggers: list[str] = strawberry.field(description="when a procedure applies")

    @strawberry.field
    async def memory(self, info: Ctx) -> Memory | None:
        return await load_memory(info, self.id)


@strawberry.type(description="A short note that matches the task and no pass has taken yet.")
class ContextNote:
    id: str
    text: str = strawberry.field(description="at most 600 characters (note reads it whole)")
    timestamp: datetime | None
    score: float
    why: list[str]


@strawberry.type(description="A short note kept with remember, as a list shows it.")
class ShortNote:
    id: strawberry.ID
    short_id: str
    text: str
    timestamp: datetime
    chat: str | None
    consolidated: bool = strawberry.field(
        description="a consolidation pass has taken it (false: only what was written down)"
    )


@strawberry.type
class NoteList:
    notes: list[ShortNote]
    total: int = strawberry.field(description="how many match, on every page")

    @classmethod
    def of(cls, out: dict[str, Any]) -> NoteList:
        return cls(
            notes=[
                ShortNote(
                    id=strawberry.ID(n["id"]),
                    short_id=n["short_id"],
                    text=n["text"],
                    timestamp=datetime.fromisoformat(n["timestamp"]),
                    chat=n["chat"],
                    consolidated=n["consolidated"],
                )
                for n in out["notes"]
            ],
            total=out["total"],
        )


@strawberry.type(description="What applies to a task: facts, a procedure, episodes, warnings.")
class ContextPacket:
    task: str
    intent: str
    facts: list[ContextItem]
    procedure: ContextItem | None
    alternatives: list[ContextItem]
    episodes: list[ContextItem]
    notes: list[ContextNote] = strawberry.field(
        description="short notes matching the task that no pass has taken yet: what was "
        "written down, not memories"
    )
    warnings: JSON
    packet: JSON = strawberry.field(description="the whole packet, evidence included")


@strawberry.type(description="What prompt_context pushes into each agent turn.")
class PromptContext:
    markdown: str = strawberry.field(description="the context as it goes into a prompt")
    tokens: int = strawberry.field(description="its estimated size")
    budget_tokens: int
    truncated: int = strawberry.field(description="items a cap or the budget left out")
    packet: JSON = strawberry.field(description="the sections, with what each left out")

    @classmethod
    def of(cls, out: dict[str, Any]) -> PromptContext:
        return cls(
            markdown=out["markdown"],
            tokens=out["tokens"],
            budget_tokens=out["budget_tokens"],
            truncated=out["truncated"]["total"],
            packet=cast(JSON, out),
        )


@strawberry.type(description="The process that runs (or last ran) a consolidation pass.")
class PassOwner:
    host: str
    pid: int


@strawberry.type
class ConsolidationPass:
    id: str
    status: str = strawberry.field(description="as recorded: passQueued, passRunning, ...")
    state: str = strawberry.field(
        description="as of now: queued, running, dead (its worker died: due at once), "
        "parked, waiting, committed or abandoned"
    )
    state_reason: str | None = strawberry.field(description="why a running pass is dead")
    stage: str | None
    attempts: int = strawberry.field(
        description="tries of its stage that ended: the failed ones, and the one that finished"
        " a committed pass (a pass that ran once: 1); a running try counts once it ends"
    )
    recoveries: int
    started_at: datetime
    finished_at: datetime | None
    next_attempt_at: datetime | None = strawberry.field(
        description="when a worker may run it next; for a live running pass, when it is "
        "presumed dead if its worker falls silent"
    )
    owner: PassOwner | None
    heartbeat_at: datetime | None = strawberry.field(description="its worker's last heartbeat")
    drafts: int = strawberry.field(description="queued drafts the pass holds")
    sources: int = strawberry.field(description="conversation sources the pass holds")
    error: str | None
    error_stage: str | None
    abandon_reason: str | None = strawberry.field(description="why an abandoned pass was given up")
    retried_as: str | None = strawberry.field(
        description="the pass that took its contributions again (retryConsolidation)"
    )

    @classmethod
    def of(cls, report: PassReport) -> ConsolidationPass:
        p, verdict = report.record, report.verdict
        return cls(
            id=p.pass_id,
            status=str(p.status.value),
            state=verdict.condition.value,
            state_reason=verdict.reason,
            stage=None if p.stage is None else str(p.stage.value),
            attempts=p.attempts,
            recoveries=p.recoveries,
            started_at=p.started_at,
            finished_at=p.finished_at,
            next_attempt_at=verdict.next_attempt_at,
            owner=None if p.owner is None else PassOwner(host=p.owner.host, pid=p.owner.pid),
            heartbeat_at=p.heartbeat_at,
            drafts=report.drafts,
            sources=report.sources,
            error=p.error,
            error_stage=None if p.error_stage is None else str(p.error_stage.value),
            abandon_reason=p.abandon_reason,
            retried_as=p.retried_as,
        )


@strawberry.type(description="Consolidation: model, what waits, and the latest passes.")
class Consolidation:
    model: str | None
    waiting_sources: int
    waiting_drafts: int
    passes: list[ConsolidationPass]

    @classmethod
    def of(cls, s: ConsolidationStatus) -> Consolidation:
        return cls(
            model=s.model,
            waiting_sources=s.waiting_sources,
            waiting_drafts=s.waiting_drafts,
            passes=[ConsolidationPass.of(p) for p in s.passes],
        )


def _item(raw: dict[str, Any]) -> ContextItem:
    return ContextItem(
        id=raw["id"],
        kind=raw["kind"],
        title=raw["title"],
        excerpt=raw["excerpt"],
        score=raw["score"],
        why=list(raw["why"]),
        steps=list(raw["steps"]),
        triggers=list(raw["triggers"]),
    )


def _instant(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)


def context_packet(out: dict[str, Any]) -> ContextPacket:
    procedure = out.get("procedure")
    return ContextPacket(
        task=out["task"],
        intent=out["intent"],
        facts=[_item(i) for i in out["facts"]],
        procedure=None if procedure is None else _item(procedure),
        alternatives=[_item(i) for i in out["alternatives"]],
        episodes=[_item(i) for i in out["episodes"]],
        notes=[
            ContextNote(
                id=n["id"],
                text=n["text"],
                timestamp=None
                if n["timestamp"] is None
                else datetime.fromisoformat(n["timestamp"]),
                score=n["score"],
                why=list(n["why"]),
            )
            for n in out["notes"]
        ],
        warnings=out["warnings"],
        packet=cast(JSON, out),
    )
