"""The writing agent tools: remember, draft, cite, record_outcome, manage_memory,
ingest_messages and the review decision. Each is ``tool(services, principal, args)`` with
``args`` parsed once by ``Args.parse``: a bad argument is refused before anything is read
or written. The caller's user id (``principal.uid``) is the only scope."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import ValidationError
from rdflib import URIRef

from kgmem.api.accounts import Principal
from kgmem.api.services import Services
from kgmem.api.tools.args import ArgumentError, Fields, jsonable, node_id, short_id
from kgmem.errors import DraftInvalid, LifecycleError, UnknownMemory
from kgmem.memory import (
    Action,
    Actor,
    DraftMemory,
    IngestResult,
    MessageIn,
    NodeKind,
    Verdict,
    WriteMode,
)
from kgmem.memory.source_inputs import MAX_SOURCE_TEXT, TaskIn

__all__ = [
    "CiteArgs",
    "DraftArgs",
    "IngestArgs",
    "ManageAction",
    "ManageArgs",
    "OutcomeArgs",
    "RememberArgs",
    "ReviewArgs",
    "ReviewVerdict",
    "cite",
    "draft",
    "ingest_messages",
    "manage_memory",
    "record_outcome",
    "remember",
    "review_decide",
]

#: The fields of one chat turn a host may send (``agent_reported`` is the gate's own).
MESSAGE_FIELDS = (
    "chat",
    "turn",
    "role",
    "text",
    "timestamp",
    "tool_name",
    "tool_outcome",
    "recall_tool",
    "speaker",
)
MAX_MESSAGES = 500
AGENT, PERSON = "agent", "person"


@dataclass(frozen=True)
class RememberArgs:
    text: str
    chat: str | None = None

    @classmethod
    def parse(cls, raw: object) -> RememberArgs:
        f = Fields(raw)
        args = cls(f.required_text("text", maximum=MAX_SOURCE_TEXT), f.text("chat", maximum=500))
        f.done()
        return args


def remember(services: Services, principal: Principal, args: RememberArgs) -> dict[str, Any]:
    """memory_remember: keep a short note now (agent authority, time-decayed)."""
    record = services.sources.remember(principal.uid, args.text, chat=args.chat)
    out: dict[str, Any] = jsonable(record)
    out["id"] = out.pop("iri")
    out["short_id"] = short_id(record.iri)
    return out


@dataclass(frozen=True)
class DraftArgs:
    drafts: tuple[DraftMemory, ...]

    @classmethod
    def parse(cls, raw: object, services: Services) -> DraftArgs:
        f = Fields(raw)
        items = f.objects("drafts", low=1, high=services.settings.batch_max)
        f.done()
        try:
            return cls(
                tuple(services.gate.parse([_mapping(i, item) for i, item in enumerate(items)]))
            )
        except DraftInvalid as exc:
            raise ArgumentError(f"drafts[{exc.item}].{exc.field}", exc.reason) from exc


def _mapping(index: int, item: object) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ArgumentError(f"drafts[{index}]", "expected a JSON object")
    return item


def draft(services: Services, principal: Principal, args: DraftArgs) -> dict[str, Any]:
    """draft_memory: 1 to batch_max drafts through the write gate, each with its outcome."""
    result = services.gate.draft(principal.uid, args.drafts, actor=Actor.AGENT)
    items = []
    for item in result.items:
        out: dict[str, Any] = jsonable(item)
        out["short_id"] = short_id(item.memory) if item.memory is not None else None
        items.append(out)
    return {"items": items}


@dataclass(frozen=True)
class CiteArgs:
    id: str

    @classmethod
    def parse(cls, raw: object, uid: str) -> CiteArgs:
        f = Fields(raw)
        value = f.required_text("id", maximum=1000)
        f.done()
        if "/" not in value and ":" not in value:  # a short id names a memory
            value = str(node_id(uid, value, NodeKind.MEMORY))
        return cls(value)


def cite(services: Services, principal: Principal, args: CiteArgs) -> dict[str, Any]:
    """memory_cite: the agent used this memory or page; its use count (and ranking) rise."""
    out: dict[str, Any] = jsonable(services.search.memory_cite(principal.uid, args.id))
    return out


@dataclass(frozen=True)
class OutcomeArgs:
    items: tuple[URIRef, ...]
    verdict: Verdict
    task: str = ""

    @classmethod
    def parse(cls, raw: object, uid: str) -> OutcomeArgs:
        f = Fields(raw)
        ids = f.objects("items", low=1, high=100)
        verdict = f.choice("verdict", Verdict, required=True)
        task = f.text("task", maximum=500, blank=True) or ""
        f.done()
        assert verdict is not None
        memories = tuple(node_id(uid, i, NodeKind.MEMORY) for i in ids)
        return cls(tuple(dict.fromkeys(memories)), verdict, task)


def record_outcome(services: Services, principal: Principal, args: OutcomeArgs) -> dict[str, Any]:
    """How the memories used for a task performed: helpful, unused, misleading, outdated."""
    done = services.retrieval.record_outcome(
        principal.uid, [str(m) for m in args.items], args.verdict, args.task
    )
    out: dict[str, Any] = jsonable(done)
    return out


class ManageAction(StrEnum):
    PIN = "pin"
    UNPIN = "unpin"
    ARCHIVE = "archive"
    RESTORE = "restore"
    FORGET = "forget"
    RATE = "rate"
    REVERT = "revert"


@dataclass(frozen=True)
class ManageArgs:
    id: URIRef
    action: ManageAction
    delta: int | None = None  # rate: +1 or -1
    decision: URIRef | None = None  # revert: which decision (default: the latest standing)

    @classmethod
    def parse(cls, raw: object, uid: str) -> ManageArgs:
        f = Fields(raw)
        memory = node_id(uid, f.raw("id"), NodeKind.MEMORY)
        action = f.choice("action", ManageAction, required=True)
        assert action is not None
        delta = decision = None
        if action is ManageAction.RATE:
            delta = f.integer("delta", default=0, low=-1, high=1)
            if delta == 0:
                raise ArgumentError("delta", "rate takes delta +1 or -1")
        if action is ManageAction.REVERT and f.has("decision"):
            decision = node_id(uid, f.raw("decision"), NodeKind.DECISION, "decision")
        f.done()
        return cls(memory, action, delta, decision)


def manage_memory(services: Services, principal: Principal, args: ManageArgs) -> dict[str, Any]:
    """A lifecycle action on one memory, recorded as a revertable decision (forget purges)."""
    uid, memory, life = principal.uid, args.id, services.lifecycle
    if args.action is ManageAction.FORGET:
        tombstone = life.forget(uid, memory, AGENT)
        services.feed.drain(uid)  # the projections forget it now, not at the next drain
        return {"id": str(memory), "action": args.action.value, "decision": str(tombstone)}
    acts = {
        ManageAction.PIN: life.pin,
        ManageAction.UNPIN: life.unpin,
        ManageAction.ARCHIVE: life.archive,
        ManageAction.RESTORE: life.restore,
    }
    if args.action is ManageAction.RATE:
        assert args.delta is not None
        decision = life.rate(uid, memory, args.delta, AGENT)
    elif args.action is ManageAction.REVERT:
        decision = life.revert(uid, _to_revert(services, uid, memory, args.decision), AGENT)
    else:
        decision = acts[args.action](uid, memory, AGENT)
    return _after(services, uid, memory, args.action.value, decision)


def _to_revert(services: Services, uid: str, memory: URIRef, given: URIRef | None) -> URIRef:
    """``given`` if it is a decision about ``memory``; else its latest standing decision."""
    services.lifecycle.get(uid, memory)  # UnknownMemory first
    about = services.lifecycle.decisions.history(uid, [memory])
    if given is not None:
        if not any(d.iri == given for d in about):
            raise UnknownMemory(str(given), "no such decision about this memory")
        return given
    for record in about:
        if record.action is not Action.REVERT and record.reverted_by is None:
            return record.iri
    raise LifecycleError(str(memory), "no decision about it is left to revert")


def _after(
    services: Services, uid: str, memory: URIRef, action: str, decision: URIRef
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": str(memory), "action": action, "decision": str(decision)}
    try:
        record = services.lifecycle.get(uid, memory)
    except UnknownMemory:  # a revert of its creation removes it
        out["status"] = None
        return out
    out.update(status=record.status.value, pinned=record.pinned, strength=record.strength)
    return out


class ReviewVerdict(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


@dataclass(frozen=True)
class ReviewArgs:
    id: URIRef
    verdict: ReviewVerdict

    @classmethod
    def parse(cls, raw: object, uid: str) -> ReviewArgs:
        f = Fields(raw)
        memory = node_id(uid, f.raw("id"), NodeKind.MEMORY)
        verdict = f.choice("verdict", ReviewVerdict, required=True)
        f.done()
        assert verdict is not None
        return cls(memory, verdict)


def review_decide(services: Services, principal: Principal, args: ReviewArgs) -> dict[str, Any]:
    """Approve (active) or reject (archived) a memory waiting in the review inbox."""
    uid, life = principal.uid, services.lifecycle
    act = life.approve if args.verdict is ReviewVerdict.APPROVE else life.reject
    decision = act(uid, args.id, PERSON)
    return _after(services, uid, args.id, args.verdict.value, decision)


@dataclass(frozen=True)
class IngestArgs:
    messages: tuple[MessageIn, ...]

    @classmethod
    def parse(cls, raw: object) -> IngestArgs:
        f = Fields(raw)
        items = f.objects("messages", low=1, high=MAX_MESSAGES)
        f.done()
        return cls(tuple(_message(i, item) for i, item in enumerate(items)))


def _message(index: int, item: object) -> MessageIn:
    return validated_input(MessageIn, item, MESSAGE_FIELDS, f"messages[{index}]")


M = TypeVar("M", MessageIn, TaskIn)


def validated_input(
    model: type[M], raw: object, names: tuple[str, ...], where: str = "", rule: str = ""
) -> M:
    """``raw`` (only ``names``: another field is an error naming it) as a source input; its
    first problem an error naming the field (``messages[2].timestamp``, ``states[0].at``; a
    rule over several fields names ``rule``, as the JSON Schema's check of it does)."""
    f = Fields(raw, where)
    values = {k: f.raw(k) for k in names if f.has(k)}
    f.done()
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error["loc"])
        field = f"{where}{path}".lstrip(".") or rule or where
        raise ArgumentError(field, error["msg"]) from exc


def ingested_json(results: Iterable[IngestResult]) -> list[dict[str, Any]]:
    out = []
    for result in results:
        item: dict[str, Any] = jsonable(result)
        item["id"] = item.pop("iri")
        out.append(item)
    return out


def ingest_messages(services: Services, principal: Principal, args: IngestArgs) -> dict[str, Any]:
    """Keep chat turns as first-hand sources, in one commit (all or, on a conflict, none)."""
    return {
        "messages": ingested_json(services.sources.ingest_messages(principal.uid, args.messages))
    }


TASK_FIELDS = ("task_id", "text", "states", "result", "chat")


@dataclass(frozen=True)
class IngestTaskArgs:
    task: TaskIn

    @classmethod
    def parse(cls, raw: object) -> IngestTaskArgs:
        # a result without a completed or failed state: what the states lack
        return cls(validated_input(TaskIn, raw, TASK_FIELDS, rule="states"))


def ingest_task(services: Services, principal: Principal, args: IngestTaskArgs) -> dict[str, Any]:
    """Keep a task's state changes as first-hand sources, one record each (a state change
    sent again is unchanged; a result reported later completes its record once)."""
    return {"records": ingested_json(services.sources.ingest_task(principal.uid, args.task))}


@dataclass(frozen=True)
class ReviewModeArgs:
    mode: WriteMode | None = None  # None: only read it

    @classmethod
    def parse(cls, raw: object) -> ReviewModeArgs:
        f = Fields(raw)
        mode = f.choice("mode", WriteMode)
        f.done()
        return cls(mode)


def review_mode(services: Services, principal: Principal, args: ReviewModeArgs) -> dict[str, Any]:
    """The user's write mode (autonomous: confident or user-backed drafts become active;
    review: every agent draft waits for a person), set first when ``mode`` is given."""
    gate, uid = services.gate, principal.uid
    before = gate.mode(uid)
    if args.mode is not None and args.mode is not before:
        gate.set_mode(uid, args.mode)
    now = gate.mode(uid)
    return {"mode": now.value, "changed": now is not before}
