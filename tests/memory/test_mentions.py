"""Who and what a text mentions: names and aliases, pronouns, affirmations and denials."""

from __future__ import annotations

import pytest

from kgmem.memory.affirmations import affirmation_span, is_denial
from kgmem.memory.mentions import mentions
from kgmem.memory.reader import NameBook, Voice

BOOK = NameBook(user="Alice", user_aliases=("Ali",), entities={"Robert": ("Bob", "Rob")})


@pytest.mark.parametrize(
    ("text", "name", "aliases", "expected"),
    [
        ("Bob's peanut allergy", "Bob", (), True),
        ("BOB called", "bob", (), True),
        ("Bobby called", "Bob", (), False),
        ("Robert called", "Bob", ("Robert",), True),
        ("I met Rob", "Robert", ("Bob", "Rob"), True),
        ("Porto, 2024-03-03", "March 3rd, 2024", (), True),
        ("the café ☕ in Lisbon", "Lisbon", (), True),
        ("", "Bob", (), False),
    ],
)
def test_mentions(text: str, name: str, aliases: tuple[str, ...], expected: bool) -> None:
    assert mentions(text, name, aliases) is expected


def test_a_name_book_groups_aliases_both_ways() -> None:
    assert BOOK.names_for("bob") == {"bob", "Robert", "Bob", "Rob"}
    assert BOOK.names_for("Carol") == {"Carol"}
    assert BOOK.is_user("ali") and not BOOK.is_user("Bob")
    assert BOOK.resolve("me").is_user and BOOK.resolve("Alice").is_user
    assert not BOOK.resolve("Bob").is_user


def test_pronouns_resolve_by_who_wrote_the_source() -> None:
    user = BOOK.resolve("I")
    assert user.same(next(iter(BOOK.referents(Voice.USER, None).values())))
    carol = next(iter(BOOK.referents(Voice.USER, "Carol").values()))
    assert not carol.same(user) and carol.same(BOOK.resolve("Carol"))
    assert next(iter(BOOK.referents(Voice.AGENT, None).values())).same(user)
    assert BOOK.referents(Voice.OTHER, None) == {}


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ("Yes", (0, 3)),
        ("yes!", (0, 3)),
        ("Yep, exactly!", (0, 12)),
        ("Yes, that's right. Thanks!", (0, 17)),
        ("That is correct.", (0, 15)),
        ("Sure is", (0, 7)),
        ("Uh-huh.", (0, 6)),
        ("Yes I am", (0, 3)),
        ("Right.", (0, 5)),
        ("Right now I'm busy", None),  # a weak word must stand alone
        ("Correct me if I'm wrong", None),
        ("Right?", None),
        ("Yes, but peanuts", None),
        ("Yes and no", None),
        ("Absolutely not", None),
        ("Oh, I don't know", None),
        ("ok", None),
        ("Sure", None),
        ("", None),
    ],
)
def test_affirmation_span(text: str, span: tuple[int, int] | None) -> None:
    assert affirmation_span(text) == span


@pytest.mark.parametrize(
    ("text", "denial"),
    [
        ("No, that's wrong.", True),
        ("Nope", True),
        ("Not quite.", True),
        ("That's not right", True),
        ("Wrong.", True),
        ("Yes, but it's shellfish.", True),
        ("Actually, it's shellfish.", True),
        ("Yes.", False),
        ("Let me think.", False),
        ("", False),
    ],
)
def test_is_denial(text: str, denial: bool) -> None:
    assert is_denial(text) is denial
