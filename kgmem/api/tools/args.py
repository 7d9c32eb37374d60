"""Checking the agent tools' arguments once, for every surface, and shaping their results.

Arguments arrive as decoded JSON (REST bodies, MCP tool calls, GraphQL inputs turned into
mappings). :class:`Fields` reads one JSON object: each accessor checks one field and raises
:class:`ArgumentError` naming it (``messages[2].turn``); :meth:`Fields.done` refuses any
field no accessor asked for, so a misspelt field is an error rather than silently ignored.
A ``null`` anywhere in the arguments is refused naming its field: no schema admits one, and
"leave it out" is the one way to ask for a default, on every surface.

Memory and decision ids are the full node IRI or its last segment (the short id); an id of
another user, of another kind of node, or of nothing at all is :class:`UnknownMemory`
alike, so a refusal never tells whether someone else's id exists.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import fields, is_dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import Any, TypeVar

from rdflib import Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Identifier

from kgmem.errors import ArgumentError, GraphNameError, UnknownMemory
from kgmem.memory import NodeKind, node_iri, parse_node
from kgmem.memory.times import parse_time
from kgmem.store import check_id

__all__ = [
    "ArgumentError",
    "Fields",
    "describe",
    "jsonable",
    "node_id",
    "refuse_unreadable",
    "short_id",
]

E = TypeVar("E", bound=Enum)
_MAX_ID = 1000
_NUMBER = re.compile(r"[+-]?\d+(\.\d+)?([eE][+-]?\d+)?")


_MISSING = object()


class Fields:
    """One JSON object of arguments, read field by field (see the module docstring)."""

    def __init__(self, raw: object, where: str = "") -> None:
        if not isinstance(raw, Mapping):
            raise ArgumentError(where or None, f"expected a JSON object, got {describe(raw)}")
        if not where:  # the whole arguments: every value in them, once
            refuse_unreadable(raw)
        self._raw: Mapping[str, object] = raw
        self._where = where
        self._seen: set[str] = set()

    def name(self, key: str) -> str:
        """The field's name as an error shows it."""
        return f"{self._where}.{key}" if self._where else key

    def _get(self, key: str) -> object:
        self._seen.add(key)
        return self._raw.get(key, _MISSING)

    def has(self, key: str) -> bool:
        return key in self._raw

    def raw(self, key: str) -> object:
        """The field as given (None when absent), for a parser of its own."""
        value = self._get(key)
        return None if value is _MISSING else value

    def text(
        self,
        key: str,
        *,
        required: bool = False,
        maximum: int = 2000,
        default: str | None = None,
        blank: bool = False,
    ) -> str | None:
        """A string of 1 to ``maximum`` characters, not all whitespace; ``blank``: an empty
        or all-whitespace one is taken too, as ``""`` (for a field whose default is "")."""
        value = self._get(key)
        if value is _MISSING:
            self._absent(key, required)
            return default
        if not isinstance(value, str):
            raise ArgumentError(self.name(key), f"expected a string, got {describe(value)}")
        if len(value) > maximum:
            raise ArgumentError(self.name(key), f"at most {maximum} characters")
        if not value.strip():
            if blank:
                return ""
            raise ArgumentError(self.name(key), "must not be empty")
        return value

    def required_text(self, key: str, *, maximum: int = 2000) -> str:
        value = self.text(key, required=True, maximum=maximum)
        assert value is not None
        return value

    def integer(self, key: str, *, default: int, low: int, high: int) -> int:
        """A whole number: JSON's ``14`` or ``14.0`` (JSON Schema's integer is any number
        with no fraction), or the same written in a query string."""
        value = self._get(key)
        if value is _MISSING:
            return default
        if isinstance(value, str) and len(value) < 40 and _NUMBER.fullmatch(value.strip()):
            text = value.strip()  # a query-string parameter
            value = int(text) if text.lstrip("+-").isdigit() else float(text)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(self.name(key), f"expected a whole number, got {describe(value)}")
        if not low <= value <= high:
            raise ArgumentError(self.name(key), f"must be from {low} to {high}")
        return value

    def boolean(self, key: str) -> bool | None:
        """JSON's ``true`` or ``false`` (or the same written in a query string); None when
        absent."""
        value = self._get(key)
        if value is _MISSING:
            return None
        if isinstance(value, str) and value in ("true", "false"):
            return value == "true"
        if not isinstance(value, bool):
            raise ArgumentError(self.name(key), f"expected true or false, got {describe(value)}")
        return value

    def choice(self, key: str, kind: type[E], *, required: bool = False) -> E | None:
        value = self._get(key)
        allowed = [str(m.value) for m in kind]
        if value is _MISSING:
            self._absent(key, required)
            return None
        if not isinstance(value, str) or value not in allowed:
            raise ArgumentError(self.name(key), f"must be one of {', '.join(allowed)}")
        return kind(value)

    def texts(self, key: str, *, maximum: int = 20, each: int = 200) -> tuple[str, ...] | None:
        """A list of strings (one string is a list of one), or None when absent."""
        value = self._get(key)
        if value is _MISSING:
            return None
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not 1 <= len(values) <= maximum:
            raise ArgumentError(self.name(key), f"expected a list of 1 to {maximum} strings")
        for index, item in enumerate(values):
            if not isinstance(item, str) or not item.strip() or len(item) > each:
                where = f"{self.name(key)}[{index}]"
                raise ArgumentError(where, f"expected a string of 1 to {each} characters")
        return tuple(values)

    def objects(self, key: str, *, low: int, high: int) -> list[object]:
        """A required list of ``low`` to ``high`` items (checked by the caller)."""
        value = self._get(key)
        if value is _MISSING:
            raise ArgumentError(self.name(key), "required")
        if not isinstance(value, list):
            raise ArgumentError(self.name(key), f"expected a list, got {describe(value)}")
        if not low <= len(value) <= high:
            raise ArgumentError(self.name(key), f"give {low} to {high} items, got {len(value)}")
        return list(value)

    def when(self, key: str) -> datetime | None:
        """An ISO 8601 time (naive: UTC), or None when absent."""
        value = self._get(key)
        if value is _MISSING:
            return None
        if not isinstance(value, str):
            raise ArgumentError(self.name(key), "expected an ISO 8601 date-time string")
        try:
            return parse_time(value)
        except ValueError as exc:
            raise ArgumentError(self.name(key), str(exc)) from None

    def done(self) -> None:
        """Refuse the fields no accessor read."""
        unknown = sorted(str(k) for k in self._raw if k not in self._seen)
        if unknown:
            raise ArgumentError(self.name(unknown[0]), "unknown field")

    def _absent(self, key: str, required: bool) -> None:
        if required:
            raise ArgumentError(self.name(key), "required")


def refuse_unreadable(raw: Mapping[str, object]) -> None:
    """:class:`ArgumentError` naming the first null, or the first string (key or value) that
    holds a lone UTF-16 surrogate: JSON lets ``"\\ud800"`` through, but it is no character,
    and nothing can store it. Time linear in the arguments; an explicit stack, so depth costs
    no recursion."""
    stack: list[tuple[str, object]] = [("", raw)]
    while stack:
        where, value = stack.pop()
        if value is None:
            raise ArgumentError(where or None, "null is not a value: leave the field out")
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ArgumentError(
                    where or None, "holds a lone UTF-16 surrogate, which is not a character"
                ) from None
        elif isinstance(value, Mapping):
            for key, item in value.items():
                shown = str(key).encode("utf-8", "backslashreplace").decode("utf-8")
                name = f"{where}.{shown}" if where else shown
                stack.append((name, key))
                stack.append((name, item))
        elif isinstance(value, list | tuple):
            stack.extend((f"{where}[{i}]", item) for i, item in enumerate(value))


def describe(value: object) -> str:
    """What kind of JSON value ``value`` is, for an error message: ``a string``."""
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def node_id(uid: str, value: object, kind: NodeKind, field: str = "id") -> URIRef:
    """The IRI of ``uid``'s node ``value`` (its IRI or short id); :class:`UnknownMemory` for
    anything else, including another user's node."""
    if not isinstance(value, str) or not value or len(value) > _MAX_ID:
        shown = str(value)[:100]
        raise UnknownMemory(shown, f"no such {_noun(kind)} for this user")
    try:
        if "/" not in value and ":" not in value:
            return node_iri(uid, kind, check_id(value))
        owner, found, _ = parse_node(value)
    except GraphNameError:
        raise UnknownMemory(value, f"no such {_noun(kind)} for this user") from None
    if owner != uid or found is not kind:
        raise UnknownMemory(value, f"no such {_noun(kind)} for this user")
    return URIRef(value)


def _noun(kind: NodeKind) -> str:
    names = {NodeKind.DECISION: "decision", NodeKind.SHORT_NOTE: "note", NodeKind.NOTE: "note"}
    return names.get(kind, "memory")


def short_id(iri: object) -> str:
    """The last segment of a kgmem node IRI (what every id argument accepts back)."""
    try:
        return parse_node(str(iri))[2]
    except GraphNameError:
        return str(iri)


def jsonable(value: Any) -> Any:
    """Records, enums, IRIs, literals and times as plain JSON values (fields keep names)."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(Literal(value, datatype=XSD.duration))
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [jsonable(v) for v in value]
    if isinstance(value, Identifier):
        return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
