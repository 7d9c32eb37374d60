"""Numbers and dates in text, normalized deterministically so a quote states a value in any
common surface form ("March 3rd, 2024" states 2024-03-03; "twenty-five" states 25)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from decimal import Decimal, InvalidOperation

__all__ = ["ABBREVIATED_MONTHS", "canonicalize", "token_matches"]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_MONTH_NAMES = _words(
    "january february march april may june july august september october november december"
)
MONTHS: dict[str, int] = (
    {name: i for i, name in enumerate(_MONTH_NAMES, start=1)}
    | {name[:3]: i for i, name in enumerate(_MONTH_NAMES, start=1)}
    | {"sept": 9}
)
ABBREVIATED_MONTHS = frozenset(name[:3] for name in _MONTH_NAMES if name != "may") | {"sept"}

_UNITS = _words(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen"
)
_ORDINAL_UNITS = _words(
    "zeroth first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth "
    "thirteenth fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth"
)
_TENS = _words("twenty thirty forty fifty sixty seventy eighty ninety")
_ORDINAL_TENS = _words(
    "twentieth thirtieth fortieth fiftieth sixtieth seventieth eightieth ninetieth"
)
_CARDINAL_WORDS = {w: n for n, w in enumerate(_UNITS)} | {
    w: 20 + 10 * i for i, w in enumerate(_TENS)
}
_ORDINAL_WORDS = {w: n for n, w in enumerate(_ORDINAL_UNITS)} | {
    w: 20 + 10 * i for i, w in enumerate(_ORDINAL_TENS)
}

_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_ISO_MONTH = re.compile(r"(\d{4})-(\d{2})")
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)")
# Between the parts of a date: blanks and at most one comma ("March 3, 2024").
_DATE_GAP = re.compile(r"[ \t\u00a0]*,?[ \t\u00a0]*")
_ABBREVIATION_GAP = re.compile(r"\.?[ \t\u00a0]*,?[ \t\u00a0]*")
_TENS_GAP = re.compile(r"[ \t\u00a0]*-?[ \t\u00a0]*")


def _number(text: str) -> str:
    """``1,000.50`` -> ``1000.5``; integers print without a decimal point."""
    try:
        value = Decimal(text.replace(",", ""))
    except InvalidOperation:  # pragma: no cover - the regex admits only numbers
        return text
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def word_value(norm: str) -> str:
    """One token's value form: ``7`` and ``seven`` are ``#n7``, ``3rd`` is ``#o3``; a word is
    itself."""
    if (m := _ISO_DATE.fullmatch(norm)) and (day := _valid(*map(int, m.groups()))):
        return f"#d{day}"
    if (m := _ISO_MONTH.fullmatch(norm)) and 1 <= int(m.group(2)) <= 12:
        return f"#y{norm}"
    if _NUMBER.fullmatch(norm):
        return f"#n{_number(norm)}"
    if m := _ORDINAL.fullmatch(norm):
        return f"#o{int(m.group(1))}"
    if norm in _CARDINAL_WORDS:
        return f"#n{_CARDINAL_WORDS[norm]}"
    if norm in _ORDINAL_WORDS:
        return f"#o{_ORDINAL_WORDS[norm]}"
    return norm


def _valid(year: int, month: int, day: int) -> str | None:
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def _day(token: str) -> int | None:
    if token[:2] in ("#n", "#o") and token[2:].isdigit() and 1 <= int(token[2:]) <= 31:
        return int(token[2:])
    return None


def _year(token: str) -> int | None:
    digits = token[2:]
    if token.startswith("#n") and len(digits) == 4 and digits.isdigit():
        return int(digits)
    return None


class _Run:
    """The working list while collapsing: (canonical, first raw index, end raw index)."""

    def __init__(self, items: list[tuple[str, int, int]], gaps: Sequence[str]) -> None:
        self.items = items
        self.gaps = gaps  # gaps[i]: the text between raw token i-1 and raw token i

    def tok(self, k: int) -> str:
        return self.items[k][0] if k < len(self.items) else ""

    def joins(self, k: int, pattern: re.Pattern[str]) -> bool:
        """Whether item ``k`` directly follows item ``k - 1`` across an allowed gap."""
        return k < len(self.items) and bool(pattern.fullmatch(self.gaps[self.items[k][1]]))

    def month_gap(self, k: int) -> re.Pattern[str]:
        return _ABBREVIATION_GAP if self.tok(k) in ABBREVIATED_MONTHS else _DATE_GAP


def _merge_tens(run: _Run) -> list[tuple[str, int, int]]:
    out: list[tuple[str, int, int]] = []
    k = 0
    while k < len(run.items):
        norm, first, end = run.items[k]
        raw_next = run.tok(k + 1)
        if norm in _TENS and run.joins(k + 1, _TENS_GAP) and raw_next in _UNITS[1:10]:
            out.append((f"#n{_CARDINAL_WORDS[norm] + _UNITS.index(raw_next)}", first, end + 1))
            k += 2
        elif norm in _TENS and run.joins(k + 1, _TENS_GAP) and raw_next in _ORDINAL_UNITS[1:10]:
            value = _CARDINAL_WORDS[norm] + _ORDINAL_UNITS.index(raw_next)
            out.append((f"#o{value}", first, end + 1))
            k += 2
        else:
            out.append((word_value(norm), first, end))
            k += 1
    return out


def _date_at(run: _Run, k: int) -> tuple[str, int] | None:
    """A date starting at item ``k``: (canonical token, number of items it spans)."""
    tok = run.tok
    if tok(k) in MONTHS:
        month = MONTHS[tok(k)]
        day = _day(tok(k + 1)) if run.joins(k + 1, run.month_gap(k)) else None
        if day is not None:
            year = _year(tok(k + 2)) if run.joins(k + 2, _DATE_GAP) else None
            if year is not None and (iso := _valid(year, month, day)):
                return f"#d{iso}", 3
            return (f"#m{month:02d}-{day:02d}", 2) if _valid(2000, month, day) else None
        year = _year(tok(k + 1)) if run.joins(k + 1, run.month_gap(k)) else None
        return (f"#y{year:04d}-{month:02d}", 2) if year is not None else None
    day = _day(tok(k))
    if day is None:
        return None
    at = k + 2 if tok(k + 1) == "of" and run.joins(k + 1, _DATE_GAP) else k + 1
    if not (tok(at) in MONTHS and run.joins(at, _DATE_GAP)):
        return None
    month = MONTHS[tok(at)]
    year = _year(tok(at + 1)) if run.joins(at + 1, run.month_gap(at)) else None
    if year is not None and (iso := _valid(year, month, day)):
        return f"#d{iso}", at + 2 - k
    return (f"#m{month:02d}-{day:02d}", at + 1 - k) if _valid(2000, month, day) else None


def canonicalize(norms: Sequence[str], gaps: Sequence[str]) -> list[tuple[str, int, int]]:
    """Canonical tokens for lowercased raw tokens ``norms``, as ``(token, first, end)``.

    ``gaps[i]`` is the text between raw token ``i - 1`` and raw token ``i``; ``first:end`` is
    the range of raw tokens a canonical token stands for.

    >>> [t for t, _, _ in canonicalize(["march", "3rd", "2024"], ["", " ", ", "])]
    ['#d2024-03-03']
    """
    run = _Run([(norm, i, i + 1) for i, norm in enumerate(norms)], gaps)
    run = _Run(_merge_tens(run), gaps)
    out: list[tuple[str, int, int]] = []
    k = 0
    while k < len(run.items):
        found = _date_at(run, k)
        if found is None:
            out.append(run.items[k])
            k += 1
            continue
        token, width = found
        out.append((token, run.items[k][1], run.items[k + width - 1][2]))
        k += width
    return out


def token_matches(needle: str, hay: str) -> bool:
    """Whether canonical ``hay`` (from a quote) states canonical ``needle`` (from a claim).

    Equal tokens match, and a more specific date states a less specific one: ``#d2024-03-03``
    states ``#m03-03``, ``#y2024-03``, the year ``#n2024`` and the month word ``march``.
    """
    if needle == hay:
        return True
    if not hay.startswith(("#d", "#y", "#m")):
        return False
    body = hay[2:]
    year, month, day = _parts(hay[:2], body)
    if needle in MONTHS:
        return MONTHS[needle] == month
    if needle.startswith("#m"):
        return day is not None and needle[2:] == f"{month:02d}-{day:02d}"
    if needle.startswith("#y"):
        return year is not None and needle[2:] == f"{year:04d}-{month:02d}"
    return year is not None and _year(needle) == year


def _parts(kind: str, body: str) -> tuple[int | None, int, int | None]:
    numbers = [int(part) for part in body.split("-")]
    if kind == "#d":
        return numbers[0], numbers[1], numbers[2]
    if kind == "#y":
        return numbers[0], numbers[1], None
    return None, numbers[0], numbers[1]
