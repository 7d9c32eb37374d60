"""The REST surface's endpoint table: each route's tool, parameters and body.

The routes (:mod:`kgmem.api.rest.routes`) and the OpenAPI document
(:mod:`kgmem.api.rest.openapi`) are both made from :data:`ENDPOINTS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kgmem.api.tools.registry import TOOLS, ManageAction, ReviewVerdict
from kgmem.api.tools.schema import INPUTS, manage_body

__all__ = ["ENDPOINTS", "Endpoint", "Param"]


@dataclass(frozen=True)
class Param:
    """A query parameter: its name in the URL, the tool argument it fills, and whether it
    may repeat (``?kind=semantic&kind=episodic``)."""

    name: str
    arg: str
    schema: Mapping[str, Any]
    description: str = ""
    many: bool = False
    required: bool = False


@dataclass(frozen=True)
class Endpoint:
    """One route. ``fixed`` are arguments the route itself gives (``/api/memories/{id}/pin``
    is manage_memory with action pin); ``body_schema``, when given, is exactly what its body
    takes (else the tool's arguments minus the path's and the fixed ones)."""

    method: str
    path: str  # as OpenAPI writes it: /api/memories/{id}
    tool: str
    summary: str
    query: tuple[Param, ...] = ()
    body: bool = False  # a JSON body with the tool's arguments (minus path and fixed ones)
    body_required: bool = True
    path_enums: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fixed: Mapping[str, str] = field(default_factory=dict)
    body_schema: Mapping[str, Any] | None = None
    operation: str = ""  # the operation id, when two routes run one tool

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(p[1:-1] for p in self.path.split("/") if p.startswith("{"))

    @property
    def operation_id(self) -> str:
        """The tool's name, and the fixed arguments' values: ``manage_memory_pin``."""
        return self.operation or "_".join((self.tool, *self.fixed.values()))

    @property
    def route(self) -> str:
        """The Starlette path: an id may be a URL-encoded IRI, so it spans segments."""
        return self.path.replace("{id}", "{id:path}")


def _int(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


def _enum(values: list[str]) -> dict[str, Any]:
    return {"type": "string", "enum": values}


def _arg_schema(tool: str, arg: str) -> Mapping[str, Any]:
    schema: Mapping[str, Any] = TOOLS[tool].schema["properties"][arg]
    return schema.get("items", schema) if schema.get("type") == "array" else schema


_LIMIT = Param("limit", "limit", _int(1, 1000), "At most this many (default 50).")
_ACTIONS = {
    ManageAction.PIN: "Pin a memory",
    ManageAction.UNPIN: "Unpin a memory",
    ManageAction.ARCHIVE: "Archive a memory",
    ManageAction.RESTORE: "Restore an archived memory",
    ManageAction.FORGET: "Forget a memory: purge it from every graph and projection",
    ManageAction.RATE: "Rate a memory: delta +1 or -1",
    ManageAction.REVERT: "Revert a decision about a memory (default: the latest standing one)",
}


def _manage(action: ManageAction) -> Endpoint:
    """A lifecycle action, one route each, so each body says exactly what it takes."""
    return Endpoint(
        "POST",
        f"/api/memories/{{id}}/{action.value}",
        "manage_memory",
        _ACTIONS[action],
        body=True,
        body_required=action is ManageAction.RATE,
        fixed={"action": action.value},
        body_schema=manage_body(action),
    )


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "POST",
        "/api/memories/batch-draft",
        "draft_memory",
        "Draft 1 to batch_max memories through the write gate",
        body=True,
    ),
    Endpoint(
        "GET",
        "/api/memories",
        "list_memories",
        "The caller's memories, newest first; valid_at: those that held then; known_at: as "
        "kgmem knew them then",
        query=(
            Param("kind", "kind", _arg_schema("list_memories", "kind")),
            Param("status", "status", _arg_schema("list_memories", "status")),
            _LIMIT,
            Param("offset", "offset", _int(0, 10**6), "Skip this many."),
            Param(
                "valid_at",
                "valid_at",
                _arg_schema("list_memories", "valid_at"),
                "Which values held at this time (valid time).",
            ),
            Param("entity", "entity", _arg_schema("list_memories", "entity"), "Claims about."),
            Param("predicate", "predicate", _arg_schema("list_memories", "predicate")),
            Param(
                "known_at",
                "known_at",
                _arg_schema("list_memories", "known_at"),
                "As kgmem knew it then (record time).",
            ),
        ),
    ),
    Endpoint(
        "GET",
        "/api/memories/{id}",
        "get_memory",
        "One memory: every field, claims, evidence and its decisions",
    ),
    *(_manage(action) for action in ManageAction),
    Endpoint(
        "GET",
        "/api/search",
        "memory_search",
        "Search memories, pages and notes (active only unless status says otherwise)",
        query=(
            Param("q", "query", _arg_schema("memory_search", "query"), "The query."),
            Param("kind", "kinds", _arg_schema("memory_search", "kinds"), many=True),
            Param("k", "k", _int(1, 100), "How many results (default 8)."),
            Param("tag", "tags", _arg_schema("memory_search", "tags"), many=True),
            Param("entity", "entity", _arg_schema("memory_search", "entity")),
            Param("status", "statuses", _arg_schema("memory_search", "statuses"), many=True),
            Param("since", "since", _arg_schema("memory_search", "since"), "At or after."),
            Param("until", "until", _arg_schema("memory_search", "until"), "Before."),
        ),
    ),
    Endpoint(
        "POST",
        "/api/cite",
        "memory_cite",
        "The caller used this memory or page: its use count and ranking rise",
        body=True,
    ),
    Endpoint("POST", "/api/remember", "memory_remember", "Keep a short note now", body=True),
    Endpoint(
        "GET",
        "/api/notes",
        "list_notes",
        "The caller's short notes, newest first, each marked consolidated or not",
        query=(
            Param("consolidated", "consolidated", {"type": "boolean"}, "Only these (or not)."),
            _LIMIT,
            Param("offset", "offset", _int(0, 10**6), "Skip this many."),
        ),
    ),
    Endpoint(
        "GET",
        "/api/notes/{id}",
        "get_note",
        "One note by id: a short note kept with remember, or an external note's revision",
    ),
    Endpoint(
        "POST",
        "/api/notes/{id}/forget",
        "forget_note",
        "Forget a short note: its text is purged (refused while memories quote it)",
    ),
    Endpoint(
        "GET",
        "/api/pages",
        "read_page",
        "One page, playbook or note by its path (as a search hit gives it)",
        query=(
            Param(
                "path",
                "path",
                _arg_schema("read_page", "path"),
                "Its absolute path, or its path in the vault.",
                required=True,
            ),
        ),
        operation="read_page_by_path",
    ),
    Endpoint(
        "GET",
        "/api/pages/by-entity",
        "read_page",
        "The page of an entity (IRI or name), or the playbook of a procedure",
        query=(
            Param(
                "entity",
                "entity",
                _arg_schema("read_page", "entity"),
                "Its IRI or name.",
                required=True,
            ),
        ),
        operation="read_page_by_entity",
    ),
    Endpoint("POST", "/api/messages", "ingest_messages", "Ingest chat turns as sources", body=True),
    Endpoint(
        "POST", "/api/tasks", "ingest_task", "Ingest a task's lifecycle as sources", body=True
    ),
    Endpoint(
        "POST",
        "/api/sessions/reflect",
        "reflect_session",
        "The end of a session: its chat and learnings in one call (reflect_session)",
        body=True,
    ),
    Endpoint(
        "POST",
        "/api/context",
        "retrieve_memory",
        "A context packet for a task and intent (retrieve_memory)",
        body=True,
    ),
    Endpoint(
        "POST",
        "/api/outcomes",
        "record_outcome",
        "How the memories used for a task performed",
        body=True,
    ),
    Endpoint(
        "GET",
        "/api/prompt-context",
        "prompt_context",
        "The pushed context: profile, short notes and playbook index within a token budget",
        query=tuple(
            Param(name, name, _arg_schema("prompt_context", name))
            for name in ("account_name", "timezone", "budget_tokens")
        ),
    ),
    Endpoint(
        "GET",
        "/api/consolidation",
        "consolidation_status",
        "What waits for consolidation and the latest passes (why abandoned ones were)",
        query=(Param("limit", "limit", _int(1, 200), "How many passes (default 20)."),),
    ),
    Endpoint(
        "POST",
        "/api/consolidation/retry",
        "retry_consolidation",
        "Take again what abandoned passes held: one new pass, run by the scheduler",
        body=True,
    ),
    Endpoint("GET", "/api/review", "review_inbox", "The review inbox", query=(_LIMIT,)),
    Endpoint("GET", "/api/review-mode", "review_mode", "The user's review mode"),
    Endpoint(
        "PUT",
        "/api/review-mode",
        "review_mode",
        "Set the user's review mode: autonomous or review",
        body=True,
        body_schema={**INPUTS["review_mode"], "required": ["mode"]},
        operation="set_review_mode",
    ),
    Endpoint(
        "POST",
        "/api/review/{id}/{verdict}",
        "review_decide",
        "Approve or reject a pending memory",
        path_enums={"verdict": tuple(v.value for v in ReviewVerdict)},
    ),
    Endpoint(
        "GET",
        "/api/decisions",
        "decisions_feed",
        "The decisions feed, newest first",
        query=(_LIMIT,),
    ),
)
