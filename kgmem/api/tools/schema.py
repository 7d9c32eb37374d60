"""JSON Schemas of the agent tools' arguments: the OpenAPI request bodies and the MCP input
schemas are these. They say exactly what the tools take: a REST body is checked against its
schema before the tool reads it (:mod:`kgmem.api.rest.schema_check`), and an input a schema admits
is one the tool's own checks (:mod:`kgmem.api.tools.args`, the gate's models) accept, which
a hostile-input suite (``tests/hostile``) holds the server to. Conditions a field cannot say
alone are said with ``if``/``then`` (an episode needs ``occurred_at``; only a procedure has
``steps`` and ``triggers``; a tool's message names its ``tool_outcome``, no other message
does) and ``oneOf`` (a claim's object or value)."""

from __future__ import annotations

from typing import Any

from kgmem.api.tools.write import MESSAGE_FIELDS, ManageAction, ReviewVerdict
from kgmem.memory import (
    MAX_STEP_CHARS,
    MAX_STEPS,
    MAX_TRIGGER_CHARS,
    MAX_TRIGGERS,
    MemoryKind,
    MemoryStatus,
    Role,
    SupportKind,
    Verdict,
    WriteMode,
)
from kgmem.memory.source_inputs import MAX_SOURCE_TEXT, TaskState, ToolOutcome
from kgmem.memory.times import DURATION_PATTERN, EARLIEST_YEAR, LATEST_YEAR
from kgmem.retrieval import DOC_KINDS, MIN_BUDGET_TOKENS, Intent

__all__ = [
    "DURATION",
    "ERROR",
    "INPUTS",
    "MEMORY_ID",
    "NOTE_ID",
    "VISIBLE",
    "WHEN",
    "manage_body",
    "obj",
]

Schema = dict[str, Any]


def obj(properties: Schema, required: tuple[str, ...] = (), description: str = "") -> Schema:
    out: Schema = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    if description:
        out["description"] = description
    return out


#: Some character Python's ``str.strip()`` keeps (what the tools read as "not empty"),
#: spelled out: an ECMA-262 ``\\S`` differs from Python's (``\\x1c``-``\\x1f``, ``\\ufeff``).
VISIBLE = r"[^\t\n\x0b\x0c\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"


def text(maximum: int, description: str = "", minimum: int = 1) -> Schema:
    out: Schema = {"type": "string", "minLength": minimum, "maxLength": maximum}
    if minimum:
        out["pattern"] = VISIBLE
    if description:
        out["description"] = description
    return out


def tool_only(schema: Schema, fields: tuple[str, ...], flags: tuple[str, ...] = ()) -> Schema:
    """``schema`` (an object with a ``role``) where role ``tool`` requires ``tool_outcome``
    and any other role has none of ``fields`` (and each of ``flags`` false), as
    :func:`kgmem.memory.model.check_tool_outcome` has it."""
    others: Schema = {name: {"not": {}} for name in fields}  # (a false schema names no field)
    others.update({name: {"const": False} for name in flags})
    return {
        **schema,
        "if": {"properties": {"role": {"const": Role.TOOL.value}}, "required": ["role"]},
        "then": {"required": ["tool_outcome"]},
        "else": {"properties": others},
    }


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
NOTE_ID = text(1000, "A note id, as memory_remember answered it: its IRI or its short id.")
# what kgmem.memory.times.parse_time reads, in the years it keeps (it also takes a time
# with no offset, as UTC, which JSON Schema has no format for)
WHEN: Schema = {
    "type": "string",
    "anyOf": [{"format": "date-time"}, {"format": "date"}],
    "pattern": f"^[{EARLIEST_YEAR // 1000}-{LATEST_YEAR // 1000}][0-9]{{3}}-",
    "description": "ISO 8601 / RFC 3339, in the years 1000 to 8999: a date-time, or a date "
    "(that day at 00:00 UTC); a time with no offset is UTC.",
}
_NAME = text(200)
# kgmem.memory.times.parse_duration: some part not zero, and a T only before a time part
DURATION: Schema = {
    "type": "string",
    "pattern": f"^{DURATION_PATTERN}$",
    "not": {"pattern": "^PT?$|T$|^[^1-9]*$"},
    "description": "An ISO 8601 duration, e.g. P7D, PT12H or P1Y2M (a year is 365 days, "
    "a month 30).",
}

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
        "valid_from": WHEN,
    },
    ("subject", "predicate"),
    "A claim names an entity (object) or a literal (value): exactly one of them.",
)
_CLAIM["oneOf"] = [{"required": ["object"]}, {"required": ["value"]}]
_EVIDENCE = obj(
    {
        "source": text(500, "A source IRI, chat:<chat>#<turn>, or 'reported'."),
        "quote": text(20000, "The exact words, verbatim in the source."),
        "support": enum([s.value for s in SupportKind]),
    },
    ("source",),
)
_REPORTED = tool_only(
    obj(
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
    ),
    ("tool_name", "tool_outcome"),
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
        "occurred_at": WHEN,
        "ttl": DURATION,
        "source_refs": {"type": "array", "items": text(500)},
        "steps": {
            "type": "array",
            "items": text(MAX_STEP_CHARS),
            "maxItems": MAX_STEPS,
            "description": "procedural only: what to do, one step per item, in order.",
        },
        "triggers": {
            "type": "array",
            "items": text(MAX_TRIGGER_CHARS),
            "maxItems": MAX_TRIGGERS,
            "description": "procedural only: when it applies, e.g. 'when booking a flight'.",
        },
    },
    ("kind", "title"),
    "A proposed memory; nothing is stored until the write gate accepts it. An episodic "
    "memory says when it happened (occurred_at); a procedural one may list its steps and "
    "triggers.",
)


def _when_kind(
    kind: MemoryKind, then: Schema | None = None, otherwise: Schema | None = None
) -> Schema:
    out: Schema = {"if": {"properties": {"kind": {"const": kind.value}}, "required": ["kind"]}}
    if then is not None:
        out["then"] = then
    if otherwise is not None:
        out["else"] = otherwise
    return out


DRAFT["allOf"] = [
    _when_kind(MemoryKind.EPISODIC, then={"required": ["occurred_at"]}),
    # (a false schema names no field)
    _when_kind(
        MemoryKind.PROCEDURAL,
        otherwise={"properties": {"steps": {"not": {}}, "triggers": {"not": {}}}},
    ),
]
_MESSAGE_PROPS: Schema = {
    "chat": text(500, "The chat id."),
    "turn": {"type": "integer", "minimum": 0, "description": "The turn, from 0."},
    "role": enum([r.value for r in Role]),
    "text": text(MAX_SOURCE_TEXT, "The turn's text, kept verbatim."),
    "timestamp": WHEN,
    "tool_name": text(200, "role tool only."),
    "tool_outcome": enum([o.value for o in ToolOutcome], "role tool: required; else none."),
    "recall_tool": {"type": "boolean", "description": "role tool only: a recall tool."},
    "speaker": text(200, "Who wrote it."),
}
assert tuple(_MESSAGE_PROPS) == MESSAGE_FIELDS
MESSAGE = tool_only(
    obj(_MESSAGE_PROPS, ("chat", "turn", "role", "text"), "One chat turn."),
    ("tool_name", "tool_outcome"),
    ("recall_tool",),
)

#: One turn of a session handed over whole (reflect_session): its chat is the session's.
TURN = tool_only(
    obj(
        {k: v for k, v in _MESSAGE_PROPS.items() if k != "chat"},
        ("turn", "role", "text"),
        "One turn of the session's chat.",
    ),
    ("tool_name", "tool_outcome"),
    ("recall_tool",),
)

TASK = obj(
    {
        "task_id": text(500, "The host's id of the task (the same id each time it is sent)."),
        "text": text(MAX_SOURCE_TEXT, "What the task is, verbatim."),
        "states": {
            "type": "array",
            "items": obj(
                {"state": enum([t.value for t in TaskState]), "at": WHEN}, ("state", "at")
            ),
            "minItems": 1,
            "maxItems": 100,
            "description": "The states it entered (kept in time order); sending the task "
            "again with more appends them.",
        },
        "result": text(
            MAX_SOURCE_TEXT,
            "Its output or error: it goes with the latest completed or failed state.",
        ),
        "chat": text(500, "The chat it was run for."),
    },
    ("task_id", "text", "states"),
    "A task's lifecycle as the host ran it: first-hand evidence of what was done.",
)
# a result needs a state it can belong to
TASK["dependentSchemas"] = {
    "result": {
        "properties": {
            "states": {
                "contains": {
                    "properties": {
                        "state": {"enum": [TaskState.COMPLETED.value, TaskState.FAILED.value]}
                    }
                }
            }
        }
    }
}

MAX_BUDGET_TOKENS = 100_000  # the most a prompt context may be asked to take

INPUTS: dict[str, Schema] = {
    "prompt_context": obj(
        {
            "account_name": text(200, "The account's name, as the host knows it."),
            "timezone": text(
                64, "The user's IANA timezone (Europe/Berlin): a known one shows local time."
            ),
            "budget_tokens": {
                "type": "integer",
                "minimum": MIN_BUDGET_TOKENS,
                "maximum": MAX_BUDGET_TOKENS,
                "description": "Tokens the context may take (default: the server's setting).",
            },
        },
        (),
    ),
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
            "since": WHEN,
            "until": WHEN,
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
    "ingest_task": TASK,
    "review_mode": obj(
        {
            "mode": enum(
                [m.value for m in WriteMode],
                "Set it: autonomous (confident or user-backed drafts become active) or review "
                "(every agent draft waits for a person). Leave out to read it.",
            )
        }
    ),
    "ingest_messages": obj(
        {"messages": {"type": "array", "items": MESSAGE, "minItems": 1, "maxItems": 500}},
        ("messages",),
    ),
    "reflect_session": {
        **obj(
            {
                "chat": text(500, "The chat the session was (its id, as ingest_messages has it)."),
                "messages": {"type": "array", "items": TURN, "minItems": 1, "maxItems": 500},
                "learnings": {"type": "array", "items": DRAFT, "minItems": 1, "maxItems": 25},
                "consolidate": {
                    "type": "boolean",
                    "description": "With a model: take the chat into a consolidation pass now "
                    "(default true).",
                },
            },
            ("chat",),
        ),
        "anyOf": [{"required": ["messages"]}, {"required": ["learnings"]}],
    },
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
