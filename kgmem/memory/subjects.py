"""Where a claim's subject is when its quote does not name it: the sentence's topic or the
referent named right before the quote, the question a bare reply answers, the speaker of a
statement that names no one, the sentence a verbless one goes on from, the person who says
what the quote reports; or why not (ambiguous: refused with both, never a guess).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from kgmem.memory.discourse import Ref
from kgmem.memory.reader import (
    Mismatch,
    Occurrence,
    Problem,
    Reader,
    Target,
    matches,
    refers,
    target_keys,
    who,
)
from kgmem.memory.surface import Token

__all__ = ["doubted", "subject_outside"]


def subject_outside(
    read: Reader, subject: str, values: Sequence[Occurrence]
) -> tuple[Occurrence, None] | tuple[None, Problem]:
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
        if refers(ref, target, subject, read.taken()) is None:
            why = f"{ref.text!r} may refer to {who(ref)}: which one is not said"
            return None, (Mismatch.AMBIGUOUS, "subject", why)
    topic = read.topic()
    if topic is not None and refers(topic, target, subject, read.taken()) is True:
        return read.occurrence(topic), None
    first = min((occ[0].start for occ in values), default=None)
    someone = [r for r in quoted if r.subject and (r.pronoun or any(r.persons))]
    someone = [r for r in someone if not (r.asked and target.is_user)]  # see _spoken
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
    near_is = refers(near, target, subject, read.taken())
    if near_is is None:
        why = f"{near.text!r} may refer to {who(near)}: which one is not said"
        return None, (Mismatch.AMBIGUOUS, "subject", why)
    sayer = None if near_is else _sayer(read, near)
    if sayer is not None and refers(sayer, target, subject, read.taken()) is True:
        return read.occurrence(sayer), None  # "Big Mike says [it should take six weeks]"
    return (read.occurrence(near), None) if near_is else (None, missing)


def doubted(
    read: Reader, subject: str, values: Sequence[Occurrence], subjects: Sequence[Occurrence]
) -> Problem | None:
    """An ambiguous subject of the value's clause ("She or Yusuf will ping me, probably
    her"): what names it later does not settle who does it."""
    target = read.book.resolve(subject)
    first = min((occ[0].start for occ in values), default=None)
    if first is None:
        return None
    taken = read.taken()
    before = [r for r in read.quoted_refs() if r.subject and r.start < first]
    sure = {occ[0].start for occ in subjects}
    doubtful = [r for r in before if refers(r, target, subject, taken) is None]
    settled = [r for r in before if r.start in sure]
    if doubtful and not settled:
        ref = doubtful[0]
        return (Mismatch.AMBIGUOUS, "subject", f"{ref.text!r} may refer to {who(ref)}")
    return None


def _spoken(
    read: Reader, target: Target, subject: str, values: Sequence[Occurrence]
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
        matches(k, names, read.taken()) for k in target_keys(target, subject)
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
        # "Did the budget change?" "It went up to 21,000": the user's own affair
        and not (r.asked and me.is_user)
    ]
    return None if others else _stand_in(read.words[0])


#: what reports a person's words or view ("Mike says it should take six weeks")
_SAYING = frozenset(
    {"says", "said", "say", "thinks", "thought", "reckons", "reckoned", "told", "tells",
     "mentioned", "reports", "reported", "estimates", "estimated", "expects", "expected"}
)  # fmt: skip


def _sayer(read: Reader, near: Ref) -> Ref | None:
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
    read: Reader, target: Target, subject: str, values: Sequence[Occurrence]
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
    return _stand_in(read.words[0]) if refers(before[0], target, subject, read.taken()) else None


def _answered(read: Reader, target: Target, subject: str) -> Occurrence | None:
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
    hits = [r for r in asked if refers(r, target, subject, read.taken()) is True]
    if not hits:
        return None
    person = hits[0].persons[0] if hits[0].persons else False
    others = {
        names
        for r in asked
        if r.resolved and not refers(r, target, subject, read.taken())
        for names, is_person in zip(r.candidates, r.persons, strict=True)
        if is_person == person
    }
    return None if others else _stand_in(first)
