"""The temporal cue parser: each expression, relative to a fixed now (Monday 2026-06-01)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from kgmem.retrieval import find_time_cue

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("query", "start", "end", "text"),
    [
        ("what did I do yesterday", date(2026, 5, 31), date(2026, 6, 1), "yesterday"),
        ("today's plan", date(2026, 6, 1), date(2026, 6, 2), "today"),
        ("the day before yesterday", date(2026, 5, 30), date(2026, 5, 31), None),
        ("trips in 2023", date(2023, 1, 1), date(2024, 1, 1), "in 2023"),
        ("what happened in May 2023", date(2023, 5, 1), date(2023, 6, 1), "May 2023"),
        ("met on 8 May, 2023", date(2023, 5, 8), date(2023, 5, 9), "8 May, 2023"),
        ("met on May 8th 2023", date(2023, 5, 8), date(2023, 5, 9), "May 8th 2023"),
        ("log of 2024-02-29", date(2024, 2, 29), date(2024, 3, 1), "2024-02-29"),
        ("report 2024-02", date(2024, 2, 1), date(2024, 3, 1), "2024-02"),
        ("sales in 2024-03", date(2024, 3, 1), date(2024, 4, 1), "2024-03"),
        ("Sept 2021 offsite", date(2021, 9, 1), date(2021, 10, 1), "Sept 2021"),
        ("what did we decide last May", date(2026, 5, 1), date(2026, 6, 1), "last May"),
        ("last December", date(2025, 12, 1), date(2026, 1, 1), None),
        ("this December", date(2026, 12, 1), date(2027, 1, 1), None),
        ("in June", date(2026, 6, 1), date(2026, 7, 1), None),
        ("during July", date(2025, 7, 1), date(2025, 8, 1), None),
        ("last week", date(2026, 5, 25), date(2026, 6, 1), None),
        ("this week", date(2026, 6, 1), date(2026, 6, 8), None),
        ("last month", date(2026, 5, 1), date(2026, 6, 1), None),
        ("last year", date(2025, 1, 1), date(2026, 1, 1), None),
        ("past week", date(2026, 5, 26), date(2026, 6, 2), None),
        ("last weekend", date(2026, 5, 30), date(2026, 6, 1), None),
        ("3 days ago", date(2026, 5, 29), date(2026, 5, 30), None),
        ("two weeks ago", date(2026, 5, 18), date(2026, 5, 25), None),
        ("a month ago", date(2026, 5, 1), date(2026, 6, 1), None),
        ("14 months ago", date(2025, 4, 1), date(2025, 5, 1), None),
        ("LAST MAY", date(2026, 5, 1), date(2026, 6, 1), "LAST MAY"),
    ],
)
def test_cue(query: str, start: date, end: date, text: str | None) -> None:
    cue = find_time_cue(query, NOW)
    assert cue is not None
    assert (cue.start, cue.end) == (
        datetime(start.year, start.month, start.day, tzinfo=UTC),
        datetime(end.year, end.month, end.day, tzinfo=UTC),
    )
    if text is not None:
        assert cue.text == text and query[cue.span[0] : cue.span[1]] == text


@pytest.mark.parametrize(
    "query",
    ["it may rain", "port 2048 is open", "march forward", "2023-13-45", "", "in 1492", "day ago"],
)
def test_no_cue(query: str) -> None:
    assert find_time_cue(query, NOW) is None


def test_the_first_expression_wins_and_the_longest_of_those() -> None:
    cue = find_time_cue("dinner in May 2023 or last week", NOW)
    assert cue is not None and cue.text == "May 2023"
    cue = find_time_cue("yesterday, not the day before yesterday", NOW)
    assert cue is not None and cue.text == "yesterday"
    cue = find_time_cue("on 2024-02-29 and 2024-03", NOW)
    assert cue is not None and cue.text == "2024-02-29"
