"""Reading typed values without trusting them: every reader is total, and ``unreadable``
says why a value cannot be read."""

from __future__ import annotations

import doctest
import logging
from datetime import UTC, datetime

import pytest
from rdflib import XSD, Literal, URIRef

import kgmem.store.literals as literals
from kgmem.store import Damage, Unreadable, flag, instant, integer, number, unreadable


def test_the_module_examples_hold() -> None:
    assert doctest.testmod(literals).failed == 0


@pytest.mark.parametrize(
    ("lexical", "datatype", "expected"),
    [
        ("2026-03-14T09:00:00+02:00", XSD.dateTime, datetime(2026, 3, 14, 7, tzinfo=UTC)),
        ("2026-03-14T09:00:00", XSD.dateTime, datetime(2026, 3, 14, 9, tzinfo=UTC)),  # naive
        ("0001-01-01T00:00:00+14:00", XSD.dateTime, None),  # before the year 1 in UTC
        ("9999-12-31T23:59:59-14:00", XSD.dateTime, None),  # after 9999 in UTC
        ("garbage", XSD.dateTime, None),
        ("2026-03-14", XSD.date, None),  # a date alone is not an instant
        ("12", XSD.integer, None),
    ],
)
def test_instant(lexical: str, datatype: URIRef, expected: datetime | None) -> None:
    assert instant(Literal(lexical, datatype=datatype)) == expected


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        (Literal("0.9", datatype=XSD.double), 0.9),
        (Literal("3", datatype=XSD.integer), 3.0),
        (Literal("0.25", datatype=XSD.decimal), 0.25),
        (Literal("abc", datatype=XSD.double), None),
        (Literal("NaN", datatype=XSD.double), None),
        (Literal("INF", datatype=XSD.double), None),
        (Literal(True), None),
        (URIRef("urn:x"), None),
        (None, None),
    ],
)
def test_number(term: object, expected: float | None) -> None:
    assert number(term) == expected


def test_integer_and_flag() -> None:
    assert integer(Literal("7", datatype=XSD.integer)) == 7
    assert integer(Literal("1.5", datatype=XSD.integer)) is None
    assert integer(Literal(True)) is None
    assert flag(Literal(True)) and not flag(Literal(False)) and not flag(Literal("true"))
    assert not flag(None)


@pytest.mark.parametrize(
    ("term", "reason"),
    [
        (Literal("garbage", datatype=XSD.dateTime), "not a valid xsd:dateTime"),
        (Literal("0001-01-01T00:00:00+14:00", datatype=XSD.dateTime), "before the year 1"),
        (Literal("9999-12-31T23:59:59-14:00", datatype=XSD.dateTime), "after 9999"),
        (Literal("abc", datatype=XSD.double), "not a valid xsd:double"),
        (Literal("NaN", datatype=XSD.double), "not a finite number"),
        (Literal("1.5", datatype=XSD.integer), "not a valid xsd:integer"),
    ],
)
def test_unreadable_says_why(term: Literal, reason: str) -> None:
    found = unreadable(term)
    assert found is not None and reason in found


@pytest.mark.parametrize(
    "term",
    [
        Literal("2026-03-14T09:00:00Z", datatype=XSD.dateTime),
        Literal("0.5", datatype=XSD.double),
        Literal("any text at all"),
        Literal("not a number", datatype=URIRef("urn:custom")),
        URIRef("urn:x"),
        None,
    ],
)
def test_readable_values(term: object) -> None:
    assert unreadable(term) is None


def test_damage_logs_each_value_once_and_keeps_it_by_user(
    caplog: pytest.LogCaptureFixture,
) -> None:
    damage = Damage(logging.getLogger("kgmem.test"), cap=3)
    bad = Literal("abc", datatype=XSD.double)
    node = "https://w3id.org/kgmem/user/ann/memory/1"
    with caplog.at_level(logging.WARNING, logger="kgmem.test"):
        for _ in range(3):
            damage.check(node, [(URIRef("https://w3id.org/kgmem/ns#confidence"), [bad])])
    assert [r.getMessage().count(node) for r in caplog.records if r.name == "kgmem.test"] == [1]
    assert damage.under("https://w3id.org/kgmem/user/ann/") == [
        Unreadable(node, "confidence", "abc", "not a valid xsd:double")
    ]
    assert damage.under("https://w3id.org/kgmem/user/bob/") == []
    damage.guard("https://w3id.org/kgmem/user/bob/memory/2", KeyError("kind"))
    (record,) = damage.under("https://w3id.org/kgmem/user/bob/")
    assert record.property == "*" and "KeyError" in record.reason
    for n in range(5):  # bounded: the first `cap` are kept
        damage.guard(f"https://w3id.org/kgmem/user/cap/memory/{n}", ValueError("x"))
    assert len(damage.under("https://w3id.org/kgmem/user/")) == 3
