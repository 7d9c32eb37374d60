"""The agent tools, once, for every surface (REST, MCP, GraphQL).

A tool is a plain function ``tool(services, principal, args)`` over the services, the caller
and arguments parsed by its ``Args.parse`` (:mod:`kgmem.api.tools.args`: typed errors that
name the field, unknown fields refused); it returns a JSON-able dict. No surface type
(Starlette, MCP, strawberry) appears here, and the caller's user id is the only scope.

:data:`TOOLS` lists them by name with a description written for models and the JSON Schema
of their arguments (:mod:`kgmem.api.tools.schema`); :func:`call` parses and runs one:

    call(services, principal, "remember", {"text": "prefers tea"})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from kgmem.api.accounts import Principal
from kgmem.api.services import Services
from kgmem.api.tools.args import ArgumentError, Fields, jsonable, node_id, short_id
from kgmem.api.tools.consolidation import (
    PASS_ID,
    HistoryArgs,
    RetryArgs,
    consolidation_status,
    retry_consolidation,
)
from kgmem.api.tools.notes import (
    ForgetNoteArgs,
    GetNoteArgs,
    ListNotesArgs,
    forget_note,
    get_note,
    list_notes,
)
from kgmem.api.tools.read import (
    GetMemoryArgs,
    LimitArgs,
    ListMemoriesArgs,
    PromptContextArgs,
    ReadPageArgs,
    RetrieveArgs,
    SearchArgs,
    decisions_feed,
    get_memory,
    list_memories,
    prompt_context,
    read_page,
    retrieve_memory,
    review_inbox,
    search,
)
from kgmem.api.tools.schema import INPUTS, NOTE_ID, WHEN, obj, text
from kgmem.api.tools.sessions import ReflectArgs, reflect_session
from kgmem.api.tools.write import (
    CiteArgs,
    DraftArgs,
    IngestArgs,
    IngestTaskArgs,
    ManageAction,
    ManageArgs,
    OutcomeArgs,
    RememberArgs,
    ReviewArgs,
    ReviewModeArgs,
    ReviewVerdict,
    cite,
    draft,
    ingest_messages,
    ingest_task,
    manage_memory,
    record_outcome,
    remember,
    review_decide,
    review_mode,
)
from kgmem.memory import MemoryKind, MemoryStatus

__all__ = [
    "TOOLS",
    "ArgumentError",
    "CiteArgs",
    "DraftArgs",
    "Fields",
    "ForgetNoteArgs",
    "GetMemoryArgs",
    "GetNoteArgs",
    "HistoryArgs",
    "IngestArgs",
    "IngestTaskArgs",
    "LimitArgs",
    "ListMemoriesArgs",
    "ListNotesArgs",
    "ManageAction",
    "ManageArgs",
    "OutcomeArgs",
    "PromptContextArgs",
    "ReadPageArgs",
    "ReflectArgs",
    "RememberArgs",
    "RetrieveArgs",
    "RetryArgs",
    "ReviewArgs",
    "ReviewModeArgs",
    "ReviewVerdict",
    "SearchArgs",
    "Tool",
    "call",
    "cite",
    "consolidation_status",
    "decisions_feed",
    "draft",
    "forget_note",
    "get_memory",
    "get_note",
    "ingest_messages",
    "ingest_task",
    "jsonable",
    "list_memories",
    "list_notes",
    "manage_memory",
    "node_id",
    "prompt_context",
    "read_page",
    "record_outcome",
    "reflect_session",
    "remember",
    "retrieve_memory",
    "retry_consolidation",
    "review_decide",
    "review_inbox",
    "review_mode",
    "search",
    "short_id",
]

Parse = Callable[[Services, Principal, object], Any]
Run = Callable[[Services, Principal, Any], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    """One agent tool: its name, what it is for (for models), its argument schema, how its
    arguments are parsed and what it does."""

    name: str
    description: str
    schema: Mapping[str, Any]
    parse: Parse
    run: Run


def _tool(name: str, description: str, schema: Mapping[str, Any], parse: Parse, run: Run) -> Tool:
    return Tool(name, description, schema, parse, run)


_LIMIT = {"limit": {"type": "integer", "minimum": 1, "maximum": 1000}}
_VALID_AT = {
    **WHEN,
    "description": "Which values held at this time (valid time): memories valid from then or "
    "earlier (or from an unknown time) and not closed by then, active or since superseded "
    "or outdated unless status says otherwise. " + str(WHEN["description"]),
}

TOOLS: Mapping[str, Tool] = MappingProxyType(
    {
        t.name: t
        for t in (
            _tool(
                "memory_remember",
                "Keep a short note now, e.g. something the user just said that may matter "
                "later. Not a fact yet: notes fade from context over about two weeks unless "
                "consolidation turns them into memories. memory_search finds it at once, and "
                "get_note reads it back by the id this answers.",
                INPUTS["remember"],
                lambda s, p, raw: RememberArgs.parse(raw),
                remember,
            ),
            _tool(
                "memory_search",
                "Search the user's memories, pages and notes. Returns the best matches with "
                "ids, excerpts and why each matched. Filters: kinds, tags, entity, since/until, "
                "statuses (default: active only).",
                INPUTS["search"],
                lambda s, p, raw: SearchArgs.parse(raw, s.settings.search_results),
                search,
            ),
            _tool(
                "memory_cite",
                "Tell memory that you used a memory or page (by id) in your answer: its use "
                "count and ranking go up. Only cite what you actually used.",
                INPUTS["cite"],
                lambda s, p, raw: CiteArgs.parse(raw, p.uid),
                cite,
            ),
            _tool(
                "draft_memory",
                "Propose 1 to 25 structured memories. Each needs evidence: the exact quote from "
                "a stored source (chat:<chat>#<turn>) or a reported_source. A procedural "
                "draft lists its steps in order and its triggers (when it applies). Each "
                "draft comes back active, pending review, merged, discarded, quarantined or "
                "refused with reasons.",
                INPUTS["draft"],
                lambda s, p, raw: DraftArgs.parse(raw, s),
                draft,
            ),
            _tool(
                "retrieve_memory",
                "Before a task: get a context packet of the memories that apply (facts, the "
                "best procedure, relevant episodes, their evidence, and warnings). intent is "
                "execute, plan, answer, verify or debug.",
                INPUTS["retrieve_memory"],
                lambda s, p, raw: RetrieveArgs.parse(raw),
                retrieve_memory,
            ),
            _tool(
                "record_outcome",
                "After a task: say how the memories you used performed: helpful, unused, "
                "misleading or outdated. This changes their confidence and strength.",
                INPUTS["record_outcome"],
                lambda s, p, raw: OutcomeArgs.parse(raw, p.uid),
                record_outcome,
            ),
            _tool(
                "manage_memory",
                "Change one memory: pin, unpin, archive, restore, forget (purges it), rate "
                "(delta +1 or -1) or revert (undo the latest decision about it, or decision).",
                INPUTS["manage_memory"],
                lambda s, p, raw: ManageArgs.parse(raw, p.uid),
                manage_memory,
            ),
            _tool(
                "ingest_messages",
                "Keep chat turns (chat, turn, role, text) as first-hand sources that drafts "
                "can quote. Re-sending the same turn changes nothing; a different text under "
                "the same chat and turn is refused.",
                INPUTS["ingest_messages"],
                lambda s, p, raw: IngestArgs.parse(raw),
                ingest_messages,
            ),
            _tool(
                "reflect_session",
                "At the end of a session: hand over its chat (chat, and its messages: turn, "
                "role, text) and what you learned (learnings: drafts as draft_memory takes them, "
                "citing the turns as chat:<chat>#<turn>) in one call. The turns are kept "
                "(agent-reported unless your key is a host key), the learnings go through the "
                "write gate, and with a model the chat is consolidated now.",
                INPUTS["reflect_session"],
                lambda s, p, raw: ReflectArgs.parse(raw, s.settings.batch_max),
                reflect_session,
            ),
            _tool(
                "ingest_task",
                "Keep a task the host ran (its id, what it was, the states it entered with "
                "their times, and its output or error) as first-hand sources that drafts can "
                "quote: one record per state change, cited by the id this answers. Sending the "
                "task again with more states appends them; a state already kept never changes.",
                INPUTS["ingest_task"],
                lambda s, p, raw: IngestTaskArgs.parse(raw),
                ingest_task,
            ),
            _tool(
                "list_memories",
                "List the user's memories, newest first, optionally by kind and status. With "
                "valid_at (and entity, predicate): which value held at that time, e.g. where "
                "the user worked last March, including values since superseded. With known_at: "
                "as memory knew it then (later memories left out, later changes undone).",
                obj(
                    {
                        "kind": {"type": "string", "enum": [k.value for k in MemoryKind]},
                        "status": {"type": "string", "enum": [s.value for s in MemoryStatus]},
                        "offset": {"type": "integer", "minimum": 0},
                        **_LIMIT,
                        "valid_at": _VALID_AT,
                        "entity": text(
                            500,
                            "Only memories with a claim about this subject: an entity "
                            "IRI or name (I or me: the user).",
                        ),
                        "predicate": text(
                            500,
                            "Only memories with a claim of this predicate: an IRI or a "
                            "prefixed name such as schema:memberOf (no IRI: none matches).",
                        ),
                        "known_at": {
                            **WHEN,
                            "description": "As kgmem knew it at this time (record time). "
                            + WHEN["description"],
                        },
                    }
                ),
                lambda s, p, raw: ListMemoriesArgs.parse(raw),
                list_memories,
            ),
            _tool(
                "get_memory",
                "One memory with every field, its claims, evidence and decisions.",
                obj({"id": INPUTS["cite"]["properties"]["id"]}, ("id",)),
                lambda s, p, raw: GetMemoryArgs.parse(raw, p.uid),
                get_memory,
            ),
            _tool(
                "get_note",
                "One note by the id memory_remember answered (or a search hit of kind note): "
                "its text, chat and when it was written.",
                obj({"id": NOTE_ID}, ("id",)),
                lambda s, p, raw: GetNoteArgs.parse(raw, p.uid),
                get_note,
            ),
            _tool(
                "consolidation_status",
                "What waits for consolidation (sources, queued drafts) and the latest passes, "
                "newest first: stage, attempts, errors, and why an abandoned pass was given "
                "up.",
                obj({"limit": {"type": "integer", "minimum": 1, "maximum": 200}}),
                lambda s, p, raw: HistoryArgs.parse(raw),
                consolidation_status,
            ),
            _tool(
                "retry_consolidation",
                "Take again what abandoned consolidation passes held (passes: their ids; "
                "default every abandoned pass not retried yet): one new pass, run by the "
                "scheduler. Refused while another pass is under way.",
                obj({"passes": {"type": "array", "items": PASS_ID, "minItems": 1, "maxItems": 99}}),
                lambda s, p, raw: RetryArgs.parse(raw),
                retry_consolidation,
            ),
            _tool(
                "list_notes",
                "List the user's short notes (memory_remember), newest first, each marked "
                "consolidated or not: an unconsolidated note is only what was written down, "
                "not yet checked into memories. consolidated: only those (true) or the others "
                "(false).",
                obj(
                    {
                        "consolidated": {"type": "boolean"},
                        "offset": {"type": "integer", "minimum": 0, "maximum": 10**6},
                        **_LIMIT,
                    }
                ),
                lambda s, p, raw: ListNotesArgs.parse(raw),
                list_notes,
            ),
            _tool(
                "forget_note",
                "Forget one short note (by the id memory_remember answered): its text is purged. "
                "Refused while memories quote it (forget those first); an external note is the "
                "vault's file.",
                obj({"id": NOTE_ID}, ("id",)),
                lambda s, p, raw: ForgetNoteArgs.parse(raw, p.uid),
                forget_note,
            ),
            _tool(
                "read_page",
                "Read a page, playbook or note whole, by the path a search hit or the playbook "
                "index gave (its absolute path) or by the entity it is about (IRI or name): "
                "its Markdown with every fact's citations.",
                obj(
                    {
                        "path": text(2000, "The page's or note's path, as a hit gives it."),
                        "entity": text(500, "The entity (IRI or name) whose page to read."),
                    }
                ),
                lambda s, p, raw: ReadPageArgs.parse(raw),
                read_page,
            ),
            _tool(
                "review_inbox",
                "The memories waiting for the user's review, newest first.",
                obj(dict(_LIMIT)),
                lambda s, p, raw: LimitArgs.parse(raw),
                review_inbox,
            ),
            _tool(
                "review_decide",
                "Approve (it becomes active) or reject (archived) a memory waiting for review.",
                INPUTS["review"],
                lambda s, p, raw: ReviewArgs.parse(raw, p.uid),
                review_decide,
            ),
            _tool(
                "prompt_context",
                "What to keep in mind in every turn, as Markdown within a token budget: who "
                "the user is (name, timezone, what is known of them), recent short notes, and "
                "the playbooks and procedures to look up. Sections a cap or the budget cut "
                "end with a line saying how many were left out.",
                INPUTS["prompt_context"],
                lambda s, p, raw: PromptContextArgs.parse(raw),
                prompt_context,
            ),
            _tool(
                "review_mode",
                "Read, or set with mode, how the user wants your drafts handled: autonomous "
                "(confident or user-backed drafts become active at once) or review (every "
                "draft of yours waits in the review inbox for the user). Set it only when the "
                "user asks.",
                INPUTS["review_mode"],
                lambda s, p, raw: ReviewModeArgs.parse(raw),
                review_mode,
            ),
            _tool(
                "decisions_feed",
                "Every decision the write gate and the lifecycle made, newest first; a "
                "refused draft is one too (action refuse, no target, its title and why).",
                obj(dict(_LIMIT)),
                lambda s, p, raw: LimitArgs.parse(raw),
                decisions_feed,
            ),
        )
    }
)


def call(services: Services, principal: Principal, name: str, raw: object) -> dict[str, Any]:
    """Parse ``raw`` as tool ``name``'s arguments and run it for ``principal``."""
    tool = TOOLS.get(name)
    if tool is None:
        raise ArgumentError("tool", f"no tool named {name!r}")
    return tool.run(services, principal, tool.parse(services, principal, raw))
