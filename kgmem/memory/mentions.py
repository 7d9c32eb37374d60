"""Whether a quote states a claim: its subject named (by :mod:`kgmem.memory.reader`, or
where :mod:`kgmem.memory.subjects` finds it outside the quote), its object or value stated in
the same sentence, with the claim's polarity, and not only asked; or, for derived support,
whether the quote is about the claim at all. Refusals are :data:`Problem` values, never
exceptions. Also :func:`mentions`: whether a text names a name or an alias.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from kgmem.memory.change import ending_stated
from kgmem.memory.discourse import Ref
from kgmem.memory.model import ClaimDraft
from kgmem.memory.reader import (
    BOOLEAN_FLIPS,
    Mismatch,
    NameBook,
    Occurrence,
    Problem,
    Reader,
    Reading,
    Voice,
    refers,
)
from kgmem.memory.subjects import doubted, subject_outside
from kgmem.memory.surface import (
    FIRST_PERSON,
    Analysis,
    analyse,
    find_phrase,
    phrase,
)

__all__ = ["explicit_mismatches", "mentions", "named_terms", "related_mismatches"]


def mentions(text: str, name: str, aliases: Iterable[str] = ()) -> bool:
    """Whether ``text`` names ``name`` or one of its ``aliases`` as whole words.

    >>> mentions("Bob's peanut allergy", "bob")
    True
    >>> mentions("Bobby called", "Bob")
    False
    """
    words = analyse(text).words()
    return any(find_phrase(words, phrase(candidate)) for candidate in (name, *aliases))


def _negative_sense(predicate: str) -> bool:
    """A predicate that a negated clause states ("dislikes": "I don't eat X")."""
    local = re.split(r"[#/:]", predicate)[-1].casefold()
    return local.startswith(("dislike", "avoid", "hate"))


def explicit_mismatches(
    claim: ClaimDraft,
    doc: Analysis,
    span: tuple[int, int],
    book: NameBook,
    voice: Voice,
    speaker: str | None = None,
    reading: Reading | None = None,
    supplied: Iterable[str] = (),
) -> list[Problem]:
    """Why ``doc.text[span]`` does not state ``claim`` (empty: it does). ``supplied``: the
    claim's terms (names or value) that the reply to this question names."""
    read = Reader(doc, doc.words(*span), book, voice, speaker, span, reading, frozenset(supplied))
    what = "object" if claim.object is not None else "value"
    values = read.named(claim.object) if claim.object is not None else read.valued(claim)
    subjects = read.named(claim.subject)
    doubt = doubted(read, claim.subject, values, subjects)
    if doubt is not None:
        return [doubt]
    if not subjects:
        outside, problem = subject_outside(read, claim.subject, values)
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
    wanted = claim.negated != BOOLEAN_FLIPS.get((claim.value or "").strip().casefold(), False)
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
    owners = [_owner(read, occ) for occ in polar]
    # only a subject the speaker's "I" or no word names: "Molinos supplies our flour" names
    # its supplier, whoever the flour is for
    by_speaker = all(o[0].start == o[0].end or o[0].norm in FIRST_PERSON for o in subjects)
    describes = re.split(r"[#/:]", claim.predicate)[-1] in _DESCRIBING
    if describes and by_speaker and all(o is not None for o in owners):
        # "I'm in awe of your courage": the courage is the addressee's, not the speaker's
        owner = next(o for o in owners if o is not None)
        if not refers(owner, read.book.resolve(claim.subject), claim.subject, read.taken()):
            why = f"says it of {owner.text!r}, not of {claim.subject!r}"
            return [(Mismatch.SUBJECT, "subject", why)]
    return []


#: "it's", "that's", "he's": a pronoun's 's is "is" or "has", never whose
_IS_NOT_OWNS = frozenset(
    {"it", "that", "he", "she", "there", "here", "what", "who", "where", "let"}
)

#: predicates whose value describes the subject itself ("remembers her first steps" is the
#: speaker's remembering, whoever the steps are)
_DESCRIBING = frozenset({"description", "disambiguatingDescription", "comment", "jobTitle"})

#: whose a noun phrase is ("your courage", "everyone's unity", "their potential")
_OWNERS = frozenset({"your", "his", "her", "their", "its", "our", "my"})


def _owner(read: Reader, occ: Occurrence) -> Ref | None:
    """The possessive right before a value, whose the value is: "your [support]", "Maria's
    [help]"."""
    if read.reading is None:
        return None
    before = [t for t in read.doc.tokens if t.end <= occ[0].start and t.sentence == occ[0].sentence]
    if not before:
        return None
    last = before[-1]
    possessive = last.norm in _OWNERS or (
        last.norm.endswith("'s") and last.norm[:-2] not in _IS_NOT_OWNS
    )
    after = [t for t in read.doc.tokens if t.start >= occ[-1].end][:1]
    # "it's our bookkeeping service", "my coach is Sara": the value is what the subject is
    equated = (len(before) > 1 and _copula(before[-2].norm)) or (after and _copula(after[0].norm))
    if not possessive or equated:
        return None
    ref = next((r for r in read.reading.refs() if r.start <= last.start < r.end), None)
    return None if ref is None or ref.end > occ[0].start else ref  # "my [horse] painting"


def _copula(word: str) -> bool:
    return word in {"is", "are", "was", "were", "be", "been", "am"} or word.endswith(("'s", "'re"))


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
    read = Reader(doc, doc.words(*span), book, voice, speaker, span, reading)
    terms = [t for t in (claim.subject, claim.object) if t is not None and read.named(t)]
    if claim.value is not None and claim.value.strip().casefold() not in BOOLEAN_FLIPS:
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
) -> list[Problem]:
    """Derived/inferred support need not state the claim, but must be about it."""
    read = Reader(doc, doc.words(*span), book, voice, speaker, span, reading)
    terms = [claim.subject] + ([claim.object] if claim.object is not None else [])
    if any(read.named(term) for term in terms) or (claim.value and read.valued(claim)):
        return []
    return [(Mismatch.UNRELATED, "quote", "names neither the subject nor the object/value")]
