"""reflect_session: at the end of a session, an agent (or its host) hands over the chat it
refers to and what it learned, in one call.

The turns are kept as sources: first-hand when the caller's key is a host key (the
application the agent runs in, ``kgmem users token --host``), otherwise agent-reported
(second-hand: the agent retells the chat, so its turns alone activate nothing). A turn the
host already kept first-hand with the same text is not kept again. The learnings are drafts,
run through the write gate as ``draft_memory`` runs them; they cite the session's turns as
``chat:<chat>#<turn>``, which point at the turns as kept (first-hand or reported). With a
model configured, the session's chat is taken by a consolidation pass now (the session is
over: its chat need not go idle first), so what the agent did not write down is extracted
too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgmem.api.accounts import Principal
from kgmem.api.services import Services
from kgmem.api.tools.args import ArgumentError, Fields, jsonable, short_id
from kgmem.api.tools.write import MAX_MESSAGES, MESSAGE_FIELDS, ingested_json, validated_input
from kgmem.errors import DraftInvalid
from kgmem.memory import Actor, MessageIn

__all__ = ["TURN_FIELDS", "ReflectArgs", "reflect_session"]

#: The fields of one turn of the session (its chat is the session's).
TURN_FIELDS = tuple(f for f in MESSAGE_FIELDS if f != "chat")


@dataclass(frozen=True)
class ReflectArgs:
    chat: str
    turns: tuple[MessageIn, ...]
    learnings: tuple[dict[str, Any], ...]
    consolidate: bool = True

    @classmethod
    def parse(cls, raw: object, batch_max: int) -> ReflectArgs:
        f = Fields(raw)
        chat = f.required_text("chat", maximum=500)
        items = f.objects("messages", low=1, high=MAX_MESSAGES) if f.has("messages") else []
        drafts = f.objects("learnings", low=1, high=batch_max) if f.has("learnings") else []
        consolidate = f.boolean("consolidate")
        f.done()
        if not items and not drafts:
            raise ArgumentError("learnings", "give messages or learnings, or both")
        turns = []
        for index, item in enumerate(items):
            turn = validated_input(
                MessageIn, _with_chat(item, chat, index), MESSAGE_FIELDS, f"messages[{index}]"
            )
            turns.append(turn)
        learnings: list[dict[str, Any]] = []
        for index, draft in enumerate(drafts):
            if not isinstance(draft, dict):
                raise ArgumentError(f"learnings[{index}]", "expected a JSON object")
            learnings.append(draft)
        return cls(chat, tuple(turns), tuple(learnings), consolidate is not False)


def _with_chat(item: object, chat: str, index: int) -> object:
    if not isinstance(item, dict):
        raise ArgumentError(f"messages[{index}]", "expected a JSON object")
    unknown = sorted(set(item) - set(TURN_FIELDS))
    if unknown:
        raise ArgumentError(
            f"messages[{index}].{unknown[0]}", "unknown field (the chat is given once, as chat)"
        )
    return {**item, "chat": chat}


def reflect_session(services: Services, principal: Principal, args: ReflectArgs) -> dict[str, Any]:
    """Keep the session's turns, run its learnings through the gate, and (with a model) start
    a consolidation pass over what is ready now."""
    uid, first_hand = principal.uid, principal.host
    kept: dict[int, str] = {}
    fresh = []
    for turn in args.turns:
        ref = f"chat:{args.chat}#{turn.turn}"
        stored = services.sources.get(uid, [ref]).get(ref)
        if not first_hand and stored is not None and stored.text == turn.text:
            kept[turn.turn] = str(stored.iri)  # the host's own record of it stands
            continue
        fresh.append(turn.model_copy(update={"agent_reported": not first_hand}))
    ingested = services.sources.ingest_messages(uid, fresh) if fresh else ()
    for turn, result in zip(fresh, ingested, strict=True):
        kept[turn.turn] = str(result.iri)
    learnings = [_pointed(d, args.chat, kept) for d in args.learnings]
    items: list[dict[str, Any]] = []
    if learnings:
        try:
            drafts = services.gate.parse(learnings)
        except DraftInvalid as exc:
            raise ArgumentError(f"learnings[{exc.item}].{exc.field}", exc.reason) from exc
        for item in services.gate.draft(uid, drafts, actor=Actor.AGENT).items:
            out: dict[str, Any] = jsonable(item)
            out["short_id"] = short_id(item.memory) if item.memory is not None else None
            items.append(out)
    started = None
    if args.consolidate and services.consolidation.has_model:
        started = services.consolidation.start(uid, now=True)
    return {
        "chat": args.chat,
        "first_hand": first_hand,
        "messages": ingested_json(ingested),
        "already_kept": len(args.turns) - len(fresh),
        "learnings": items,
        "consolidation_pass": started,
    }


def _pointed(draft: dict[str, Any], chat: str, kept: dict[int, str]) -> dict[str, Any]:
    """``draft`` with its evidence citing this session's turns pointed at them as kept."""
    evidence = draft.get("evidence")
    if not isinstance(evidence, list):
        return draft
    prefix = f"chat:{chat}#"
    pointed = []
    for item in evidence:
        source = item.get("source") if isinstance(item, dict) else None
        if (
            isinstance(source, str)
            and source.startswith(prefix)
            and source[len(prefix) :].isdigit()
        ):
            turn = int(source[len(prefix) :])
            if turn in kept:
                item = {**item, "source": kept[turn]}
        pointed.append(item)
    return {**draft, "evidence": pointed}
