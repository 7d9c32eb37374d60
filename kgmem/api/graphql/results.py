"""The result types of GraphQL operations that can fail in expected ways.

An expected failure (a :class:`~kgmem.errors.KgmemError` the caller caused: a bad argument,
an id that is not theirs, a lifecycle conflict) is returned as a member of the operation's
union (``InputError``, ``NotFound``, ``Conflict``) with the message the REST surface gives;
anything else propagates and is masked (see :mod:`kgmem.api.graphql.endpoint`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import strawberry
from starlette.concurrency import run_in_threadpool
from strawberry.scalars import JSON

from kgmem.api.errors import status_of
from kgmem.api.graphql.nodes import Memory, load_memory
from kgmem.api.graphql.types import Ctx, Source
from kgmem.errors import KgmemError

__all__ = [
    "Cited",
    "Conflict",
    "DraftItem",
    "DraftSuccess",
    "Ingested",
    "InputError",
    "Managed",
    "NotFound",
    "OutcomeRecorded",
    "Remembered",
    "attempt",
]

T = TypeVar("T")


@strawberry.type(description="An argument is missing, malformed or out of range.")
class InputError:
    message: str
    field: str | None


@strawberry.type(description="No such node for this user.")
class NotFound:
    message: str


@strawberry.type(description="The action does not apply to the node as it is now.")
class Conflict:
    message: str


Expected = InputError | NotFound | Conflict


def expected(exc: KgmemError) -> Expected | None:
    """The union member for an expected failure; None for an unexpected one."""
    status, _ = status_of(exc)
    field = getattr(exc, "field", None)
    if status == 404:
        return NotFound(message=str(exc))
    if status == 409:
        return Conflict(message=str(exc))
    if status in (400, 413, 422):
        return InputError(message=str(exc), field=field if isinstance(field, str) else None)
    return None


async def attempt(run: Callable[[], T], done: Callable[[T], object]) -> object:
    """Run the blocking ``run`` in the thread pool; its value through ``done``, or the
    expected failure it raised as a union member (unexpected ones propagate)."""
    try:
        value = await run_in_threadpool(run)
    except KgmemError as exc:
        failure = expected(exc)
        if failure is None:
            raise
        return failure
    return done(value)


@strawberry.type(description="A short note kept now.")
class Remembered:
    id: strawberry.ID
    short_id: str
    text: str

    @strawberry.field
    async def source(self, info: Ctx) -> Source | None:
        record = await info.context.source.load(str(self.id))
        return None if record is None else Source.from_record(record)


@strawberry.type(description="What the write gate did with one draft.")
class DraftItem:
    index: int
    outcome: str = strawberry.field(
        description="active, pending, merged, discarded, quarantined or refused"
    )
    memory_id: str | None
    short_id: str | None
    decision: str | None
    reasons: list[str]
    needs_terms: list[str]
    superseded: list[str]
    weakened: list[str] = strawberry.field(
        description="active memories of equal standing it contradicts: their confidence halved"
    )
    contradicts: list[str]
    violations: JSON = strawberry.field(description="the shapes it broke, when it was refused")

    @strawberry.field
    async def memory(self, info: Ctx) -> Memory | None:
        return None if self.memory_id is None else await load_memory(info, self.memory_id)


@strawberry.type
class DraftSuccess:
    items: list[DraftItem]


@strawberry.type
class Cited:
    id: str
    kind: str
    use_count: int


@strawberry.type
class OutcomeRecorded:
    verdict: str
    task: str
    changes: JSON = strawberry.field(description="per memory: its decision, before and after")


@strawberry.type(description="A lifecycle action done, recorded as a revertable decision.")
class Managed:
    id: strawberry.ID
    action: str
    decision: str
    status: str | None = strawberry.field(description="null: the memory is gone")
    pinned: bool | None
    strength: float | None

    @strawberry.field
    async def memory(self, info: Ctx) -> Memory | None:
        return await load_memory(info, str(self.id))


@strawberry.type(description="Abandoned passes taken again by one new pass.")
class Retried:
    pass_id: str | None = strawberry.field(description="the new pass; null: nothing to retry")
    retried: list[str] = strawberry.field(description="the abandoned passes it retries")
    contributions: int


@strawberry.type
class IngestedMessage:
    id: strawberry.ID
    type: str
    status: str = strawberry.field(
        description="created, unchanged, or updated (a task result reported later)"
    )


@strawberry.type
class Ingested:
    messages: list[IngestedMessage]


@strawberry.type(description="What reflectSession kept and decided.")
class Reflected:
    chat: str
    first_hand: bool = strawberry.field(
        description="the turns were kept first-hand (a host key); else agent-reported"
    )
    messages: list[IngestedMessage]
    already_kept: int = strawberry.field(
        description="turns the host had kept first-hand already, with the same text"
    )
    learnings: list[DraftItem]
    consolidation_pass: str | None = strawberry.field(
        description="the pass taking the chat now (null: no model, or a pass is under way)"
    )


def draft_items(out: dict[str, Any]) -> DraftSuccess:
    return DraftSuccess(
        items=[
            DraftItem(
                index=i["index"],
                outcome=i["outcome"],
                memory_id=i["memory"],
                short_id=i["short_id"],
                decision=i["decision"],
                reasons=list(i["reasons"]),
                needs_terms=list(i["needs_terms"]),
                superseded=list(i["superseded"]),
                weakened=list(i["weakened"]),
                contradicts=list(i["contradicts"]),
                violations=i["violations"],
            )
            for i in out["items"]
        ]
    )


def managed(out: dict[str, Any]) -> Managed:
    return Managed(
        id=strawberry.ID(out["id"]),
        action=out["action"],
        decision=out["decision"],
        status=out.get("status"),
        pinned=out.get("pinned"),
        strength=out.get("strength"),
    )
