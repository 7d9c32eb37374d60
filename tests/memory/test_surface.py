"""How grounding reads text: verbatim spans, tokens, clauses, numbers and dates."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kgmem.memory.surface import (
    analyse,
    canonicalize,
    date_value,
    find_phrase,
    locate_quote,
    phrase,
)


@given(st.data(), st.text())
def test_locate_quote_finds_every_substring(data: st.DataObject, text: str) -> None:
    i = data.draw(st.integers(0, len(text)))
    j = data.draw(st.integers(i, len(text)))
    quote = text[i:j]
    assume(quote.strip())
    span = locate_quote(text, quote)
    assert span is not None
    a, b = span
    assert text[a:b] == quote.strip()
    assert a == text.find(quote.strip())  # the first occurrence


@given(st.text(), st.text())
def test_locate_quote_refuses_what_is_not_a_substring(text: str, quote: str) -> None:
    assume(quote.strip() not in text)
    assert locate_quote(text, quote) is None


@pytest.mark.parametrize("quote", ["", "   ", "\n\t"])
def test_locate_quote_refuses_a_blank_quote(quote: str) -> None:
    assert locate_quote("anything", quote) is None


def _canonical(text: str) -> list[str]:
    return [t.norm for t in analyse(text).words()]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-03-03", ["#d2024-03-03"]),
        ("March 3rd, 2024", ["#d2024-03-03"]),
        ("Mar. 3, 2024", ["#d2024-03-03"]),
        ("3 March 2024", ["#d2024-03-03"]),
        ("the 3rd of March, 2024", ["the", "#d2024-03-03"]),
        ("March third 2024", ["#d2024-03-03"]),
        ("March 2024", ["#y2024-03"]),
        ("2024-03", ["#y2024-03"]),
        ("March 3", ["#m03-03"]),
        ("3rd of March", ["#m03-03"]),
        ("February 30, 2024", ["february", "#n30", "#n2024"]),
        ("2024-02-30", ["2024-02-30"]),
        ("03/03/2024", ["#n3", "#n3", "#n2024"]),  # ambiguous: not a date
        ("in March. 2024 was", ["in", "march", "#n2024", "was"]),  # a sentence apart
        (
            "three 3 1,000 3.50 twenty-five 25th twenty-first",
            ["#n3", "#n3", "#n1000", "#n3.5", "#n25", "#o25", "#o21"],
        ),
        ("I may 3D print it", ["i", "may", "3d", "print", "it"]),
    ],
)
def test_surface_forms_are_canonical(text: str, expected: list[str]) -> None:
    assert _canonical(text) == expected


_FORMATS = [
    "{iso}",
    "{month} {day}, {year}",
    "{day} {month} {year}",
    "{month} {ord}, {year}",
    "the {ord} of {month} {year}",
]


@given(
    st.dates(min_value=date(1000, 1, 1), max_value=date(2999, 12, 31)), st.sampled_from(_FORMATS)
)
def test_every_date_spelling_is_the_iso_date(day: date, fmt: str) -> None:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(
        day.day % 10 if day.day not in (11, 12, 13) else 0, "th"
    )
    text = fmt.format(
        iso=day.isoformat(),
        month=day.strftime("%B"),
        day=day.day,
        year=day.year,
        ord=f"{day.day}{suffix}",
    )
    assert _canonical(text)[-1] == f"#d{day.isoformat()}"
    assert date_value(text) == day  # a claim value in any spelling is the one date


@pytest.mark.parametrize(
    "text", ["March 1990", "12 March", "1990", "born 12 March 1990", "2024-02-30", "soon"]
)
def test_date_value_is_only_a_whole_full_date(text: str) -> None:
    assert date_value(text) is None


def test_canonicalize_reports_the_raw_tokens_it_covers() -> None:
    assert canonicalize(["on", "march", "3", "2024", "ok"], ["", " ", " ", ", ", " "]) == [
        ("on", 0, 1),
        ("#d2024-03-03", 1, 4),
        ("ok", 4, 5),
    ]


def test_sentences_questions_and_clauses() -> None:
    doc = analyse("Do you like jazz? I don't like jazz, but I love rock; fine.\nOK")
    by_word = {t.norm: t for t in doc.tokens}
    assert doc.questions == frozenset({0})
    assert by_word["don't"].negates and not by_word["love"].negates
    assert by_word["jazz"].sentence == 1 and by_word["ok"].sentence == 3
    assert by_word["don't"].clause != by_word["rock"].clause
    # a list stays one clause, so the negation reaches its last item
    listed = analyse("I don't like jazz, blues, or rock")
    assert len({t.clause for t in listed.tokens}) == 1
    assert analyse("I like everything but jazz").tokens[3].negates  # exclusion
    assert not analyse("I like tea, but coffee is bad").tokens[3].negates  # contrast
    assert analyse("I like all kinds of music but country").tokens[6].negates
    assert not analyse("It has been tough but fun").tokens[4].negates  # joins, excepts nothing


@pytest.mark.parametrize(
    ("text", "reached"),
    [
        # a negated "be" cannot take the finite verb after "and"/"but": a new predicate
        ("I'm not alone and have a great community around me", False),
        ("It wasn't easy but still want to go on", False),
        ("She is not shy and really enjoys parties", False),
        # a negated verb can take it ("don't [eat meat and drink milk]"), and a noun is no verb
        ("I don't eat meat and drink milk", True),
        ("I'm not into jazz and love songs", True),
        ("I'm not a fan of jazz and blues", True),
    ],
)
def test_a_negated_be_does_not_reach_a_finite_verb_after_and_or_but(
    text: str, reached: bool
) -> None:
    doc = analyse(text)
    cue = next(t for t in doc.tokens if t.negates)
    assert (doc.tokens[-1].clause == cue.clause) is reached


@pytest.mark.parametrize(
    ("text", "cue"),
    [
        ("I'll never forget her first steps", "never"),
        ("I can't stop thinking about it", "can't"),
        ("We didn't ever quit the band", "didn't"),
    ],
)
def test_a_negated_verb_of_forgetting_or_ceasing_negates_nothing(text: str, cue: str) -> None:
    doc = analyse(text)
    assert not any(t.negates for t in doc.tokens)
    assert cue in {t.norm for t in doc.tokens}


def test_a_cue_before_any_other_verb_still_negates() -> None:
    assert [t.norm for t in analyse("I never forgave them").tokens if t.negates] == ["never"]
    assert [t.norm for t in analyse("I never stopped to rest").tokens if t.negates] == ["never"]
    assert [t.norm for t in analyse("I don't like it").tokens if t.negates] == ["don't"]


@pytest.mark.parametrize(
    ("needle", "hay", "found"),
    [
        ("peanut", "allergic to peanuts", True),
        ("allergy", "food allergies", True),
        ("glass", "my glasses", True),
        ("house", "two houses", True),
        ("box", "two boxes", True),
        ("jam", "James", False),
        ("Bob", "Bob's car", True),
        ("Bob", "Bobby's car", False),
        ("art", "party", False),
        ("New York", "I love new york", True),
        ("New York", "new, york", True),
        ("York New", "new york", False),
        ("the Beatles", "Beatles songs", True),
        ("Zoë", "zoe", False),  # accents are not folded
        ("\uff21\uff22\uff23", "abc", True),  # NFKC
    ],
)
def test_find_phrase_matches_whole_words_with_simple_inflection(
    needle: str, hay: str, found: bool
) -> None:
    assert bool(find_phrase(analyse(hay).words(), phrase(needle))) is found


def test_words_inside_a_span_leave_cut_words_out() -> None:
    doc = analyse("I like jazzy tunes")
    assert [t.norm for t in doc.words(2, 11)] == ["like"]
