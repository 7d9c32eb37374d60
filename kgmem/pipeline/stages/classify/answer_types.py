"""What one model answer says its mentions are: a check on the answer, never a fact.

Extract turns each claim of the memory model's answer into a draft of its own (key
``<item>#<n>``: the answer is ``<item>``), so a typing claim ("Lumen Labs | rdf:type |
Organization") travels apart from the claims about what it types, and ground refuses it
when no quote states it. A refused typing is no fact: it never types an entity. It is still
what the same answer said, so classify checks the answer against itself: when the type it
would infer for a mention from a predicate's domain or range is disjoint with every class a
typing of the same answer names for that mention, the proposal contradicts itself and the
draft is dropped (``self_contradictory_type``) rather than stored with a guessed type.

A typing's class is looked up without the model and without proposing anything: the class
its CURIE or IRI names, else the classes it names in the best field it matches (label, then
alternate label, then local name; classify's own choice without a model), all of which
must be disjoint with the inferred type.

A typing that cites the very words a draft cites (a quote of the same source whose span
overlaps one of the draft's) says what the draft's mention of that name is: the answer
speaks of one referent there, as a draft at the foreground gate does with the types of its
entities (which no quote needs to state either). :func:`quoted_types` gives those classes;
classify keeps them on the pass draft (``said``), never as types: they are never written.
But as a draft's types do at the gate, they keep a known entity of a disjoint type apart
("our dog is also called Juno" is not the firm Juno Electrics; "Mercury ..., the planet I
mean" not the message broker), and the gate checks them against the entity a name is tied
to and against what the chat says of it ("my colleague Claire Fontaine", said to be an
organization, is refused as a mislabel). The answer-wide check above stays answer-wide:
two typings of one name in one answer may be two referents, told apart by their quotes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rdflib import URIRef

from kgmem.memory.entities import name_key
from kgmem.memory.model import ClaimDraft, EvidenceDraft
from kgmem.memory.sources import SourceStore
from kgmem.memory.surface import locate_quote
from kgmem.ontology import EffectiveOntology, TermKind
from kgmem.pipeline.terms_match import TermMatcher, as_iri, curie, term_words
from kgmem.pipeline.worklist import Worklist
from kgmem.vocab import RDF

__all__ = [
    "QuoteSpans",
    "answer_of",
    "is_typing",
    "quoted_types",
    "said_classes",
    "said_types",
    "self_contradiction",
]

_TYPING = frozenset({"a", "type", "is a", "is an", "rdf:type", "instance of"})


def is_typing(claim: ClaimDraft) -> bool:
    """Whether ``claim`` types its subject ("a", "is a", ``rdf:type`` ...)."""
    text = " ".join(claim.predicate.lower().split())
    return text in _TYPING or as_iri(claim.predicate) == RDF.type


def answer_of(key: str) -> str:
    """The extract item (one model answer, or one queued draft) a pass draft came from.

    >>> answer_of("chat:c1#003")
    'chat:c1'
    """
    head, _, _ = key.rpartition("#")
    return head or key


def said_types(extracted: Worklist, key: str) -> dict[str, tuple[str, ...]]:
    """Mention name key -> the class surfaces the positive typing claims of ``key``'s answer
    give it, in any of the answer's drafts (``extracted``: extract's worklist, so typings
    ground refused count too)."""
    answer = answer_of(key)
    said: dict[str, list[str]] = {}
    for entry in extracted.drafts:
        if answer_of(entry.key) != answer:
            continue
        for claim in entry.draft.claims:
            named = claim.object if claim.object is not None else claim.value
            if is_typing(claim) and not claim.negated and named and named.strip():
                said.setdefault(name_key(claim.subject), []).append(named.strip())
    return {k: tuple(dict.fromkeys(v)) for k, v in said.items()}


def quoted_types(
    extracted: Worklist, key: str, spans: Callable[[str, str], tuple[int, int] | None]
) -> dict[str, tuple[str, ...]]:
    """Mention name key -> the class surfaces the positive typing claims of ``key``'s answer
    give it citing a quote that overlaps a quote of ``key``'s draft (``spans``: where a
    quote stands in a source, by source and quote; None if not there). ``extracted``:
    extract's worklist, so typings ground refused count too."""
    answer = answer_of(key)
    entries = [e for e in extracted.drafts if answer_of(e.key) == answer]
    mine = next((e for e in entries if e.key == key), None)
    if mine is None:
        return {}
    cited = _cited(mine.draft.evidence, spans)
    said: dict[str, list[str]] = {}
    for entry in entries:
        for claim in entry.draft.claims:
            named = claim.object if claim.object is not None else claim.value
            if not (is_typing(claim) and not claim.negated and named and named.strip()):
                continue
            if any(_overlap(a, b) for a in _cited(entry.draft.evidence, spans) for b in cited):
                said.setdefault(name_key(claim.subject), []).append(named.strip())
    return {k: tuple(dict.fromkeys(v)) for k, v in said.items()}


class QuoteSpans:
    """Where a quote stands in one of ``uid``'s sources (each source read once), for
    :func:`quoted_types`."""

    def __init__(self, sources: SourceStore, uid: str) -> None:
        self._sources, self._uid = sources, uid
        self._texts: dict[str, str | None] = {}

    def __call__(self, source: str, quote: str) -> tuple[int, int] | None:
        if source not in self._texts:
            found = self._sources.get(self._uid, [source])
            self._texts[source] = found[source].text if source in found else None
        text = self._texts[source]
        return None if text is None else locate_quote(text, quote)


_Cited = tuple[str, tuple[int, int]]  # source, span


def _cited(
    evidence: Sequence[EvidenceDraft], spans: Callable[[str, str], tuple[int, int] | None]
) -> list[_Cited]:
    out = []
    for item in evidence:
        span = None if item.quote is None else spans(item.source, item.quote)
        if span is not None:
            out.append((item.source, span))
    return out


def _overlap(a: _Cited, b: _Cited) -> bool:
    return a[0] == b[0] and a[1][0] < b[1][1] and b[1][0] < a[1][1]


def said_classes(
    effective: EffectiveOntology, matcher: TermMatcher, surfaces: Sequence[str]
) -> tuple[URIRef, ...]:
    """The classes typing surfaces name (see the module docstring), each once."""
    return tuple(dict.fromkeys(c for s in surfaces for c in _classes(effective, matcher, s)))


def _classes(effective: EffectiveOntology, matcher: TermMatcher, surface: str) -> list[URIRef]:
    iri = as_iri(surface)
    if iri is not None and effective.info(iri).kind is TermKind.CLASS:
        return [iri]
    matches = matcher.exact(term_words(surface))
    # the best field (label > alternate label > local name) names it, as classify takes it
    return [term for term, tier in matches if tier == matches[0][1]]


def self_contradiction(
    effective: EffectiveOntology,
    matcher: TermMatcher,
    said: Mapping[str, Sequence[str]],
    names: Sequence[str],
    inferred: URIRef,
    end: tuple[URIRef, bool],
) -> str | None:
    """Why typing the mention ``names`` as ``inferred`` (from the domain or range of the
    property at ``end``: the property, and whether the mention is its subject) contradicts
    a typing the answer gives it, all of whose classes are disjoint with ``inferred``; None
    when none does."""
    for name in names:
        for surface in said.get(name_key(name), ()):
            classes = _classes(effective, matcher, surface)
            if classes and all(effective.disjointness(c, inferred) is not None for c in classes):
                prop, subject = end
                role, bound = ("subject", "domain") if subject else ("object", "range")
                return (
                    f"as the {role} of {curie(prop)}, {names[0]!r} would be a {curie(inferred)}"
                    f" (its {bound}), but the same answer says it is a {surface!r}"
                    f" ({curie(classes[0])}), disjoint with that: the proposal contradicts itself"
                )
    return None
