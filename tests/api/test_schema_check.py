"""A REST body against its schema: refused with the field and the tools' words."""

from __future__ import annotations

import re
import sys
from typing import Any

import pytest

from kgmem.api.rest.operation import user_id
from kgmem.api.rest.schema_check import SchemaCheck, ecma_pattern
from kgmem.api.tools.args import ArgumentError
from kgmem.api.tools.schema import DURATION, INPUTS, VISIBLE
from kgmem.errors import GraphNameError
from kgmem.ontology.manifest import ONTOLOGY_ID
from kgmem.store import check_id

MESSAGE = {"chat": "c", "turn": 0, "role": "user", "text": "hi"}
DRAFT = {"kind": "semantic", "title": "Tea"}
PROCEDURE = {"kind": "procedural", "title": "Make tea"}


@pytest.mark.parametrize(
    ("tool", "body", "field", "said"),
    [
        (
            "ingest_messages",
            {"messages": [{**MESSAGE, "role": "tool"}]},
            "messages[0].tool_outcome",
            "required when role is 'tool'",
        ),
        (
            "ingest_messages",
            {"messages": [{**MESSAGE, "tool_name": "x"}]},
            "messages[0].tool_name",
            "not allowed unless role is 'tool'",
        ),
        (
            "ingest_messages",
            {"messages": [{**MESSAGE, "turn": "1"}]},
            "messages[0].turn",
            "expected a whole number, got a string",
        ),
        (
            "ingest_messages",
            {"messages": [{**MESSAGE, "text": "\x1c "}]},
            "messages[0].text",
            "must not be empty",
        ),
        (
            "draft",
            {"drafts": [{**DRAFT, "kind": "episodic"}]},
            "drafts[0].occurred_at",
            "required when kind is 'episodic'",
        ),
        ("draft", {"drafts": [{**DRAFT, "ttl": "PT0S"}]}, "drafts[0].ttl", "must be positive"),
        (
            "draft",
            {"drafts": [{**DRAFT, "occurred_at": "0999-01-01"}]},
            "drafts[0].occurred_at",
            "out of range",
        ),
        (
            "draft",
            {"drafts": [{**DRAFT, "claims": [{"subject": "I", "predicate": "p"}]}]},
            "drafts[0].claims[0]",
            "give exactly one of object or value",
        ),
        (
            "draft",
            {"drafts": [{**DRAFT, "steps": ["boil water"]}]},
            "drafts[0].steps",
            "not allowed unless kind is 'procedural'",
        ),
        (
            "draft",
            {"drafts": [{**DRAFT, "triggers": ["when thirsty"]}]},
            "drafts[0].triggers",
            "not allowed unless kind is 'procedural'",
        ),
        (
            "draft",
            {"drafts": [{**PROCEDURE, "steps": ["boil water", "steep", " "]}]},
            "drafts[0].steps[2]",
            "must not be empty",
        ),
        (
            "draft",
            {"drafts": [{**PROCEDURE, "steps": ["boil water", 3]}]},
            "drafts[0].steps[1]",
            "expected a string, got a number",
        ),
        (
            "draft",
            {"drafts": [{**PROCEDURE, "steps": ["steep"] * 51}]},
            "drafts[0].steps",
            "give at most 50",
        ),
        ("draft", {"drafts": [DRAFT], "extra": 1}, "extra", "unknown field"),
        ("draft", {}, "drafts", "required"),
        ("retrieve_memory", {"task": "x", "intent": "dream"}, "intent", "must be one of"),
    ],
)
def test_a_refusal_names_the_field(tool: str, body: Any, field: str, said: str) -> None:
    with pytest.raises(ArgumentError) as caught:
        SchemaCheck(INPUTS[tool]).check(body)
    assert caught.value.field == field
    assert said in str(caught.value)


def test_what_the_schema_admits_passes() -> None:
    tool_message = {**MESSAGE, "role": "tool", "tool_outcome": "success", "recall_tool": True}
    SchemaCheck(INPUTS["ingest_messages"]).check({"messages": [MESSAGE, tool_message]})
    episode = {**DRAFT, "kind": "episodic", "occurred_at": "2026-03-14", "ttl": "P7D"}
    SchemaCheck(INPUTS["draft"]).check({"drafts": [episode]})
    procedure = {**PROCEDURE, "steps": ["boil water", "steep"], "triggers": ["when thirsty"]}
    SchemaCheck(INPUTS["draft"]).check({"drafts": [procedure]})


def test_not_empty_is_what_str_strip_keeps() -> None:
    pattern = re.compile(VISIBLE)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (pattern.search(char) is None) == char.isspace(), hex(code)


@pytest.mark.parametrize(
    "value",
    [
        "alice",
        "a",
        "A.b-c_9",
        "x" * 128,
        "x" * 129,
        "alice\n",
        "\nalice",
        "-a",
        ".a",
        "a b",
        "a/b",
        "ä",
        "",
        "a$",
        "9",
    ],
)
def test_an_id_pattern_reads_as_check_id_does(value: str) -> None:
    """A ``$`` ends the text, as ECMA-262 has it (Python's also matches before a final
    newline): the document's id patterns refuse exactly what the store's check refuses."""
    try:
        check_id(value)
        held = True
    except GraphNameError:
        held = False
    assert _passes(user_id("a user id"), value) is held
    ontology = {"type": "string", "pattern": f"^{ONTOLOGY_ID.pattern}$"}
    assert _passes(ontology, value) is bool(ONTOLOGY_ID.fullmatch(value))


def test_a_dollar_ends_the_text_but_not_in_a_class_or_escaped() -> None:
    assert ecma_pattern("^a$").search("a\n") is None
    assert ecma_pattern("^a[$]").search("a$") is not None
    assert ecma_pattern(r"^a\$").search("a$") is not None
    assert not _passes(DURATION, "P7D\n")


def _passes(schema: dict[str, Any], value: object) -> bool:
    try:
        SchemaCheck(schema).check(value)
    except ArgumentError:
        return False
    return True
