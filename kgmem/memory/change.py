"""Whether a source says the world changed: "X owns it now", "I left X", "since March I'm at
Y", "we switched from A to B", "no longer". Pure, on the words of the quote's sentences.

Two kinds of cue, both read in the sentences a quote touches (so a fragment keeps the
"now" of its sentence):

* a **change** cue says a new value replaced an older one ("now", "since", "switched",
  "moved", "promoted", "instead", "no longer", "anymore", ...): the gate may then close the
  older value's valid time, also for a predicate that may hold several values;
* an **ending** cue says something stopped ("left", "quit", "stopped", "no longer", "last
  day", "anymore", ...): it states a negated claim ("I left Riverside Striders" is "not a
  member of Riverside Striders any more") as a negation cue would.

A plan or an intention is no change: "I'm thinking of opening on Sundays", "I should
start looking", "I'm stopping it this week" (a future "stopping") say nothing happened.
"""

from __future__ import annotations

from kgmem.memory.surface import Analysis, Token, find_phrase, phrase

__all__ = ["ENDING_CUES", "change_stated", "ending_stated", "moved_to"]

_CHANGE_WORDS = frozenset(
    {"now", "anymore", "since", "switched", "switch", "swapped", "changed", "promoted",
     "instead", "became", "become", "joined", "moved", "relocated", "transferred", "replaced",
     "renamed", "merged", "upgraded", "downgraded", "increased", "decreased", "rose", "dropped"}
)  # fmt: skip
_CHANGE_PHRASES = (
    ("no", "longer"),
    ("any", "more"),
    ("took", "over"),
    ("takes", "over"),
    ("taken", "over"),
    ("went", "up"),
    ("went", "down"),
    ("gone", "up"),
    ("gone", "down"),
    ("handed", "in"),
    ("as", "of"),
)
#: words that end something, as a negated claim's evidence
ENDING_CUES = frozenset(
    {"left", "quit", "stopped", "ended", "cancelled", "canceled", "resigned", "retired",
     "former", "ex", "anymore"}
)  # fmt: skip
_ENDING_PHRASES = (("no", "longer"), ("any", "more"), ("last", "day"), ("moved", "out"))
#: a plan, a wish or a doubt: what follows has not happened
_UNREAL = frozenset(
    {"thinking", "planning", "plan", "plans", "considering", "might", "maybe", "should",
     "could", "would", "want", "wants", "hope", "hoping", "will", "if"}
)  # fmt: skip


def _sentences(doc: Analysis, span: tuple[int, int]) -> list[Token]:
    touched = {t.sentence for t in doc.tokens if t.start < span[1] and span[0] < t.end}
    return [t for t in doc.tokens if t.sentence in touched]


def _clauses(doc: Analysis, span: tuple[int, int]) -> list[str]:
    touched = {t.clause for t in doc.tokens if t.start < span[1] and span[0] < t.end}
    return [t.norm for t in doc.tokens if t.clause in touched]


def _has(words: list[str], single: frozenset[str], phrases: tuple[tuple[str, ...], ...]) -> bool:
    if any(w in single for w in words):
        return True
    return any(
        tuple(words[i : i + len(p)]) == p for p in phrases for i in range(len(words) - len(p) + 1)
    )


def _unreal(words: list[str]) -> bool:
    return any(w in _UNREAL for w in words)


def change_stated(doc: Analysis, span: tuple[int, int]) -> bool:
    """Whether the sentences of ``doc`` that ``span`` touches say a value changed."""
    words = [t.norm for t in _sentences(doc, span)]
    return _has(words, _CHANGE_WORDS, _CHANGE_PHRASES) and not _unreal(_clauses(doc, span))


def ending_stated(doc: Analysis, span: tuple[int, int]) -> bool:
    """Whether the sentences of ``doc`` that ``span`` touches say something ended."""
    words = [t.norm for t in _sentences(doc, span)]
    return _has(words, ENDING_CUES, _ENDING_PHRASES) and not _unreal(_clauses(doc, span))


#: verbs that move a thing from one holder to another
_MOVE_WORDS = frozenset(
    {"moved", "switched", "transferred", "handed", "passed", "went", "changed", "sold", "gave",
     "given", "reassigned"}
)  # fmt: skip


def moved_to(doc: Analysis, thing: str, holder: str) -> bool:
    """Whether ``doc`` says ``thing`` went over to ``holder``, in one sentence and in that
    order, with a "to" between and a moving verb before it: "ledger-api moved to the
    Payments Platform team", "we switched flour to Harinas Norte", "handed the van over to
    Dan". Then whoever held the thing before holds it no more ("Sam moved to the data team"
    moves Sam, not the team: the thing is what moved)."""
    for sentence in sorted({t.sentence for t in doc.tokens}):
        words = [t for t in doc.tokens if t.sentence == sentence]
        holders = [k for k, _ in find_phrase(words, phrase(holder))]
        for i, j in find_phrase(words, phrase(thing)):
            for k in (k for k in holders if k >= j):
                between = [w.norm for w in words[j:k]]
                lead = [w.norm for w in words[max(0, i - 3) : i]]
                if (
                    "to" in between
                    and any(w in _MOVE_WORDS for w in lead + between)
                    and not _unreal(lead + between)
                ):
                    return True
    return False
