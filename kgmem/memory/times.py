"""Times and durations as every input writes them, read one way everywhere.

A time is ISO 8601 text (a date, or a date and time with or without a UTC offset), kept in
UTC, written in the years :data:`EARLIEST_YEAR` to :data:`LATEST_YEAR` so that any later
arithmetic (a ttl, decay) stays in the calendar. A duration (a memory's ttl) is ISO 8601
(``P7D``, ``PT12H``, ``P1Y2M``) with a bounded number of digits per part, so no duration
overflows. The API's JSON Schemas say the same with :data:`DURATION_PATTERN`; the patterns
spell digits as ``[0-9]`` because a Python ``\\d`` also takes other scripts' digits, which
a JSON Schema (ECMA-262) pattern does not.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

from pydantic import BeforeValidator

__all__ = [
    "DURATION_PATTERN",
    "EARLIEST_YEAR",
    "LATEST_YEAR",
    "Duration",
    "Instant",
    "canonical_time",
    "parse_duration",
    "parse_time",
]

#: The years a time may be written in.
EARLIEST_YEAR, LATEST_YEAR = 1000, 8999
_ISO_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"(?:[Tt ][0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:[.,][0-9]{1,9})?)?(?:[Zz]|[+-][0-9]{2}:[0-9]{2})?)?"
)
#: An ISO 8601 duration: years (365 days), months (30), weeks, days; hours, minutes, seconds.
DURATION_PATTERN = (
    r"P(?:([0-9]{1,4})Y)?(?:([0-9]{1,5})M)?(?:([0-9]{1,5})W)?(?:([0-9]{1,6})D)?"
    r"(?:T(?:([0-9]{1,7})H)?(?:([0-9]{1,8})M)?(?:([0-9]{1,9}(?:\.[0-9]{1,6})?)S)?)?"
)
_DURATION = re.compile(DURATION_PATTERN)
_DAYS = (365, 30, 7, 1)


def canonical_time(value: datetime) -> datetime:
    """``value`` in UTC (a naive time, or a date alone, is taken as UTC); a time written
    outside the years :data:`EARLIEST_YEAR` .. :data:`LATEST_YEAR` is a :class:`ValueError`.

    >>> canonical_time(datetime(2026, 3, 14)).isoformat()
    '2026-03-14T00:00:00+00:00'
    >>> canonical_time(datetime.fromisoformat("1000-01-01T00:00:00+14:00")).isoformat()
    '0999-12-31T10:00:00+00:00'
    >>> canonical_time(datetime.fromisoformat("0001-01-01T00:00:00+14:00"))
    Traceback (most recent call last):
    ValueError: out of range: give a time in the years 1000 to 8999
    """
    if not EARLIEST_YEAR <= value.year <= LATEST_YEAR:
        raise ValueError(f"out of range: give a time in the years {EARLIEST_YEAR} to {LATEST_YEAR}")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def parse_time(value: object) -> datetime:
    """ISO 8601 text (no week dates, no basic format, no Unix time) or a ``datetime``, in UTC
    (:func:`canonical_time`); anything else is a :class:`ValueError`.

    >>> parse_time("2026-03-14t10:00z").isoformat()
    '2026-03-14T10:00:00+00:00'
    """
    if isinstance(value, datetime):
        return canonical_time(value)
    if not isinstance(value, str) or len(value) > 64 or not _ISO_TIME.fullmatch(value):
        raise ValueError("expected an ISO 8601 date (2026-03-14) or date-time string")
    try:
        parsed = datetime.fromisoformat(value.upper())
    except ValueError:
        raise ValueError("expected an ISO 8601 date-time: no such date or time") from None
    return canonical_time(parsed)


def parse_duration(value: object) -> timedelta:
    """An ISO 8601 duration (:data:`DURATION_PATTERN`) or a ``timedelta``; else ValueError.

    >>> parse_duration("P1W2DT1.5S")
    datetime.timedelta(days=9, seconds=1, microseconds=500000)
    """
    if isinstance(value, timedelta):
        return value
    found = _DURATION.fullmatch(value) if isinstance(value, str) else None
    if found is None or value in ("P", "PT") or str(value).endswith("T"):
        raise ValueError("expected an ISO 8601 duration, e.g. P7D, PT12H or P1Y2M")
    parts = [float(p) if p else 0.0 for p in found.groups()]
    days = sum(n * d for n, d in zip(parts[:4], _DAYS, strict=True))
    hours, minutes, seconds = parts[4:]
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


#: A point in time as every input takes it (see :func:`parse_time`).
Instant = Annotated[datetime, BeforeValidator(parse_time)]
#: A duration as every input takes it (see :func:`parse_duration`).
Duration = Annotated[timedelta, BeforeValidator(parse_duration)]
