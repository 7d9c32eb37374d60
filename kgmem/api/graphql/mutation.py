"""GraphQL mutations: the writing agent tools (:mod:`kgmem.api.tools.write`), each parsed by
the tool's own ``Args.parse`` so a bad argument comes back as ``InputError`` naming the
field, exactly as REST and MCP name it."""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from datetime import datetime
from enum import Enum
from typing import Annotated, Any, cast

import strawberry

from kgmem.api.graphql.fields import mutation
from kgmem.api.graphql.results import (
    Cited,
    Conflict,
    DraftSuccess,
    Ingested,
    IngestedMessage,
    InputError,
    Managed,
    NotFound,
    OutcomeRecorded,
    Reflected,
    Remembered,
    Retried,
    attempt,
    draft_items,
    managed,
)
from kgmem.api.graphql.types import Ctx
from kgmem.api.tools import consolidation as k
from kgmem.api.tools import notes as n
from kgmem.api.tools import sessions as s
from kgmem.api.tools import write as w
from kgmem.api.tools.args import jsonable
from kgmem.memory import MemoryKind, Verdict, WriteMode

__all__ = ["Mutation"]

strawberry.enum(Verdict, name="OutcomeVerdict")
strawberry.enum(w.ManageAction, name="ManageAction")


@strawberry.input
class EntityInput:
    name: str
    types: list[str] | None = None
    aliases: list[str] | None = None


@strawberry.input
class ClaimInput:
    subject: str
    predicate: str
    object: str | None = None
    value: str | None = None
    negated: bool | None = None
    valid_from: datetime | None = None


@strawberry.input
class EvidenceInput:
    source: str = strawberry.field(description="a source IRI or chat:<chat>#<turn>")
    quote: str | None = None
    support: str | None = strawberry.field(default=None, description="explicit|derived|inferred")


@strawberry.input
class ReportedSourceInput:
    role: str
    text: str
    chat: str | None = None
    tool_name: str | None = None
    tool_outcome: str | None = strawberry.field(
        default=None, description="success or failure; required when role is tool"
    )


@strawberry.input(description="One memory to propose; see the draft_memory tool.")
class DraftInput:
    kind: MemoryKind
    title: str
    excerpt: str | None = None
    body: str | None = None
    tags: list[str] | None = None
    confidence: float | None = None
    domain: str | None = None
    entities: list[EntityInput] | None = None
    claims: list[ClaimInput] | None = None
    evidence: list[EvidenceInput] | None = None
    reported_source: ReportedSourceInput | None = None
    occurred_at: datetime | None = None
    ttl: str | None = strawberry.field(default=None, description="an ISO 8601 duration")
    source_refs: list[str] | None = None
    steps: list[str] | None = strawberry.field(
        default=None, description="procedural only: what to do, one step per item, in order"
    )
    triggers: list[str] | None = strawberry.field(
        default=None, description="procedural only: when it applies"
    )


@strawberry.input(description="One turn of a session's chat (its chat is the session's).")
class TurnInput:
    turn: int
    role: str = strawberry.field(description="user, assistant or tool")
    text: str
    timestamp: datetime | None = None
    tool_name: str | None = None
    tool_outcome: str | None = None
    recall_tool: bool | None = None
    speaker: str | None = None


@strawberry.input(description="One chat turn to keep as a first-hand source.")
class MessageInput(TurnInput):
    chat: str


@strawberry.input(description="One state a task entered, and when.")
class TaskStateInput:
    state: str = strawberry.field(description="created, started, completed, failed or cancelled")
    at: datetime


@strawberry.input(description="A task's run as the host reports it (see the ingest_task tool).")
class TaskInput:
    task_id: str
    text: str
    states: list[TaskStateInput]
    result: str | None = strawberry.field(
        default=None, description="its output or error: the last state is completed or failed"
    )
    chat: str | None = None


@strawberry.type(description="The user's review mode, after the change.")
class ReviewModeSet:
    mode: WriteMode
    changed: bool


@strawberry.type(description="The records a task's state changes were kept as.")
class TaskIngested:
    records: list[IngestedMessage]


def plain(value: Any) -> Any:
    """Inputs as the JSON the tools parse: absent (None) fields dropped, enums as values."""
    if is_dataclass(value) and not isinstance(value, type):
        found = {f.name: plain(getattr(value, f.name)) for f in fields(value)}
        return {k: v for k, v in found.items() if v is not None}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    return value


RememberResult = Annotated[Remembered | InputError, strawberry.union("RememberResult")]
DraftResult = Annotated[DraftSuccess | InputError, strawberry.union("DraftResult")]
CiteResult = Annotated[Cited | InputError | NotFound, strawberry.union("CiteResult")]
OutcomeResult = Annotated[
    OutcomeRecorded | InputError | NotFound | Conflict, strawberry.union("OutcomeResult")
]
ManageResult = Annotated[
    Managed | InputError | NotFound | Conflict, strawberry.union("ManageResult")
]
IngestResult = Annotated[Ingested | InputError | Conflict, strawberry.union("IngestResult")]
TaskResult = Annotated[TaskIngested | InputError | Conflict, strawberry.union("TaskResult")]
ReflectResult = Annotated[Reflected | InputError | Conflict, strawberry.union("ReflectResult")]
RetryResult = Annotated[Retried | InputError | NotFound | Conflict, strawberry.union("RetryResult")]
ReviewModeResult = Annotated[ReviewModeSet | InputError, strawberry.union("ReviewModeResult")]


def _records(found: list[dict[str, Any]]) -> list[IngestedMessage]:
    return [IngestedMessage(id=m["id"], type=m["type"], status=m["status"]) for m in found]


@strawberry.type
class Mutation:
    @mutation("Keep a short note now (memory_remember).")
    async def remember(self, info: Ctx, text: str, chat: str | None = None) -> RememberResult:
        c, raw = info.context, plain({"text": text, "chat": chat})
        return cast(
            RememberResult,
            await attempt(
                lambda: w.remember(c.services, c.principal, w.RememberArgs.parse(raw)),
                lambda out: Remembered(id=out["id"], short_id=out["short_id"], text=out["text"]),
            ),
        )

    @mutation("Propose 1 to 25 memories through the write gate.")
    async def draft_memories(self, info: Ctx, drafts: list[DraftInput]) -> DraftResult:
        c, raw = info.context, {"drafts": plain(drafts)}
        return cast(
            DraftResult,
            await attempt(
                lambda: w.draft(c.services, c.principal, w.DraftArgs.parse(raw, c.services)),
                draft_items,
            ),
        )

    @mutation("The agent used this memory or page (memory_cite).")
    async def cite(self, info: Ctx, id: strawberry.ID) -> CiteResult:
        c = info.context
        return cast(
            CiteResult,
            await attempt(
                lambda: w.cite(c.services, c.principal, w.CiteArgs.parse({"id": id}, c.uid)),
                lambda out: Cited(id=out["id"], kind=out["kind"], use_count=out["use_count"]),
            ),
        )

    @mutation("How the memories used for a task performed.")
    async def record_outcome(
        self, info: Ctx, items: list[strawberry.ID], verdict: Verdict, task: str | None = None
    ) -> OutcomeResult:
        c, raw = info.context, plain({"items": items, "verdict": verdict, "task": task})
        return cast(
            OutcomeResult,
            await attempt(
                lambda: w.record_outcome(c.services, c.principal, w.OutcomeArgs.parse(raw, c.uid)),
                lambda out: OutcomeRecorded(
                    verdict=out["verdict"], task=out["task"], changes=jsonable(out["changes"])
                ),
            ),
        )

    @mutation(
        "pin, unpin, archive, restore, forget, rate (delta +1/-1) or revert "
        "(the latest standing decision about it, or the given decision)."
    )
    async def manage_memory(
        self,
        info: Ctx,
        id: strawberry.ID,
        action: w.ManageAction,
        delta: int | None = None,
        decision: strawberry.ID | None = None,
    ) -> ManageResult:
        c = info.context
        raw = plain({"id": id, "action": action, "delta": delta, "decision": decision})
        return cast(
            ManageResult,
            await attempt(
                lambda: w.manage_memory(c.services, c.principal, w.ManageArgs.parse(raw, c.uid)),
                managed,
            ),
        )

    @mutation(
        "Forget a short note (forget_note): its text is purged; refused while memories quote it."
    )
    async def forget_note(self, info: Ctx, id: strawberry.ID) -> ManageResult:
        c = info.context
        return cast(
            ManageResult,
            await attempt(
                lambda: n.forget_note(
                    c.services, c.principal, n.ForgetNoteArgs.parse({"id": id}, c.uid)
                ),
                managed,
            ),
        )

    @mutation(
        "Take again what abandoned consolidation passes held (passes: their ids; default "
        "every one not retried yet): one new pass, run by the scheduler."
    )
    async def retry_consolidation(self, info: Ctx, passes: list[str] | None = None) -> RetryResult:
        c, raw = info.context, plain({"passes": passes})
        return cast(
            RetryResult,
            await attempt(
                lambda: k.retry_consolidation(c.services, c.principal, k.RetryArgs.parse(raw)),
                lambda out: Retried(
                    pass_id=out["pass"], retried=out["retried"], contributions=out["contributions"]
                ),
            ),
        )

    @mutation("Approve a memory waiting for review: it becomes active.")
    async def approve_memory(self, info: Ctx, id: strawberry.ID) -> ManageResult:
        return await _review(info, id, w.ReviewVerdict.APPROVE)

    @mutation("Reject a memory waiting for review: it is archived.")
    async def reject_memory(self, info: Ctx, id: strawberry.ID) -> ManageResult:
        return await _review(info, id, w.ReviewVerdict.REJECT)

    @mutation("Keep chat turns as first-hand sources (one commit).")
    async def ingest_messages(self, info: Ctx, messages: list[MessageInput]) -> IngestResult:
        c, raw = info.context, {"messages": plain(messages)}
        return cast(
            IngestResult,
            await attempt(
                lambda: w.ingest_messages(c.services, c.principal, w.IngestArgs.parse(raw)),
                lambda out: Ingested(messages=_records(out["messages"])),
            ),
        )

    @mutation(
        "reflect_session: the end of a session, its chat (turns kept first-hand with a host "
        "key, agent-reported otherwise) and its learnings (drafts citing chat:<chat>#<turn>) "
        "in one call; with a model the chat is consolidated now."
    )
    async def reflect_session(
        self,
        info: Ctx,
        chat: str,
        messages: list[TurnInput] | None = None,
        learnings: list[DraftInput] | None = None,
        consolidate: bool | None = None,
    ) -> ReflectResult:
        c = info.context
        raw = plain(
            {
                "chat": chat,
                "messages": messages,
                "learnings": learnings,
                "consolidate": consolidate,
            }
        )
        batch_max = c.services.settings.batch_max
        return cast(
            ReflectResult,
            await attempt(
                lambda: s.reflect_session(
                    c.services, c.principal, s.ReflectArgs.parse(raw, batch_max)
                ),
                lambda out: Reflected(
                    chat=out["chat"],
                    first_hand=out["first_hand"],
                    messages=_records(out["messages"]),
                    already_kept=out["already_kept"],
                    learnings=draft_items({"items": out["learnings"]}).items,
                    consolidation_pass=out["consolidation_pass"],
                ),
            ),
        )

    @mutation(
        "Set how the user's agent drafts are handled: AUTONOMOUS (confident or user-backed "
        "drafts become active) or REVIEW (every agent draft waits in the review inbox)."
    )
    async def set_review_mode(self, info: Ctx, mode: WriteMode) -> ReviewModeResult:
        c, raw = info.context, {"mode": mode.value}
        return cast(
            ReviewModeResult,
            await attempt(
                lambda: w.review_mode(c.services, c.principal, w.ReviewModeArgs.parse(raw)),
                lambda out: ReviewModeSet(mode=WriteMode(out["mode"]), changed=out["changed"]),
            ),
        )

    @mutation("Keep a task's run (its state changes, its result) as first-hand sources.")
    async def ingest_task(self, info: Ctx, task: TaskInput) -> TaskResult:
        c, raw = info.context, plain(task)
        return cast(
            TaskResult,
            await attempt(
                lambda: w.ingest_task(c.services, c.principal, w.IngestTaskArgs.parse(raw)),
                lambda out: TaskIngested(records=_records(out["records"])),
            ),
        )


async def _review(info: Ctx, id: str, verdict: w.ReviewVerdict) -> ManageResult:
    c, raw = info.context, {"id": id, "verdict": verdict.value}
    return cast(
        ManageResult,
        await attempt(
            lambda: w.review_decide(c.services, c.principal, w.ReviewArgs.parse(raw, c.uid)),
            managed,
        ),
    )
