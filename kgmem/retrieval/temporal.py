"""Temporal cues in a query: "yesterday", "last May", "in 2023", "3 weeks ago", "2024-05-02".

A small deterministic parser (English, UTC calendar days) relative to an injected "now". When
several expressions match, the first in the query wins, and of those starting at the same place
the longest ("2024-02-29" is a day, not February); "in May" followed by a year is that May.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

__all__ = ["TimeCue", "asks_when", "find_time_cue", "is_question"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_NUMBERS |= {"seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_M = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_Y = r"(?P<year>\d{4})"
_D = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_N = r"(?P<n>\d{1,3}|" + "|".join(_NUMBERS) + ")"


@dataclass(frozen=True)
class TimeCue:
    """A period a query points at: [start, end) in UTC, and where the query says so."""

    start: datetime
    end: datetime
    text: str
    span: tuple[int, int]


def _at(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def _month(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=UTC)
    return start, (start + timedelta(days=32)).replace(day=1)


def _year(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def _day(day: date) -> tuple[datetime, datetime]:
    return _at(day), _at(day) + timedelta(days=1)


def _week(monday: date) -> tuple[datetime, datetime]:
    return _at(monday), _at(monday) + timedelta(days=7)


Period = tuple[datetime, datetime]
_Resolve = Callable[[dict[str, str], date], Period]


def _named_month(g: dict[str, str], today: date) -> Period:
    month, word = _MONTHS[g["month"]], g["rel"]
    if word == "last":  # the latest such month before the current one
        return _month(today.year if month < today.month else today.year - 1, month)
    if word == "this":
        return _month(today.year, month)
    return _month(today.year if month <= today.month else today.year - 1, month)


def _relative(g: dict[str, str], today: date) -> Period:
    unit, word = g["unit"], g["rel"]
    back = 0 if word == "this" else 1
    if word in ("past", "previous") and unit != "weekend":
        span = {"week": 7, "month": 30, "year": 365}[unit]
        return _at(today) - timedelta(days=span - 1), _at(today) + timedelta(days=1)
    if unit == "weekend":  # the Saturday of this ISO week, or of the one before
        saturday = today + timedelta(days=5 - today.weekday() - 7 * back)
        return _at(saturday), _at(saturday) + timedelta(days=2)
    return _ago(unit, back, today)


def _ago(unit: str, n: int, today: date) -> Period:
    if unit == "day":
        return _day(today - timedelta(days=n))
    if unit == "week":
        return _week(today - timedelta(days=today.weekday() + 7 * n))
    if unit == "month":
        index = today.year * 12 + today.month - 1 - n
        return _month(index // 12, index % 12 + 1)
    return _year(today.year - n)


def _count(g: dict[str, str], today: date) -> Period:
    n = _NUMBERS.get(g["n"]) or int(g["n"])
    return _ago(g["unit"], n, today)


def _word(g: dict[str, str], today: date) -> Period:
    back = {"today": 0, "tonight": 0, "yesterday": 1, "the day before yesterday": 2}[g["word"]]
    return _day(today - timedelta(days=back))


_PATTERNS: tuple[tuple[str, _Resolve], ...] = (
    (
        r"(?P<year>\d{4})-(?P<m>\d{2})-(?P<day>\d{2})",
        lambda g, _: _day(date(int(g["year"]), int(g["m"]), int(g["day"]))),
    ),
    (
        _D + r"\s+(?:of\s+)?" + _M + r",?\s+" + _Y,
        lambda g, _: _day(date(int(g["year"]), _MONTHS[g["month"]], int(g["day"]))),
    ),
    (
        _M + r"\s+" + _D + r",?\s+" + _Y,
        lambda g, _: _day(date(int(g["year"]), _MONTHS[g["month"]], int(g["day"]))),
    ),
    (r"(?P<year>\d{4})-(?P<m>\d{2})", lambda g, _: _month(int(g["year"]), int(g["m"]))),
    (_M + r",?\s+" + _Y, lambda g, _: _month(int(g["year"]), _MONTHS[g["month"]])),
    (r"(?P<rel>last|this|in|during)\s+" + _M + r"(?!\s*,?\s*\d)", _named_month),
    (r"(?:in|during|of)\s+(?P<year>(?:19|20)\d{2})(?!-\d)", lambda g, _: _year(int(g["year"]))),
    (r"(?P<word>the day before yesterday|yesterday|today|tonight)", _word),
    (r"(?P<rel>last|this|past|previous)\s+(?P<unit>week|month|year|weekend)", _relative),
    (_N + r"\s+(?P<unit>day|week|month|year)s?\s+ago", _count),
)
_COMPILED = tuple((re.compile(rf"\b{p}\b", re.I), resolve) for p, resolve in _PATTERNS)


def find_time_cue(query: str, now: datetime) -> TimeCue | None:
    """The period ``query`` mentions, relative to ``now``; None when it names no time.

    >>> now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    >>> cue = find_time_cue("what did we decide last May?", now)
    >>> cue.start.date(), cue.end.date(), cue.text
    (datetime.date(2025, 5, 1), datetime.date(2025, 6, 1), 'last May')
    >>> find_time_cue("it may rain", now) is None
    True
    """
    today = now.astimezone(UTC).date()
    found: list[TimeCue] = []
    for pattern, resolve in _COMPILED:
        for match in pattern.finditer(query):
            groups = {k: v.lower() for k, v in match.groupdict().items() if v is not None}
            try:
                start, end = resolve(groups, today)
            except (ValueError, OverflowError):  # 2023-02-30, year 0, ...
                continue
            found.append(TimeCue(start, end, match.group(0), match.span()))
    if not found:
        return None
    return min(found, key=lambda c: (c.span[0], c.span[0] - c.span[1]))


_ASKS_WHEN = re.compile(
    r"^\W*(since )?(when|what (year|month|date|day|time)|how long ago"
    r"|which (year|month|day|date))\b",
    re.IGNORECASE,
)


def asks_when(query: str) -> bool:
    """Whether the query asks for a time.

    >>> asks_when("When did Ana move to Lisbon?"), asks_when("Where does Ana live?")
    (True, False)
    """
    return _ASKS_WHEN.search(query) is not None


_QUESTION = re.compile(
    r"^\W*(who|whom|whose|what|when|where|which|why|how|is|are|was|were|do|does|did|can|could"
    r"|would|will|should|has|have|had)\b",
    re.IGNORECASE,
)


def is_question(query: str) -> bool:
    """Whether the query is a question (ends with "?" or opens like one).

    >>> is_question("What did Ana paint?"), is_question("Ana painting")
    (True, False)
    """
    return query.rstrip().endswith("?") or _QUESTION.search(query) is not None
