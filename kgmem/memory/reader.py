"""A quote read for a claim: the claim's terms as targets (names, aliases, the user), the
chat around the quote (:class:`Reading`), and what of the quote refers to a target.

A claim term resolves to a *target*: a set of names (the term and, when it names a known
entity, all of that entity's aliases) and whether it is the user. A quote names the target
when it says one of those names, or when a referring expression of it ("I", "she", "my
brother", "Claire" for Claire Fontaine, a nickname) refers to the target in the chat around
the quote. Used by :mod:`kgmem.memory.subjects` and :mod:`kgmem.memory.mentions`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, StrEnum
from types import MappingProxyType

from kgmem.memory.discourse import Discourse, Ref, name_keys
from kgmem.memory.model import ClaimDraft
from kgmem.memory.surface import (
    FIRST_PERSON,
    SECOND_PERSON,
    Analysis,
    Token,
    find_gapped,
    find_phrase,
    phrase,
)

__all__ = [
    "BOOLEAN_FLIPS",
    "WH_WORDS",
    "Mismatch",
    "NameBook",
    "Occurrence",
    "Problem",
    "Reader",
    "Reading",
    "Target",
    "Voice",
    "matches",
    "refers",
    "refers_to",
    "target_keys",
    "who",
]

#: the words a question asks its unknown with
WH_WORDS = frozenset(
    {"who", "who's", "whom", "whose", "what", "what's", "which", "where", "where's", "when",
     "when's"}
)  # fmt: skip


class Mismatch(StrEnum):
    """How a real quote fails to state a claim (values match grounding's refusal codes)."""

    SUBJECT = "quote_does_not_name_subject"
    VALUE = "quote_does_not_state_value"
    APART = "subject_and_value_apart"
    NEGATION = "negation_mismatch"
    QUESTION = "quote_is_question"
    UNRELATED = "quote_unrelated"
    AMBIGUOUS = "ambiguous_referent"


class Voice(Enum):
    """Who wrote a source, as far as its pronouns go."""

    USER = "user message"  # "I" is the message's speaker
    USER_NOTE = "user's note"  # "I" is the user
    AGENT = "assistant message"  # "you" is the user; "I" is the assistant
    OTHER = "other"  # tool results, task records, the agent's short notes


@dataclass(frozen=True)
class Target:
    """Whom a claim term or a pronoun refers to: names (any of them) or the user."""

    names: frozenset[str]
    is_user: bool

    def same(self, other: Target) -> bool:
        return (self.is_user and other.is_user) or not self.names.isdisjoint(other.names)


_SPEAKER_TERMS = frozenset({("i",), ("me",), ("my",), ("mine",), ("myself",), ("user",)})


@dataclass(frozen=True)
class NameBook:
    """The user's name and aliases, and known entity names -> aliases."""

    user: str | None = None
    user_aliases: tuple[str, ...] = ()
    entities: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        frozen = {name: tuple(aliases) for name, aliases in self.entities.items()}
        object.__setattr__(self, "entities", MappingProxyType(frozen))

    def names_for(self, name: str) -> frozenset[str]:
        """``name`` and every alias of each known entity (the user included) it names."""
        key = phrase(name)
        groups = [(self.user, *self.user_aliases)] if self.user else []
        groups += [(main, *aliases) for main, aliases in self.entities.items()]
        out = {name}
        for group in groups:
            if any(phrase(member) == key for member in group):
                out.update(group)
        return frozenset(out)

    def is_user(self, name: str) -> bool:
        own = (self.user, *self.user_aliases) if self.user else ()
        return phrase(name) in {phrase(n) for n in own}

    def resolve(self, term: str) -> Target:
        """A claim term: "I"/"me"/"my"/"user"/"the user" is the user, else a name."""
        if phrase(term) in _SPEAKER_TERMS:
            own = (self.user, *self.user_aliases) if self.user else ()
            return Target(frozenset(own), is_user=True)
        return Target(self.names_for(term), is_user=self.is_user(term))

    def referents(self, voice: Voice, speaker: str | None) -> dict[frozenset[str], Target]:
        """Which pronouns refer to whom in a source written in ``voice``."""
        user = self.resolve("user")
        if voice is Voice.USER and speaker is not None:
            is_user = self.user is None or self.is_user(speaker)
            return {FIRST_PERSON: Target(self.names_for(speaker), is_user)}
        if voice in (Voice.USER, Voice.USER_NOTE):
            return {FIRST_PERSON: user}
        return {SECOND_PERSON: user} if voice is Voice.AGENT else {}


Occurrence = tuple[Token, ...]
Problem = tuple[Mismatch, str, str]  # mismatch, claim field, why
BOOLEAN_FLIPS = {"true": False, "yes": False, "false": True, "no": True}
_HINT_FILLER = frozenset({"is", "has", "have", "was", "are", "does", "do", "can", "be", "of", "to"})


#: what joins a name to a description of it: "Maison Vert, [a studio]", "Mercury, which is
#: [our broker]"
#: words a value may leave out of its quote without saying something else
_GLUE = frozenset({"is", "are", "was", "were", "with", "at", "for", "the", "a", "an"})

#: what opens a noun phrase in apposition ("Lumen, [5,000 in so far]" is none)
_DETS = frozenset({"a", "an", "the", "our", "my", "his", "her", "their", "its", "your"})
_APPOSITION = re.compile(r"\s*,\s*(?:(?:which|who|that)\s+(?:is|was|are|were)\s+)?")


@dataclass(frozen=True)
class Reading:
    """The chat around a source: its discourse, with the source its last turn."""

    discourse: Discourse
    turn: int

    def refs(self) -> tuple[Ref, ...]:
        return self.discourse.refs(self.turn)

    def asked(self) -> tuple[Ref, ...]:
        """What the assistant's question right before this turn refers to (its question
        sentences), when it asks one: whom a reply's bare fragment is about."""
        before = self.turn - 1
        if before < 0 or not self.discourse.turns[before].speaker.assistant:
            return ()
        doc = self.discourse.docs[before]
        return tuple(r for r in self.discourse.refs(before) if r.sentence in doc.questions)


@dataclass(frozen=True)
class Reader:
    """One quote of one source, read for one claim."""

    doc: Analysis
    words: tuple[Token, ...]
    book: NameBook
    voice: Voice
    speaker: str | None
    span: tuple[int, int] = (0, 0)
    reading: Reading | None = None
    supplied: frozenset[str] = frozenset()  # terms the reply to this question names

    def stand_in(self) -> list[Occurrence]:
        """Where a term the reply supplies stands in the question: its wh-word ("*Who*'s
        the tech lead?" "Dmitri."), else the question's first word."""
        wh: list[Occurrence] = [(w,) for w in self.words if w.norm in WH_WORDS]
        return wh[:1] or [self.words[:1]]

    def named(self, term: str) -> list[Occurrence]:
        if term in self.supplied:
            return self.stand_in()
        target = self.book.resolve(term)
        words = self.words
        found = [tuple(words[i:j]) for n in target.names for i, j in find_phrase(words, phrase(n))]
        for pronouns, referent in self.book.referents(self.voice, self.speaker).items():
            if referent.same(target):
                found += [(w,) for w in words if w.norm in pronouns]
        if target.is_user and self.voice is not Voice.USER:
            found += [tuple(words[i:j]) for i, j in find_phrase(words, ("user",))]
        open_to_doubt = []
        for ref in self.quoted_refs():
            said = refers(ref, target, term, self.taken())
            if said is True:
                found.append(self.occurrence(ref))
            elif said is None:
                open_to_doubt.append((ref.start, ref.end))
        # a name the chat says may be another's ("either ledger-api or Mercury") names no one
        return [
            occ
            for occ in found
            if occ and not any(a <= occ[0].start and occ[-1].end <= b for a, b in open_to_doubt)
        ]

    def taken(self) -> frozenset[tuple[str, ...]]:
        return frozenset() if self.reading is None else self.reading.discourse.keys()

    def quoted_refs(self) -> list[Ref]:
        if self.reading is None:
            return []
        a, b = self.span
        return [r for r in self.reading.refs() if a <= r.start and r.end <= b]

    def occurrence(self, ref: Ref) -> Occurrence:
        return self.doc.words(ref.start, ref.end)

    def before_quote(self) -> Ref | None:
        """The referring expression nearest before the quote, in the quote's sentence."""
        if self.reading is None or not self.words:
            return None
        first = self.words[0]
        before = [r for r in self.reading.refs() if r.end <= first.start]
        before = [r for r in before if r.sentence == first.sentence]
        last = max(before, key=lambda r: r.start, default=None)
        joint = _APPOSITION.fullmatch(self.doc.text[last.end : first.start]) if last else None
        if last is not None and joint and (joint.group().strip(" ,") or first.norm in _DETS):
            return last  # "at Maison Vert, [a small design studio]", "Mercury, which is"
        refs = [r for r in before if r.subject]
        return max(refs, key=lambda r: r.start) if refs else None

    def topic(self) -> Ref | None:
        """What the quote's sentence opens with, set off by a comma or a colon, when the
        quote follows it: "The sourdough, [we sell about 60 loaves a day]", "Kestrel:
        [first interview is on March 3rd]" are said of it."""
        if self.reading is None or not self.words:
            return None
        first = self.words[0]
        sentence = [t for t in self.doc.tokens if t.sentence == first.sentence]
        opening = next((t for t in sentence if t.norm not in _DETS), None)  # "The sourdough"
        refs = [r for r in self.reading.refs() if opening is not None and r.start == opening.start]
        refs = [r for r in refs if all(t.norm in _DETS for t in sentence if t.end <= r.start)]
        if not refs or refs[0].end > first.start or (" " not in refs[0].text and refs[0].pronoun):
            return None  # "She, ..." is no topic
        after = self.doc.text[refs[0].end : first.start]
        return refs[0] if re.fullmatch(r"\s*[,:]\s*", after) else None

    def valued(self, claim: ClaimDraft) -> list[Occurrence]:
        value = claim.value or ""
        if value in self.supplied:
            return self.stand_in()
        if value.strip().casefold() not in BOOLEAN_FLIPS:
            words = phrase(value)
            spans = find_phrase(self.words, words)
            if not spans and len(words) > 1:
                # "interview with Kestrel is on March 3rd" states "interview on March 3rd"
                # of Kestrel: only the subject's own name and glue words may come between
                names = {w for n in self.book.resolve(claim.subject).names for w in phrase(n)}
                spans = find_gapped(self.words, words, names | _GLUE)
            return [tuple(self.words[i:j]) for i, j in spans]
        # A boolean is stated by the predicate's own words: isVegetarian true, "vegetarian".
        hint = _hint(claim.predicate)
        found: list[Occurrence] = []
        for sentence in sorted({w.sentence for w in self.words}) if hint else ():
            within = [w for w in self.words if w.sentence == sentence]
            hits = [find_phrase(within, (h,)) for h in hint]
            if all(hits):
                found.append(tuple(within[h[0][0]] for h in hits))
        return found

    def negated(self, occurrence: Occurrence, names: Sequence[Occurrence]) -> bool:
        """A negation cue in the *source* clause of ``occurrence``, before its end and
        outside the names.

        The clause is read in the whole source, so a quote trimmed to "like jazz" out of
        "I don't like jazz" still carries the "don't"; a cue after the value negates what
        follows it ("Pets make us happier and never let us down" says nothing against
        pets).
        """
        spans = [(t.start, t.end) for occ in names for t in occ]
        end = occurrence[-1].end
        return any(
            raw.negates
            and raw.start < end  # "never let us down" after "Pets" negates the letting
            and not any(a <= raw.start and raw.end <= b for a, b in spans)
            and not self._corrected(raw, occurrence)
            for clause in {t.clause for t in occurrence}
            for raw in self.doc.clause(clause)
        )

    def _corrected(self, cue: Token, occurrence: Occurrence) -> bool:
        """ "not a poodle, a Maltese": a "not" that opens a phrase denies that phrase; what
        a comma sets after it is the correction ("I do not, in fact, like jazz" denies)."""
        text = self.doc.text
        before = text[: cue.start].rstrip()
        opens = not before or before[-1] in ",;:.!?" or before.casefold().endswith(" no")
        return cue.norm == "not" and opens and "," in text[cue.end : occurrence[0].start]


def target_keys(target: Target, term: str) -> set[tuple[str, ...]]:
    return set().union(*(name_keys(n) for n in (term, *target.names)))


def matches(
    key: tuple[str, ...],
    names: frozenset[tuple[str, ...]],
    taken: frozenset[tuple[str, ...]],
    partial: bool = True,
) -> bool:
    """Whether a claim's name ``key`` is one of ``names``, or the first or last word of one;
    or a full name of one the chat calls by its first name only, when no one else in the
    chat (``taken``: every name of the chat) has that full name ("Sam Lee" for "Sam")."""
    if key in names:
        return True
    if not partial:
        return False
    if len(key) == 1:
        return any(len(n) > 1 and key[0] in (n[0], n[-1]) for n in names)
    alone = all(len(n) == 1 for n in names)
    return alone and (key[0],) in names and key not in taken


def refers(
    ref: Ref, target: Target, term: str, taken: frozenset[tuple[str, ...]] = frozenset()
) -> bool | None:
    """Whether ``ref`` refers to ``target``: True, False, or None (it may, among others)."""
    keys = target_keys(target, term)
    # "Haddad & Co." without its "& Co." is a whole name, never the surname of Yusuf Haddad
    said = {phrase(n) for n in (term, *target.names)}
    said |= {n[1:] for n in said}  # "Dr. Okafor" is "Okafor", of any longer name
    hits = [
        (target.is_user and user) or any(matches(k, names, taken, k in said) for k in keys)
        for names, user in zip(ref.candidates, ref.user, strict=True)
    ]
    if not any(hits):
        return False
    return True if ref.resolved or ref.group else None


def refers_to(ref: Ref, term: str, book: NameBook, reading: Reading) -> bool:
    """Whether ``ref`` surely refers to the claim name ``term`` (resolved, not a doubt)."""
    return refers(ref, book.resolve(term), term, reading.discourse.keys()) is True


def who(ref: Ref) -> str:
    def name(names: frozenset[tuple[str, ...]]) -> str:
        return " ".join(max(names, key=lambda n: (len(tuple(n)), tuple(n)))) if names else "?"

    return " or ".join(sorted(name(c) for c in ref.candidates))


def _hint(predicate: str) -> tuple[str, ...]:
    """Content words of a predicate's local name: ``ex:isVegetarian`` -> ("vegetarian",)."""
    local = re.split(r"[#/:]", predicate)[-1]
    parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", local)
    return tuple(p.lower() for p in parts if p.lower() not in _HINT_FILLER)
