"""How grounding reads text: tokens, sentences and clauses, numbers and dates, word forms.

Two notions of "the text says it" meet here, on purpose:

* :func:`locate_quote` is **verbatim**: the quote, minus leading and trailing whitespace, must
  occur code point for code point in the source. Case, inner whitespace, Unicode
  normalization and typographic quotes all count; nothing else is forgiven.
* :func:`find_phrase` works on **words**: NFKC + casefold, whole tokens only, tolerant of
  plural ``s``/``es``/``ies`` and possessive ``'s``, and of number and date spellings, which
  are canonicalized into tokens that cannot collide with words (words never start with ``#``):

  ======  ===========================  ===============================================
  ``#n``  a cardinal number            ``3``, ``1,000``, ``3.50``, ``three``, ``twenty-five``
  ``#o``  an ordinal                   ``3rd``, ``third``, ``twenty-first``
  ``#d``  a date ``YYYY-MM-DD``        ``2024-03-03``, ``March 3rd, 2024``, ``3 March 2024``
  ``#y``  a month ``YYYY-MM``          ``2024-03``, ``March 2024``
  ``#m``  a day of a month ``MM-DD``   ``March 3rd``, ``the 3rd of March``
  ======  ===========================  ===============================================

  A more specific date states a less specific one (``#d2024-03-03`` states ``#m03-03``,
  ``#y2024-03``, the year ``2024`` and the word ``march``), never the reverse. Slash dates
  (``03/04/2024``) are ambiguous between day-first and month-first and are not read as dates.

Sentences end at ``. ! ? ;`` or a line break; a clause also ends before ``however``,
``although``, ``though``, ``whereas``, and before a ``but`` that follows punctuation. A ``but``
*without* punctuation before it ("everything but jazz") is an exclusion, a negation cue. A
negation cue on a verb of forgetting or ceasing ("never forget", "can't stop") is a double
negative and negates nothing. A negated *be* ends its clause at an ``and`` or ``but`` that
goes on with a finite verb ("I'm not alone and have friends"): no form of *be* takes that
verb, so the negation cannot reach it ("I don't eat meat and drink milk" stays one clause).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence, Set
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from itertools import pairwise

from kgmem.memory.values import ABBREVIATED_MONTHS, canonicalize, token_matches

__all__ = [
    "FIRST_PERSON",
    "NEGATION_CUES",
    "SECOND_PERSON",
    "Analysis",
    "Token",
    "analyse",
    "canonicalize",
    "date_value",
    "find_phrase",
    "locate_quote",
    "phrase",
    "token_matches",
]

_TOKEN = re.compile(
    r"\d{4}-\d{2}-\d{2}(?!\d)"  # ISO date
    r"|\d{4}-\d{2}(?![\d-])"  # ISO year-month
    r"|\d+(?:st|nd|rd|th)(?![^\W_])"  # 3rd
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![^\W_])"  # 1,000.50
    r"|\d+(?:\.\d+)?(?![^\W_])"  # 3, 3.5
    r"|[^\W_]+(?:['\u2019][^\W_]+)*"  # words, with inner apostrophes: don't, Bob's
    r"|[%$\u20ac\u00a3\u00a5\u20b9]"  # percent and currency signs are words of their own
)
_SENTENCE_END = re.compile(r"[.!?;\n]")
_ABBREVIATION_DOT = re.compile(r"\.[ \t\u00a0]*")
# "Dr. Smith", "J. R. Tolkien", "e.g. jazz": a dot after these does not end a sentence.
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "inc", "ltd", "co", "mt"}
)
_CLAUSE_PUNCTUATION = re.compile(r"[,;:.!?\n\u2013\u2014]")
_CLAUSE_STARTERS = frozenset({"however", "although", "though", "whereas"})
_CONJUNCTIONS = frozenset({"and", "or", "so", "but", "because", "while", "since", "when"})

NEGATION_CUES = frozenset(
    {
        "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "nowhere",
        "cannot", "without", "except",
        # contractions typed without the apostrophe
        "dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "cant", "couldnt",
        "wont", "wouldnt", "shouldnt", "havent", "hasnt", "hadnt", "aint",
    }
)  # fmt: skip
# "never forget", "can't stop", "didn't quit": a negation cue on a verb of forgetting or
# ceasing affirms what follows ("I'll never forget her first steps" states the first steps),
# except a pause to do something ("I never stopped to listen" did not listen)
_FORGETTING = frozenset({"forget", "forgets", "forgot", "forgotten", "forgetting"})
_CEASING = frozenset({"stop", "stops", "stopped", "stopping", "quit", "quits", "quitting"})
_BETWEEN_CUE_AND_VERB = frozenset({"ever", "really", "just", "even"})
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "i'm", "i've", "i'd", "i'll", "im"})
SECOND_PERSON = frozenset(
    {"you", "your", "yours", "yourself", "you're", "you've", "you'd", "you'll", "youre"}
)
_SUBJECTS = FIRST_PERSON | SECOND_PERSON | {
    "he", "she", "we", "they", "it", "his", "her", "our", "their", "its", "it's", "he's",
    "she's", "we're", "they're", "we've", "they've", "there", "there's", "that's",
    "nobody", "nothing", "everyone", "everybody", "everything", "someone", "somebody",
}  # fmt: skip
_ARTICLES = frozenset({"the", "a", "an"})
# "I'm not alone and have friends": a finite verb after "and"/"but" that no form of "be"
# takes starts a predicate of its own, out of reach of a negated "be" before it. Only verbs
# that are seldom nouns ("love songs" would be one) and never participles ("and welcomed")
_BE = frozenset(
    {"am", "is", "are", "was", "were", "be", "been", "being", "i'm", "im", "you're", "he's",
     "she's", "it's", "we're", "they're", "that's", "there's"}
)  # fmt: skip
_BE_NEGATED = frozenset(
    {"isn't", "aren't", "wasn't", "weren't", "ain't", "isnt", "arent", "wasnt", "werent", "aint"}
)
_FINITE = frozenset(
    {"have", "has", "had", "am", "is", "are", "was", "were", "can", "could", "will", "would",
     "should", "must", "got", "get", "gets", "feel", "feels", "think", "thinks", "know",
     "knows", "enjoy", "enjoys", "want", "wants"}
)  # fmt: skip
_BEFORE_VERB = frozenset({"also", "still", "really", "just", "now", "even", "always"})


@dataclass(frozen=True, slots=True)
class Token:
    """A word of a text: its normalized form, code-point span, sentence and clause."""

    norm: str
    start: int
    end: int
    sentence: int
    clause: int
    negates: bool = False


@dataclass(frozen=True)
class Analysis:
    """A text cut into tokens, with the sentences that end in a question mark."""

    text: str
    tokens: tuple[Token, ...]
    questions: frozenset[int]

    def words(self, start: int = 0, end: int | None = None) -> tuple[Token, ...]:
        """Canonical tokens of the whole words inside ``text[start:end]``.

        A word cut by the span is left out, so a quote that starts or ends mid-word cannot
        borrow the word it cuts (``"jazz"`` quoted out of ``"jazzy"`` mentions nothing).
        """
        stop = len(self.text) if end is None else end
        raw = [t for t in self.tokens if t.start >= start and t.end <= stop]
        gaps = [""] + [self.text[a.end : b.start] for a, b in pairwise(raw)]
        out = []
        for norm, first, last in canonicalize([t.norm for t in raw], gaps):
            head = raw[first]
            out.append(Token(norm, head.start, raw[last - 1].end, head.sentence, head.clause))
        return tuple(out)

    def clause(self, clause: int) -> tuple[Token, ...]:
        return tuple(t for t in self.tokens if t.clause == clause)


def _normalize(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold().replace("\u2019", "'")


def _abbreviation(norm: str, gap: str) -> bool:
    if not _ABBREVIATION_DOT.fullmatch(gap):
        return False
    return (
        norm in _ABBREVIATIONS
        or norm in ABBREVIATED_MONTHS
        or (len(norm) == 1 and norm.isalpha() and norm != "i")
    )


def _starts_clause(norm: str, gap: str, following: str) -> bool:
    """A clause starts at a contrast word, and at a conjunction that opens a new subject.

    "I'm allergic to peanuts, and I don't like jazz" is two clauses; "I don't like jazz,
    blues, or rock" is one, so the "don't" still reaches "rock".
    """
    if norm in _CLAUSE_STARTERS or (norm == "but" and _CLAUSE_PUNCTUATION.search(gap)):
        return True
    if _CLAUSE_PUNCTUATION.search(gap) and norm in _AFTER_PAUSE:
        return True  # "Lena moved, so page Dmitri instead"; "still our DBA, nothing changes"
    if (norm, following) in {("instead", "of"), ("rather", "than")}:
        return True  # "Fostair instead of Symbicort": the "instead" negates Symbicort alone
    return norm in _CONJUNCTIONS and following in _SUBJECTS


_AFTER_PAUSE = frozenset(
    {"so", "because", "since", "while", "when", "which", "who", "nothing", "nobody", "none",
     "not"}
)  # fmt: skip


_WHOLES = frozenset(
    {"all", "any", "anything", "anyone", "anybody", "every", "everything", "everyone",
     "everybody", "nothing", "nobody", "none", "whatever", "whoever"}
)  # fmt: skip


def _negated_be(tokens: Sequence[Token], clause: int) -> bool:
    """Whether ``clause`` so far negates a form of *be* ("I'm not", "wasn't", "is never")."""
    mine = [t for t in tokens if t.clause == clause]
    return any(
        t.negates and (t.norm in _BE_NEGATED or (i > 0 and mine[i - 1].norm in _BE))
        for i, t in enumerate(mine)
    )


def _new_predicate(norms: Sequence[str], k: int, tokens: Sequence[Token], clause: int) -> bool:
    """Whether word ``k``, an "and" or "but", goes on past a negated *be* with a finite verb
    of its own (see the module docstring)."""
    if norms[k] not in {"and", "but"}:
        return False
    verb = k + 1
    while verb < len(norms) and norms[verb] in _BEFORE_VERB:
        verb += 1
    return verb < len(norms) and norms[verb] in _FINITE and _negated_be(tokens, clause)


def _after_whole(tokens: list[Token], clause: int, reach: int = 4) -> bool:
    """Whether one of the last ``reach`` words of ``clause`` names a whole to except from."""
    recent = [t.norm for t in tokens[-reach:] if t.clause == clause]
    return any(word in _WHOLES for word in recent)


def _negation_cue(norms: Sequence[str], k: int) -> bool:
    """Whether word ``k`` negates its clause: a cue, unless it only negates a verb of
    forgetting or ceasing (then the two cancel out)."""
    if not (norms[k] in NEGATION_CUES or norms[k].endswith("n't")):
        return False
    verb = k + 1
    while verb < len(norms) and norms[verb] in _BETWEEN_CUE_AND_VERB:
        verb += 1
    word, after = (norms[verb], norms[verb + 1]) if verb + 1 < len(norms) else ("", "")
    return not (word in _FORGETTING or (word in _CEASING and after != "to"))


_ANSWERS = frozenset({"no", "nope", "nah"})


def _answer_word(
    text: str, matches: Sequence[re.Match[str]], k: int, tokens: Sequence[Token], sentence: int
) -> bool:
    """Whether word ``k`` is a "No," that opens its sentence: an answer to what was said
    before, not a negation of what follows ("No, a flat on Rue Paul Bert")."""
    if _normalize(matches[k].group()) not in _ANSWERS:
        return False
    if tokens and tokens[-1].sentence == sentence:
        return False
    after = text[matches[k].end() : matches[k + 1].start() if k + 1 < len(matches) else None]
    return bool(_CLAUSE_PUNCTUATION.search(after))


@lru_cache(maxsize=4096)
def analyse(text: str) -> Analysis:
    """Tokens of ``text`` with their sentence and clause numbers (cached: a chat's messages
    are read again for every claim that cites them)."""
    matches = list(_TOKEN.finditer(text))
    norms = [_normalize(m.group()) for m in matches] + [""]
    tokens: list[Token] = []
    questions: set[int] = set()
    sentence = clause = end = 0
    for k, match in enumerate(matches):
        gap = text[end : match.start()]
        if tokens and "?" in gap:
            questions.add(sentence)
        if tokens and _SENTENCE_END.search(gap) and not _abbreviation(tokens[-1].norm, gap):
            sentence, clause = sentence + 1, clause + 1
        elif tokens and (
            _starts_clause(norms[k], gap, norms[k + 1]) or _new_predicate(norms, k, tokens, clause)
        ):
            clause += 1
        opens = not tokens or clause != tokens[-1].clause or norms[k + 1] in _SUBJECTS
        negates = _negation_cue(norms, k) and not _answer_word(text, matches, k, tokens, sentence)
        # "but" excludes after a whole ("everything but jazz", "all music but country");
        # after anything else it joins ("tough but fun") or contrasts
        negates = negates or (norms[k] == "but" and not opens and _after_whole(tokens, clause))
        # "instead of Symbicort", "rather than tea"; a bare "now instead" replaces, no more
        negates = negates or (norms[k], norms[k + 1]) in {("rather", "than"), ("instead", "of")}
        tokens.append(Token(norms[k], match.start(), match.end(), sentence, clause, negates))
        end = match.end()
    if tokens and "?" in text[end:]:
        questions.add(sentence)
    return Analysis(text, tuple(tokens), frozenset(questions))


def locate_quote(text: str, quote: str) -> tuple[int, int] | None:
    """The code-point span of the first verbatim occurrence of ``quote.strip()`` in ``text``.

    Only leading and trailing whitespace of the quote is forgiven; a quote that matches only
    after collapsing inner whitespace or changing case is not verbatim and is not found.

    >>> locate_quote("I'm allergic to peanuts.", "  allergic to peanuts ")
    (4, 23)
    >>> locate_quote("I'm allergic to peanuts.", "allergic  to peanuts") is None
    True
    """
    needle = quote.strip()
    if not needle:
        return None
    start = text.find(needle)
    return None if start < 0 else (start, start + len(needle))


_ES_STEMS = ("s", "x", "z", "ch", "sh", "o")


@lru_cache(maxsize=4096)
def _forms(word: str) -> frozenset[str]:
    """A word and its simple singulars: ``peanuts`` -> peanut, ``allergies`` -> allergy."""
    base = word[:-2] if word.endswith("'s") else word.rstrip("'")
    forms = {base}
    if len(base) >= 4 and base.endswith("s") and not base.endswith("ss"):
        forms.add(base[:-1])
    if len(base) >= 5 and base.endswith("es") and base[:-2].endswith(_ES_STEMS):
        forms.add(base[:-2])  # boxes, glasses, dishes, potatoes; not James -> jam
    if len(base) >= 5 and base.endswith("ies"):
        forms.add(base[:-3] + "y")
    return frozenset(forms)


def _same(needle: str, hay: str) -> bool:
    if needle.startswith("#") or hay.startswith("#"):
        return token_matches(needle, hay)
    return needle == hay or not _forms(needle).isdisjoint(_forms(hay))


@lru_cache(maxsize=4096)
def phrase(text: str) -> tuple[str, ...]:
    """The canonical words of a name or value, without a leading article ("the Beatles").

    Cached: grounding compares every name of a draft with every other, again and again."""
    words = tuple(t.norm for t in analyse(text).words())
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return words


def date_value(text: str) -> date | None:
    """The day ``text`` names, if it is one whole date in any spelling grounding reads, so a
    claim value is stored as the one date its quote states.

    >>> date_value("12 March 1990") == date_value("March 12th, 1990") == date(1990, 3, 12)
    True
    >>> date_value("March 1990") is None
    True
    """
    words = phrase(text)
    if len(words) != 1 or not words[0].startswith("#d"):
        return None
    return date.fromisoformat(words[0][2:])


def find_phrase(hay: Sequence[Token], needle: Sequence[str]) -> list[tuple[int, int]]:
    """Every ``(i, j)`` with ``hay[i:j]`` matching the words of ``needle`` one for one."""
    n = len(needle)
    if n == 0:
        return []
    return [
        (i, i + n)
        for i in range(len(hay) - n + 1)
        if all(_same(needle[k], hay[i + k].norm) for k in range(n))
    ]


def find_gapped(
    hay: Sequence[Token], needle: Sequence[str], skippable: Set[str], gap: int = 3
) -> list[tuple[int, int]]:
    """Every ``(i, j)`` where ``hay[i:j]`` holds the words of ``needle`` in order, one for
    one, with at most ``gap`` words between them in all, each of them ``skippable``, in one
    sentence: "interview *with Kestrel is* on March 3rd" holds "interview on March 3rd"."""
    found = []
    for i in range(len(hay)):
        if not needle or not _same(needle[0], hay[i].norm):
            continue
        at, k, skipped = i + 1, 1, 0
        while k < len(needle) and at < len(hay) and hay[at].sentence == hay[i].sentence:
            if _same(needle[k], hay[at].norm):
                k += 1
            elif hay[at].norm in skippable and skipped < gap:
                skipped += 1
            else:
                break
            at += 1
        if k == len(needle):
            found.append((i, at))
    return found
