"""Times and durations as inputs write them: one reading for every surface."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kgmem.memory.times import parse_duration, parse_time


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        ("2026-03-14", datetime(2026, 3, 14, tzinfo=UTC)),
        ("2026-03-14T10:00", datetime(2026, 3, 14, 10, tzinfo=UTC)),
        ("2026-03-14t10:00:00z", datetime(2026, 3, 14, 10, tzinfo=UTC)),
        ("2026-03-14 10:00:00+02:00", datetime(2026, 3, 14, 8, tzinfo=UTC)),
        ("1000-01-01T00:00:00+14:00", datetime(999, 12, 31, 10, tzinfo=UTC)),
        ("8999-12-31T23:59:59-14:00", datetime(9000, 1, 1, 13, 59, 59, tzinfo=UTC)),
    ],
)
def test_a_time_is_read_in_utc(text: str, utc: datetime) -> None:
    assert parse_time(text) == utc


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("0999-12-31", "out of range"),
        ("9000-01-01", "out of range"),
        ("2026-02-30", "no such date"),
        ("2026-W11-6", "ISO 8601"),
        ("20260314", "ISO 8601"),
        ("1700000000", "ISO 8601"),
        (1700000000, "ISO 8601"),
        ("\uff12\uff10\uff12\uff16-03-14", "ISO 8601"),  # full-width digits: no pattern takes them
    ],
)
def test_what_is_not_an_iso_time_in_range_is_refused(value: object, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_time(value)


@pytest.mark.parametrize(
    ("text", "length"),
    [
        ("P7D", timedelta(days=7)),
        ("PT12H", timedelta(hours=12)),
        ("P1Y2M", timedelta(days=425)),
        ("P1W2DT1.5S", timedelta(days=9, seconds=1.5)),
        ("P9999Y99999M99999W999999DT9999999H99999999M999999999.999999S", None),
    ],
)
def test_a_duration_is_read_and_none_overflows(text: str, length: timedelta | None) -> None:
    found = parse_duration(text)
    assert found == length if length is not None else found > timedelta(days=365 * 1000)


@pytest.mark.parametrize("text", ["P", "PT", "P1YT", "P0.5D", "1 day", "-P1D", "p1d", "P\u0663D"])
def test_what_is_not_an_iso_duration_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="ISO 8601 duration"):
        parse_duration(text)
