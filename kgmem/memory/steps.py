"""Whether a procedure's steps and triggers are what its quotes say: each step's words in
the quote's order, every number of a trigger stated."""

from __future__ import annotations

from collections.abc import Sequence

from kgmem.memory.surface import Token, analyse, find_phrase

__all__ = ["unstated_numbers", "unstated_steps"]


#: words a step may leave out or add ("then", "the") without saying something else
_STEP_FILLER = frozenset(
    {"the", "a", "an", "then", "and", "to", "it", "of", "for", "in", "on", "at", "your", "my",
     "our", "first", "next", "finally", "after", "that", "this", "with", "by"}
)  # fmt: skip
_STEP_GAP = 3  # at most this many quoted words between two of a step's words


def unstated_steps(steps: Sequence[str], quotes: Sequence[str]) -> list[int]:
    """Which ``steps`` of a procedure the ``quotes`` do not state: each step's words (all
    but filler), numbers included, must occur in one quote in the step's order, at most
    :data:`_STEP_GAP` words apart. "watch the dashboard for 5 minutes" is not stated by
    "watch the dashboard for 15 minutes", nor "two coats" by "one coat".
    """
    quoted = [analyse(q).words() for q in quotes]
    return [n for n, step in enumerate(steps) if not any(_in_order(step, q) for q in quoted)]


def unstated_numbers(texts: Sequence[str], quotes: Sequence[str]) -> list[int]:
    """Which ``texts`` (a procedure's triggers) name a number, amount or date no quote
    states: "the error rate goes above 5%" is no trigger the quote "above 2%" gives."""
    quoted = [w for q in quotes for w in analyse(q).words()]
    return [
        n
        for n, text in enumerate(texts)
        if any(
            w.norm.startswith("#") and not find_phrase(quoted, (w.norm,))
            for w in analyse(text).words()
        )
    ]


def _in_order(step: str, words: Sequence[Token]) -> bool:
    wanted = [t.norm for t in analyse(step).words() if t.norm not in _STEP_FILLER]
    if not wanted:
        return True
    starts = [i for i, w in enumerate(words) if find_phrase([w], (wanted[0],))]
    for start in starts:
        at, ok = start, True
        for word in wanted[1:]:
            ahead = words[at + 1 : at + 2 + _STEP_GAP]
            hit = next((k for k, w in enumerate(ahead) if find_phrase([w], (word,))), None)
            if hit is None:
                ok = False
                break
            at += 1 + hit
        if ok:
            return True
    return False
