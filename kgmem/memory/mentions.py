"""Who and what a quote mentions: names, aliases, pronouns, values, polarity, affirmations.

Built on :mod:`kgmem.memory.surface` and :mod:`kgmem.memory.discourse`. A claim term
resolves to a *target*: a set of names (the term and, when it names a known entity, all of
that entity's aliases) and whether it is the user. A quote names the target when it says one
of those names, or when a referring expression of it ("I", "she", "my brother", "Claire" for
Claire Fontaine, a nickname) refers to the target in the chat around the quote (the
:class:`Reading`). A fragment quote that names no subject takes the one its sentence names
right before it, the one an assistant's question it answers names, or its speaker when it
names no one. A referring expression with two possible referents, one of them the target, is
ambiguous: refused with both, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from itertools import pairwise
from types import MappingProxyType

from kgmem.memory.change import ending_stated
from kgmem.memory.discourse import Discourse, Ref, name_keys
from kgmem.memory.model import ClaimDraft
from kgmem.memory.surface import (
    FIRST_PERSON,
    SECOND_PERSON,
    Analysis,
    Token,
    analyse,
    find_gapped,
    find_phrase,
    phrase,
)

__all__ = [
    "WH_WORDS",
    "Mismatch",
    "NameBook",
    "Occurrence",
    "Reading",
    "Target",
    "Voice",
    "explicit_mismatches",
    "mentions",
    "named_terms",
    "refers_to",
    "related_mismatches",
]


def mentions(text: str, name: str, aliases: Iterable[str] = ()) -> bool:
    """Whether ``text`` names ``name`` or one of its ``aliases`` as whole words.

    >>> mentions("Bob's peanut allergy", "bob")
    True
    >>> mentions("Bobby called", "Bob")
    False
    """
    words = analyse(text).words()
    return any(find_phrase(words, phrase(candidate)) for candidate in (name, *aliases))


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
_Problem = tuple[Mismatch, str, str]  # mismatch, claim field, why
_BOOLEAN_FLIPS = {"true": False, "yes": False, "false": True, "no": True}
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
class _Reader:
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
            refers = _refers(ref, target, term, self.taken())
            if refers is True:
                found.append(self.occurrence(ref))
            elif refers is None:
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
        if value.strip().casefold() not in _BOOLEAN_FLIPS:
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


def _keys(target: Target, term: str) -> set[tuple[str, ...]]:
    return set().union(*(name_keys(n) for n in (term, *target.names)))


def _matches(
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


def _refers(
    ref: Ref, target: Target, term: str, taken: frozenset[tuple[str, ...]] = frozenset()
) -> bool | None:
    """Whether ``ref`` refers to ``target``: True, False, or None (it may, among others)."""
    keys = _keys(target, term)
    # "Haddad & Co." without its "& Co." is a whole name, never the surname of Yusuf Haddad
    said = {phrase(n) for n in (term, *target.names)}
    said |= {n[1:] for n in said}  # "Dr. Okafor" is "Okafor", of any longer name
    hits = [
        (target.is_user and user) or any(_matches(k, names, taken, k in said) for k in keys)
        for names, user in zip(ref.candidates, ref.user, strict=True)
    ]
    if not any(hits):
        return False
    return True if ref.resolved or ref.group else None


def refers_to(ref: Ref, term: str, book: NameBook, reading: Reading) -> bool:
    """Whether ``ref`` surely refers to the claim name ``term`` (resolved, not a doubt)."""
    return _refers(ref, book.resolve(term), term, reading.discourse.keys()) is True


def _who(ref: Ref) -> str:
    def name(names: frozenset[tuple[str, ...]]) -> str:
        return " ".join(max(names, key=lambda n: (len(tuple(n)), tuple(n)))) if names else "?"

    return " or ".join(sorted(name(c) for c in ref.candidates))


def _negative_sense(predicate: str) -> bool:
    """A predicate that a negated clause states ("dislikes": "I don't eat X")."""
    local = re.split(r"[#/:]", predicate)[-1].casefold()
    return local.startswith(("dislike", "avoid", "hate"))


def _hint(predicate: str) -> tuple[str, ...]:
    """Content words of a predicate's local name: ``ex:isVegetarian`` -> ("vegetarian",)."""
    local = re.split(r"[#/:]", predicate)[-1]
    parts = re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", local)
    return tuple(p.lower() for p in parts if p.lower() not in _HINT_FILLER)


def _subject_outside(
    read: _Reader, subject: str, values: Sequence[Occurrence]
) -> tuple[Occurrence, None] | tuple[None, _Problem]:
    """The subject of a quote that does not name it: what its sentence names right before
    it ("My brother Tomás helped me move, he [drove the van]"), or why not."""
    target = read.book.resolve(subject)
    missing = (
        Mismatch.SUBJECT,
        "subject",
        f"does not name {subject!r}, an alias, or a pronoun that refers to it",
    )
    quoted = read.quoted_refs()
    for ref in quoted:
        if _refers(ref, target, subject, read.taken()) is None:
            why = f"{ref.text!r} may refer to {_who(ref)}: which one is not said"
            return None, (Mismatch.AMBIGUOUS, "subject", why)
    topic = read.topic()
    if topic is not None and _refers(topic, target, subject, read.taken()) is True:
        return read.occurrence(topic), None
    first = min((occ[0].start for occ in values), default=None)
    someone = [r for r in quoted if r.subject and (r.pronoun or any(r.persons))]
    if first is not None and any(r.start < first for r in someone):
        return None, missing  # the quote says it of someone else
    near = read.before_quote()
    if near is None:
        found = (
            _answered(read, target, subject)
            or _spoken(read, target, subject, values)
            or _continued(read, target, subject, values)
        )
        return (found, None) if found else (None, missing)
    refers = _refers(near, target, subject, read.taken())
    if refers is None:
        why = f"{near.text!r} may refer to {_who(near)}: which one is not said"
        return None, (Mismatch.AMBIGUOUS, "subject", why)
    sayer = None if refers else _sayer(read, near)
    if sayer is not None and _refers(sayer, target, subject, read.taken()) is True:
        return read.occurrence(sayer), None  # "Big Mike says [it should take six weeks]"
    return (read.occurrence(near), None) if refers else (None, missing)


def _doubted(
    read: _Reader, subject: str, values: Sequence[Occurrence], subjects: Sequence[Occurrence]
) -> _Problem | None:
    """An ambiguous subject of the value's clause ("She or Yusuf will ping me, probably
    her"): what names it later does not settle who does it."""
    target = read.book.resolve(subject)
    first = min((occ[0].start for occ in values), default=None)
    if first is None:
        return None
    taken = read.taken()
    before = [r for r in read.quoted_refs() if r.subject and r.start < first]
    sure = {occ[0].start for occ in subjects}
    doubtful = [r for r in before if _refers(r, target, subject, taken) is None]
    settled = [r for r in before if r.start in sure]
    if doubtful and not settled:
        ref = doubtful[0]
        return (Mismatch.AMBIGUOUS, "subject", f"{ref.text!r} may refer to {_who(ref)}")
    return None


def _spoken(
    read: _Reader, target: Target, subject: str, values: Sequence[Occurrence]
) -> Occurrence | None:
    """The speaker of a statement that names no one ("Three times a week.", "Setbacks are
    just opportunities for comebacks"): what a person says with no other subject, they say
    of themselves; what the assistant asks so, it asks of the user. Not when its sentence,
    before the value, says "he", "it", "you" or names someone: then it is about them."""
    if read.reading is None or not read.words:
        return None
    discourse, turn = read.reading.discourse, read.reading.turn
    me = discourse.speaker(turn)
    if me is None and {w.sentence for w in read.words} <= read.doc.questions:
        me = discourse.addressee(turn)  # the assistant asks "Same dates, five nights?"
    if me is None:
        return None
    names = frozenset(me.names)
    mine = (target.is_user and me.is_user) or any(
        _matches(k, names, read.taken()) for k in _keys(target, subject)
    )
    if not mine:
        return None
    first = min((occ[0].start for occ in values), default=read.words[-1].end)
    sentences = {w.sentence for w in read.words}
    others = [
        r
        for r in read.reading.refs()
        if r.sentence in sentences
        and r.start < first
        and r.subject
        and not (r.resolved and r.candidates[0] == names)
        and not (r.group and names in r.candidates)  # "we": the speaker and company
    ]
    return None if others else _stand_in(read.words[0])


#: what reports a person's words or view ("Mike says it should take six weeks")
_SAYING = frozenset(
    {"says", "said", "say", "thinks", "thought", "reckons", "reckoned", "told", "tells",
     "mentioned", "reports", "reported", "estimates", "estimated", "expects", "expected"}
)  # fmt: skip


def _sayer(read: _Reader, near: Ref) -> Ref | None:
    """Who reports the clause that ``near`` (a thing's "it") opens, when the words right
    before it are a name and a saying verb: "Big Mike says it should take six weeks" is
    what Big Mike says."""
    if read.reading is None or not near.pronoun or any(near.persons):
        return None
    words = [t for t in read.doc.tokens if t.end <= near.start and t.sentence == near.sentence]
    if not words or words[-1].norm not in _SAYING:
        return None
    before = [r for r in read.reading.refs() if r.sentence == near.sentence and r.subject]
    before = [r for r in before if r.end <= words[-1].start]
    last = max(before, key=lambda r: r.start, default=None)
    return last if last is not None and last.end >= words[-1].start - 1 else None


def _stand_in(word: Token) -> Occurrence:
    """Where a subject named outside a quote stands in it: before its first word, taking no
    word of it ("not a poodle, a Maltese" keeps its "not")."""
    return (replace(word, end=word.start, negates=False),)


def _continued(
    read: _Reader, target: Target, subject: str, values: Sequence[Occurrence]
) -> Occurrence | None:
    """The subject of a sentence that names no one and goes on from the sentence before
    it ("I have one with Northgate Building Society. Fixed at 3.4% until October 2027."):
    the one referent, other than the speaker, that the sentence before names."""
    if read.reading is None or not read.words:
        return None
    sentence = read.words[0].sentence
    first = min((occ[0].start for occ in values), default=read.words[-1].end)
    refs = read.reading.refs()
    if sentence == 0 or any(r.sentence == sentence and r.start < first for r in refs):
        return None
    before = [r for r in refs if r.sentence == sentence - 1 and not any(r.user) and r.resolved]
    if len({r.ids for r in before}) != 1:
        return None
    # it stands where the sentence that goes on from it starts
    return _stand_in(read.words[0]) if _refers(before[0], target, subject, read.taken()) else None


def _answered(read: _Reader, target: Target, subject: str) -> Occurrence | None:
    """The subject of a bare reply that answers the assistant's question ("where are you
    living now?" "No, a flat on Rue Paul Bert"): the one referent of the question of its
    kind (person or not) that is the claim's subject. The reply must open its message and
    name no one itself."""
    if read.reading is None or not read.words or read.quoted_refs():
        return None
    first = read.words[0]
    if first.sentence != 0 or any(r.subject and r.end <= first.start for r in read.reading.refs()):
        return None
    asked = read.reading.asked()
    hits = [r for r in asked if _refers(r, target, subject, read.taken()) is True]
    if not hits:
        return None
    person = hits[0].persons[0] if hits[0].persons else False
    others = {
        names
        for r in asked
        if r.resolved and not _refers(r, target, subject, read.taken())
        for names, is_person in zip(r.candidates, r.persons, strict=True)
        if is_person == person
    }
    return None if others else _stand_in(first)


def explicit_mismatches(
    claim: ClaimDraft,
    doc: Analysis,
    span: tuple[int, int],
    book: NameBook,
    voice: Voice,
    speaker: str | None = None,
    reading: Reading | None = None,
    supplied: Iterable[str] = (),
) -> list[_Problem]:
    """Why ``doc.text[span]`` does not state ``claim`` (empty: it does). ``supplied``: the
    claim's terms (names or value) that the reply to this question names."""
    read = _Reader(doc, doc.words(*span), book, voice, speaker, span, reading, frozenset(supplied))
    what = "object" if claim.object is not None else "value"
    values = read.named(claim.object) if claim.object is not None else read.valued(claim)
    subjects = read.named(claim.subject)
    doubt = _doubted(read, claim.subject, values, subjects)
    if doubt is not None:
        return [doubt]
    if not subjects:
        outside, problem = _subject_outside(read, claim.subject, values)
        if outside is None:
            return [problem or (Mismatch.SUBJECT, "subject", "names no subject")]
        subjects = [outside]
    if not values:
        return [(Mismatch.VALUE, what, f"does not state {claim.object or claim.value!r}")]
    sentences = {occ[0].sentence for occ in subjects}
    together = [occ for occ in values if occ[0].sentence in sentences]
    if not together:
        why = f"names the subject and the {what} only in different sentences"
        return [(Mismatch.APART, what, why)]
    wanted = claim.negated != _BOOLEAN_FLIPS.get((claim.value or "").strip().casefold(), False)
    polar = [occ for occ in together if read.negated(occ, subjects + values) == wanted]
    if not polar and not claim.negated and _negative_sense(claim.predicate):
        polar = together  # "I eat everything except sea urchin" states dislikes sea urchin
    if not polar and wanted and ending_stated(doc, span):
        polar = together  # "I left Riverside Striders": no longer a member
    if not polar:
        why = "has no negation cue for a negated claim" if wanted else "negates the claim"
        return [(Mismatch.NEGATION, "negated", why)]
    if all(_asked(doc, occ) for occ in polar):
        return [(Mismatch.QUESTION, "quote", "asks rather than states the claim")]
    return []


#: the words a question asks its unknown with
WH_WORDS = frozenset(
    {"who", "who's", "whom", "whose", "what", "what's", "which", "where", "where's", "when",
     "when's"}
)  # fmt: skip

_INTERROGATIVES = frozenset(
    {"can", "could", "would", "will", "do", "does", "did", "is", "are", "was", "were",
     "shall", "should", "may", "might", "what", "where", "when", "who", "whom", "whose",
     "why", "how", "which"}
)  # fmt: skip


def _asked(doc: Analysis, occ: Occurrence) -> bool:
    """Whether ``occ`` is inside the question of its sentence: "I just moved to Lyon, can
    you help me?" states the move and asks only for help."""
    if occ[0].sentence not in doc.questions:
        return False
    words = [t for t in doc.tokens if t.sentence == occ[0].sentence]
    start = words[0].start
    for before, word in pairwise(words):
        gap = doc.text[before.end : word.start]
        joins = "," in gap or ";" in gap or before.norm in {"and", "but", "so"}
        if word.norm in _INTERROGATIVES and joins:
            start = word.start
    return occ[0].start >= start


def named_terms(
    claim: ClaimDraft,
    doc: Analysis,
    span: tuple[int, int],
    book: NameBook,
    voice: Voice,
    speaker: str | None = None,
    reading: Reading | None = None,
) -> tuple[str, ...]:
    """The claim's terms (subject, object, value) that ``doc.text[span]`` names."""
    read = _Reader(doc, doc.words(*span), book, voice, speaker, span, reading)
    terms = [t for t in (claim.subject, claim.object) if t is not None and read.named(t)]
    if claim.value is not None and claim.value.strip().casefold() not in _BOOLEAN_FLIPS:
        terms += [claim.value] if read.valued(claim) else []
    return tuple(terms)


def related_mismatches(
    claim: ClaimDraft,
    doc: Analysis,
    span: tuple[int, int],
    book: NameBook,
    voice: Voice,
    speaker: str | None = None,
    reading: Reading | None = None,
    supplied: Iterable[str] = (),
) -> list[_Problem]:
    """Derived/inferred support need not state the claim, but must be about it."""
    read = _Reader(doc, doc.words(*span), book, voice, speaker, span, reading)
    terms = [claim.subject] + ([claim.object] if claim.object is not None else [])
    if any(read.named(term) for term in terms) or (claim.value and read.valued(claim)):
        return []
    return [(Mismatch.UNRELATED, "quote", "names neither the subject nor the object/value")]
