"""JSON Schemas of the agent tools' arguments: the OpenAPI request bodies and the MCP input
schemas are these. They describe what :mod:`kgmem.api.tools_args` checks; the checks, not
the schemas, are the authority (a test sends schema-generated input to every route)."""

from __future__ import annotations

from typing import Any

from kgmem.api.tools_write import MESSAGE_FIELDS, ManageAction, ReviewVerdict
from kgmem.memory import MemoryKind, MemoryStatus, Role, SupportKind, Verdict
from kgmem.memory.source_inputs import MAX_SOURCE_TEXT, ToolOutcome
from kgmem.retrieval import DOC_KINDS, Intent

__all__ = ["ERROR", "INPUTS", "MEMORY_ID", "manage_body", "obj"]

Schema = dict[str, Any]


def obj(properties: Schema, required: tuple[str, ...] = (), description: str = "") -> Schema:
    out: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    if description:
        out["description"] = description
    return out


def text(maximum: int, description: str = "", minimum: int = 1) -> Schema:
    out: Schema = {"type": "string", "minLength": minimum, "maxLength": maximum}
    if minimum:
        out["pattern"] = r"\S"
    if description:
        out["description"] = description
    return out


def enum(values: list[str], description: str = "") -> Schema:
    out: Schema = {"type": "string", "enum": values}
    if description:
        out["description"] = description
    return out


def texts(
    maximum: int, each: int, description: str = "", values: list[str] | None = None
) -> Schema:
    item = enum(values) if values else text(each)
    return {
        "type": "array",
        "items": item,
        "minItems": 1,
        "maxItems": maximum,
        "description": description,
    }


MEMORY_ID = text(1000, "A memory id: its full IRI or its short id (the IRI's last segment).")
_WHEN: Schema = {"type": "string", "format": "date-time"}
_NAME = text(200)

ERROR: Schema = obj(
    {
        "error": obj(
            {
                "code": {"type": "string", "description": "not_found, invalid, conflict, ..."},
                "message": {"type": "string", "description": "What was wrong, for people."},
                "field": {"type": ["string", "null"], "description": "The field at fault."},
            },
            ("code", "message", "field"),
        )
    },
    ("error",),
    "The one error shape of every route.",
)

_ENTITY = obj(
    {
        "name": _NAME,
        "types": {"type": "array", "items": text(500)},
        "aliases": {"type": "array", "items": _NAME},
    },
    ("name",),
)
_CLAIM = obj(
    {
        "subject": text(200, "An entity name, or I/me for the speaker of a user message."),
        "predicate": text(500, "An ontology term, e.g. kgm:allergicTo."),
        "object": text(200, "An entity (give object or value)."),
        "value": text(2000, "A literal (give object or value)."),
        "negated": {"type": "boolean"},
        "valid_from": _WHEN,
    },
    ("subject", "predicate"),
)
_EVIDENCE = obj(
    {
        "source": text(500, "A source IRI, chat:<chat>#<turn>, or 'reported'."),
        "quote": text(20000, "The exact words, verbatim in the source."),
        "support": enum([s.value for s in SupportKind]),
    },
    ("source",),
)
_REPORTED = obj(
    {
        "role": enum([r.value for r in Role]),
        "text": text(20000),
        "chat": text(500),
        "tool_name": text(200),
        "tool_outcome": enum([o.value for o in ToolOutcome]),
    },
    ("role", "text"),
    "A source the agent reports inline (the user said: ...): agent authority. A tool's "
    "output (role tool) names its tool_outcome.",
)
DRAFT = obj(
    {
        "kind": enum([k.value for k in MemoryKind]),
        "title": text(200),
        "excerpt": text(500, "One line.", minimum=0),
        "body": text(20000, minimum=0),
        "tags": {"type": "array", "items": text(64), "maxItems": 20},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "domain": text(100, minimum=0),
        "entities": {"type": "array", "items": _ENTITY},
        "claims": {"type": "array", "items": _CLAIM},
        "evidence": {"type": "array", "items": _EVIDENCE},
        "reported_source": _REPORTED,
        "occurred_at": _WHEN,
        "ttl": {"type": "string", "description": "An ISO 8601 duration, e.g. P7D."},
        "source_refs": {"type": "array", "items": text(500)},
    },
    ("kind", "title"),
    "A proposed memory; nothing is stored until the write gate accepts it.",
)
_MESSAGE_PROPS: Schema = {
    "chat": text(500, "The chat id."),
    "turn": {"type": "integer", "minimum": 0, "description": "The turn, from 0."},
    "role": enum([r.value for r in Role]),
    "text": text(MAX_SOURCE_TEXT, "The turn's text, kept verbatim."),
    "timestamp": _WHEN,
    "tool_name": text(200, "role tool only."),
    "tool_outcome": enum([o.value for o in ToolOutcome], "role tool only: required."),
    "recall_tool": {"type": "boolean", "description": "role tool only: a recall tool."},
    "speaker": text(200, "Who wrote it."),
}
assert tuple(_MESSAGE_PROPS) == MESSAGE_FIELDS
MESSAGE = obj(_MESSAGE_PROPS, ("chat", "turn", "role", "text"), "One chat turn.")

INPUTS: dict[str, Schema] = {
    "remember": obj(
        {"text": text(MAX_SOURCE_TEXT, "The note."), "chat": text(500, "The chat it is from.")},
        ("text",),
    ),
    "draft": obj(
        {"drafts": {"type": "array", "items": DRAFT, "minItems": 1, "maxItems": 25}}, ("drafts",)
    ),
    "search": obj(
        {
            "query": text(2000, "What to look for."),
            "k": {"type": "integer", "minimum": 1, "maximum": 100},
            "kinds": texts(
                20,
                32,
                "Memory kinds and/or memory, page, note.",
                [k.value for k in MemoryKind] + list(DOC_KINDS),
            ),
            "tags": texts(20, 64, "Every tag must be present."),
            "entity": text(500, "An entity IRI or name the memory is about."),
            "since": _WHEN,
            "until": _WHEN,
            "statuses": texts(20, 32, "Default: active.", [s.value for s in MemoryStatus]),
        },
        ("query",),
    ),
    "cite": obj({"id": MEMORY_ID}, ("id",)),
    "retrieve_memory": obj(
        {
            "task": text(2000, "The task the agent is about to do."),
            "intent": enum([i.value for i in Intent], "Default: execute."),
            "k": {"type": "integer", "minimum": 1, "maximum": 100},
        },
        ("task",),
    ),
    "record_outcome": obj(
        {
            "items": {"type": "array", "items": MEMORY_ID, "minItems": 1, "maxItems": 100},
            "verdict": enum([v.value for v in Verdict]),
            "task": text(500, minimum=0),
        },
        ("items", "verdict"),
    ),
    "manage_memory": obj(
        {
            "id": MEMORY_ID,
            "action": enum([a.value for a in ManageAction]),
            "delta": {"type": "integer", "enum": [1, -1], "description": "rate only."},
            "decision": text(1000, "revert only: the decision (default: the latest)."),
        },
        ("id", "action"),
    ),
    "ingest_messages": obj(
        {"messages": {"type": "array", "items": MESSAGE, "minItems": 1, "maxItems": 500}},
        ("messages",),
    ),
    "review": obj(
        {"id": MEMORY_ID, "verdict": enum([v.value for v in ReviewVerdict])}, ("id", "verdict")
    ),
}


def manage_body(action: ManageAction) -> Schema:
    """What one manage_memory action takes besides ``id`` and ``action`` (its REST body):
    rate a ``delta`` (required), revert a ``decision`` (optional), the others nothing."""
    properties = INPUTS["manage_memory"]["properties"]
    if action is ManageAction.RATE:
        return obj({"delta": properties["delta"]}, ("delta",))
    if action is ManageAction.REVERT:
        return obj({"decision": properties["decision"]})
    return obj({})
