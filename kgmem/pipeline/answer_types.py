"""What one model answer says its mentions are: a consistency check for classify, never a fact.

Extract turns each claim of the memory model's answer into a draft of its own (key
``<item>#<n>``: the answer is ``<item>``), so a typing claim ("Lumen Labs | rdf:type |
Organization") travels apart from the claims about what it types, and ground refuses it
when no quote states it. A refused typing is no fact: it never types an entity and never
sets a known one aside. It is still what the same answer said, so classify checks the
answer against itself: when the type it would infer for a mention from a predicate's domain
or range is disjoint with every class a typing of the same answer names for that mention,
the proposal contradicts itself and the draft is dropped (``self_contradictory_type``)
rather than stored with a guessed type.

A typing's class is looked up without the model and without proposing anything: the class
its CURIE or IRI names, else the classes it names in the best field it matches (label, then
alternate label, then local name; classify's own choice without a model), all of which
must be disjoint with the inferred type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rdflib import URIRef

from kgmem.memory.entities import name_key
from kgmem.memory.model import ClaimDraft
from kgmem.ontology import EffectiveOntology, TermKind
from kgmem.pipeline.terms_match import TermMatcher, as_iri, curie, term_words
from kgmem.pipeline.worklist import Worklist
from kgmem.vocab import RDF

__all__ = ["answer_of", "is_typing", "said_types", "self_contradiction"]

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
