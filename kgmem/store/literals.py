"""Reading typed values from the store without trusting them.

What kgmem writes is canonical (times in UTC, numbers finite), but a store may hold what an
older version, another tool or a damaged file left: ``"garbage"^^xsd:dateTime``, a time that
overflows once moved to UTC (``0001-01-01T00:00:00+14:00``), a confidence of ``"abc"``. One
such value must never stop start-up, a user's index or a drain, so every reader here is
total: a value it cannot read is ``None`` (absent), and :func:`unreadable` says why, for the
code that reports it (``kgmem index check``) or logs it with its node's IRI.

    >>> from rdflib import Literal, XSD
    >>> instant(Literal("2026-03-14T09:00:00+02:00", datatype=XSD.dateTime)).isoformat()
    '2026-03-14T07:00:00+00:00'
    >>> instant(Literal("0001-01-01T00:00:00+14:00", datatype=XSD.dateTime)) is None
    True
    >>> unreadable(Literal("0001-01-01T00:00:00+14:00", datatype=XSD.dateTime))
    'a time before the year 1 in UTC'
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal

from rdflib import XSD, Literal

from kgmem.store.base import Term

__all__ = [
    "Damage",
    "Unreadable",
    "flag",
    "instant",
    "integer",
    "number",
    "quiet_ill_typed_literals",
    "unreadable",
]

_TIMES = frozenset({XSD.dateTime, XSD.dateTimeStamp, XSD.date})
_NUMBERS = frozenset(
    {
        XSD.double,
        XSD.float,
        XSD.decimal,
        XSD.integer,
        XSD.int,
        XSD.long,
        XSD.short,
        XSD.nonNegativeInteger,
        XSD.positiveInteger,
    }
)
_READ = _TIMES | _NUMBERS | {XSD.boolean}


def _python(term: object) -> object:
    """The literal's Python value; None when it is not a literal or its text is not of its
    datatype (rdflib then answers the literal itself)."""
    if not isinstance(term, Literal) or term.ill_typed:
        return None
    value = term.toPython()
    return None if isinstance(value, Literal) else value


def _utc(value: datetime) -> datetime | None:
    if value.tzinfo is None:  # older versions stored a date alone this way: it means UTC
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is before the year 1 in UTC
        return None


def instant(term: object) -> datetime | None:
    """A time literal as an aware UTC datetime (a naive one is UTC); None when absent, not
    a time, or unreadable. A date alone is not an instant (None)."""
    value = _python(term)
    return _utc(value) if isinstance(value, datetime) else None


def number(term: object) -> float | None:
    """A finite numeric literal as a float; None otherwise (booleans are not numbers)."""
    value = _python(term)
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    as_float = float(value)
    return as_float if math.isfinite(as_float) else None


def integer(term: object) -> int | None:
    """An integer literal as an int; None otherwise."""
    value = _python(term)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def flag(term: object) -> bool:
    """Whether ``term`` is the literal true (anything else, unreadable included, is false)."""
    return _python(term) is True


def unreadable(term: object) -> str | None:
    """Why kgmem cannot read ``term``'s value, or None when it can (or does not read that
    datatype at all: a plain string is always readable)."""
    if not isinstance(term, Literal) or term.datatype not in _READ:
        return None
    if term.ill_typed or _python(term) is None:
        return f"not a valid xsd:{str(term.datatype).rsplit('#', 1)[-1]}"
    value = _python(term)
    if isinstance(value, datetime) and _utc(value) is None:
        return f"a time {'before the year 1' if value.year < 5000 else 'after 9999'} in UTC"
    if isinstance(value, float | Decimal) and not math.isfinite(float(value)):
        return "not a finite number"
    return None


@dataclass(frozen=True, order=True)
class Unreadable:
    """A value of a node that kgmem cannot read (``property`` is ``*`` when the whole
    record could not be read)."""

    node: str
    property: str
    value: str
    reason: str


class Damage:
    """The unreadable values and records a reader met, each logged once with its node's
    IRI; thread-safe, and bounded (the first ``cap`` are kept)."""

    def __init__(self, log: logging.Logger, cap: int = 10_000) -> None:
        self._log, self._cap = log, cap
        self._seen: dict[tuple[str, str], Unreadable] = {}
        self._lock = threading.Lock()

    def check(self, node: object, values: Iterable[tuple[object, Iterable[Term]]]) -> None:
        """Note every unreadable value among ``values`` ((property, terms) pairs; a property
        IRI is named by its local name)."""
        for prop, terms in values:
            for term in terms:
                if (reason := unreadable(term)) is not None:
                    name = str(prop).rsplit("#", 1)[-1]
                    self.note(Unreadable(str(node), name, str(term), reason))

    def guard(self, node: object, error: Exception) -> None:
        """Note a record that could not be read at all (it is left out)."""
        self.note(Unreadable(str(node), "*", "", f"{type(error).__name__}: {error}"))

    def note(self, found: Unreadable) -> None:
        key = (found.node, found.property)
        with self._lock:
            if self._seen.get(key) == found or len(self._seen) >= self._cap:
                return
            self._seen[key] = found
        self._log.warning(
            "%s: %s %r cannot be read (%s): left out",
            found.node,
            found.property,
            found.value,
            found.reason,
        )

    def under(self, prefix: str) -> list[Unreadable]:
        """What was noted of the nodes whose IRI starts with ``prefix`` (one user's)."""
        with self._lock:
            return sorted(u for u in self._seen.values() if u.node.startswith(prefix))


class _IllTypedNoise(logging.Filter):
    """rdflib logs a warning with a traceback every time it builds an ill-typed literal (at
    every read of it). :class:`Damage` reports each once, with its node's IRI, instead; and a
    handler that keeps records (a test's, a memory handler) would keep the traceback's
    frames, and the store they reference, alive."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to convert Literal lexical form")


def quiet_ill_typed_literals() -> None:
    """Drop rdflib's per-read warning about an ill-typed literal (idempotent)."""
    logger = logging.getLogger("rdflib.term")
    if not any(isinstance(f, _IllTypedNoise) for f in logger.filters):
        logger.addFilter(_IllTypedNoise())
