"""Checking a request body against the JSON Schema the OpenAPI document shows for it.

The document is the contract: a body it refuses is refused here, with a 422 naming the
field the way the tools do (``drafts[0].claims[1].value``), before the tool parses it. The
tool's own parse (:mod:`kgmem.api.tools.args`, the gate's pydantic models) then reads what
the schema cannot say (an id that is this user's, a quote found in a source), so the two never
disagree about the shape of an input.

Formats are not checked here: a time or a duration is read by
:mod:`kgmem.memory.times`, which refuses what it cannot read, naming the field. A ``pattern``
is read as the document's readers read it (ECMA-262): its ``$`` is the end of the text, where
Python's also matches before a final newline (``alice\n`` is no user id).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from kgmem.api.tools.args import ArgumentError, describe
from kgmem.api.tools.schema import DURATION, VISIBLE, WHEN
from kgmem.memory.times import parse_duration, parse_time

__all__ = ["SchemaCheck", "ecma_pattern"]

_KINDS = {"string": "a string", "integer": "a whole number", "number": "a number"}
_KINDS |= {"boolean": "a boolean", "array": "a list", "object": "an object"}


@lru_cache(maxsize=256)
def ecma_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled to match as ECMA-262 reads it: each ``$`` (outside a character
    class, not escaped) is the end of the text (Python's ``\\Z``)."""
    out: list[str] = []
    index, in_class = 0, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = r"\Z"
        out.append(char)
        index += 1
    return re.compile("".join(out))


def _pattern(
    validator: Any, pattern: str, instance: object, schema: Mapping[str, Any]
) -> Iterator[ValidationError]:
    if isinstance(instance, str) and not ecma_pattern(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = validators.extend(Draft202012Validator, {"pattern": _pattern})


class SchemaCheck:
    """One compiled schema: :meth:`check` raises :class:`ArgumentError` for what it refuses."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        _Validator.check_schema(schema)
        self._validator = _Validator(schema)

    def check(self, instance: object) -> None:
        error = best_match(self._validator.iter_errors(instance))
        if error is not None:
            field, message = _explain(error)
            raise ArgumentError(field, message + _condition(self._validator.schema, error))


def _name(path: Iterable[object]) -> str | None:
    """``drafts[0].title`` for the path ``["drafts", 0, "title"]``."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else f".{part}" if out else str(part)
    return out or None


def _explain(error: ValidationError) -> tuple[str | None, str]:
    """The field at fault and what is wrong with it, in the tools' words."""
    path, value, rule = list(error.absolute_path), error.validator_value, error.validator
    instance = error.instance
    if rule == "required" and isinstance(instance, dict):
        missing = next(p for p in value if p not in instance)
        return _name([*path, missing]), "required"
    if rule == "anyOf" and (wanted := _alternatives(value)) and "?" not in wanted:
        # anyOf: [{required: [a]}, {required: [b]}]: the tools name the last one
        return _name([*path, wanted[-1]]), "give " + " or ".join(wanted) + ", or both"
    if rule == "additionalProperties" and isinstance(instance, dict):
        known = error.schema.get("properties", {})
        extra = sorted(str(k) for k in instance if k not in known)
        return _name([*path, extra[0]]), "unknown field"
    return _name(path), _message(error)


def _condition(root: Mapping[str, Any], error: ValidationError) -> str:
    """`` when role is 'tool'`` for an error under an ``if``'s ``then`` (``" unless ..."``
    under its ``else``): the field is required, or not allowed, because of another one."""
    path = list(error.schema_path)
    branches = [i for i, part in enumerate(path) if part in ("then", "else")]
    if not branches:
        return ""
    node: Any = root
    for part in path[: branches[-1]]:
        node = node[part]
    consts = node.get("if", {}).get("properties", {})
    said = " and ".join(f"{k} is {v['const']!r}" for k, v in consts.items() if "const" in v)
    if not said:
        return ""
    return f" when {said}" if path[branches[-1]] == "then" else f" unless {said}"


def _message(error: ValidationError) -> str:
    rule, value, instance = error.validator, error.validator_value, error.instance
    plain: dict[object, str] = {
        "type": f"expected {_KINDS.get(str(value), str(value))}, got {describe(instance)}",
        "minLength": "must not be empty",
        "maxLength": f"at most {value} characters",
        "minItems": f"give at least {value}",
        "maxItems": f"give at most {value}",
        "minimum": f"must be at least {value}",
        "maximum": f"must be at most {value}",
        "oneOf": "give exactly one of " + " or ".join(_alternatives(value)),
    }
    if rule == "enum":
        return "must be one of " + ", ".join(json.dumps(v) for v in value)
    if rule == "const":
        return f"must be {json.dumps(value)}"
    if rule == "not" and value == {}:
        return "not allowed"
    if rule == "pattern" and value == VISIBLE:
        return "must not be empty"
    if error.schema == WHEN or error.schema == DURATION:
        return _unreadable(error.schema, instance)
    if rule in plain:
        return plain[rule]
    description = error.schema.get("description") if isinstance(error.schema, dict) else None
    return f"expected {description}" if description else error.message[:200]


def _alternatives(options: object) -> list[str]:
    """The fields of ``oneOf: [{required: [a]}, {required: [b]}]``."""
    if not isinstance(options, list):
        return []
    return [str(o.get("required", ["?"])[0]) for o in options if isinstance(o, dict)]


def _unreadable(schema: Mapping[str, Any], instance: object) -> str:
    """Why a time or a duration the schema refused cannot be read (as the parser says)."""
    try:
        if schema == WHEN:
            parse_time(instance)
        else:
            parse_duration(instance)
    except ValueError as exc:
        return str(exc)
    return "must be positive" if schema == DURATION else str(schema.get("description"))
