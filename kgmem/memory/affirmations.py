"""Affirmations and denials: whether a reply opens by agreeing with what was said to it
("Yes, that's right.", "Same dates, yes.") or by rejecting or qualifying it ("No, it's ...",
"Yes, but ..."). Pure, on the words of the reply's first sentence."""

from __future__ import annotations

import re
from collections.abc import Sequence

from kgmem.memory.surface import Analysis, Token, analyse

__all__ = ["affirmation_span", "is_denial"]

_PUNCTUATED = re.compile(r"[,;:.!?\n\u2013\u2014]")


def _words(*phrases: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(p.split()) for p in phrases)


# Strong affirmations may run straight into more words ("yes I am"); weak ones ("right",
# "true", "it is") must stand alone or be followed by punctuation ("right now" is no answer).
_STRONG = _words(
    "yes", "yeah", "yep", "yup", "that's right", "that is right", "thats right",
    "that's correct", "that is correct", "thats correct", "that's true", "that is true",
    "thats true", "you're right", "you are right", "youre right",
)  # fmt: skip
_WEAK = _words(
    "correct", "exactly", "right", "true", "absolutely", "indeed", "definitely", "precisely",
    "affirmative", "sure is", "it is", "it sure is", "spot on", "you got it", "of course",
    "uh huh", "mhm",
)  # fmt: skip
_LONGEST = max(len(p) for p in _STRONG | _WEAK)
_DISSENT = frozenset(
    {"wrong", "incorrect", "false", "actually", "but", "however", "although", "though", "whereas"}
)
_DENIAL_LEADS = frozenset({"no", "nope", "nah", "nay", "wrong", "incorrect", "false", "not"})


def _affirmation_at(words: Sequence[Token], i: int) -> tuple[int, bool] | None:
    for size in range(min(_LONGEST, len(words) - i), 0, -1):
        candidate = tuple(t.norm for t in words[i : i + size])
        if candidate in _STRONG or candidate in _WEAK:
            return size, candidate in _STRONG
    return None


def _first_sentence(doc: Analysis) -> tuple[Token, ...]:
    if not doc.tokens:
        return ()
    return tuple(t for t in doc.tokens if t.sentence == doc.tokens[0].sentence)


def affirmation_span(text: str) -> tuple[int, int] | None:
    """The span of the affirmation ``text`` opens with, if its first sentence is one.

    The first sentence must start with affirmations ("yes", "that's right", "exactly", ...),
    must not be a question, and the rest of it must carry no negation cue, no contrast
    ("but", "however", ...) and no "wrong"/"incorrect"/"false"/"actually".

    >>> affirmation_span("Yes, that's right. Thanks!")
    (0, 17)
    >>> affirmation_span("Yes, but it's shellfish") is None
    True
    """
    doc = analyse(text)
    words = _first_sentence(doc)
    if not words or words[0].sentence in doc.questions:
        return None
    i, strong = 0, False
    while (found := _affirmation_at(words, i)) is not None:
        i, strong = i + found[0], strong or found[1]
    if i == 0:
        return _trailing_affirmation(text, words)
    rest = words[i:]
    if rest and not strong and not _PUNCTUATED.search(text[words[i - 1].end : rest[0].start]):
        return None
    if any(t.negates or t.norm in _DISSENT for t in rest):
        return None
    return words[0].start, words[i - 1].end


def _trailing_affirmation(text: str, words: Sequence[Token]) -> tuple[int, int] | None:
    """A first sentence that ends in ", yes" ("Same dates, yes."): its span, when nothing
    before it dissents."""
    last = words[-1]
    if len(words) < 2 or (last.norm,) not in _STRONG:
        return None
    if "," not in text[words[-2].end : last.start]:
        return None
    if any(t.negates or t.norm in _DISSENT or t.norm in _DENIAL_LEADS for t in words[:-1]):
        return None
    return words[0].start, last.end


def is_denial(text: str) -> bool:
    """Whether ``text`` opens by rejecting or qualifying what was said.

    "no", "not quite", "that's wrong", "yes, but ...": a first sentence that is not a plain
    affirmation and starts with a denial, carries a negation cue, "wrong"/"incorrect"/
    "false"/"actually", or a contrast.
    """
    words = _first_sentence(analyse(text))
    if not words or affirmation_span(text) is not None:
        return False
    return words[0].norm in _DENIAL_LEADS or any(t.negates or t.norm in _DISSENT for t in words)
