"""Approving a memory that waits for vocabulary: its undeclared terms are decided first.

A pending memory with ``needs_terms`` uses terms the user's effective ontology does not
declare; it waits for a vocabulary decision. Approving it must never leave an active memory
using an undeclared term, so approval decides each term through the user's schema delta,
the same path consolidation's assemble stage takes (:class:`~kgmem.ontology.DeltaPatch`,
checked by the ontology and validated with the activation):

- a term declared since (by a later pass, a catalogue install) needs nothing;
- a term of the user's own namespace that the memory uses as a claim predicate is declared
  as a property of the user's (a datatype property when its claims have values, else an
  object property; no domain or range is guessed), proposed by the user, with the memory
  named in the reason;
- any other term cannot be declared by approving a memory: a class would need a parent,
  which would be a guess, and the delta declares only the user's own terms. Approval is
  then refused with :class:`~kgmem.errors.UndeclaredTerms` naming them, and nothing changes.
"""

from __future__ import annotations

from datetime import datetime

from rdflib import URIRef

from kgmem.errors import UndeclaredTerms
from kgmem.memory.records import MemoryRecord
from kgmem.ontology import (
    DeclareProperty,
    DeltaPatch,
    EffectiveOntology,
    Provenance,
    TermKind,
    is_delta_term,
)
from kgmem.ontology.vocabulary import local_name_words

__all__ = ["undeclared_terms", "vocabulary_patch"]

_DECLARED = (TermKind.PROPERTY, TermKind.CLASS)


def undeclared_terms(record: MemoryRecord, effective: EffectiveOntology) -> list[URIRef]:
    """The terms ``record`` waits for, and any claim predicate, that ``effective`` does not
    declare (as a property, for a predicate)."""
    out = [t for t in record.needs_terms if effective.info(t).kind not in _DECLARED]
    for claim in record.claims:
        kind = effective.info(claim.predicate).kind
        if kind is not TermKind.PROPERTY and claim.predicate not in out:
            out.append(claim.predicate)
    return out


def vocabulary_patch(
    uid: str, record: MemoryRecord, effective: EffectiveOntology, at: datetime
) -> DeltaPatch | None:
    """The schema-delta patch that declares what approving ``record`` needs (None: nothing
    to declare); raises :class:`UndeclaredTerms` naming the terms approval cannot declare."""
    ops: list[DeclareProperty] = []
    refused: list[URIRef] = []
    for term in undeclared_terms(record, effective):
        claims = [c for c in record.claims if c.predicate == term]
        name = str(term).rsplit("#", 1)[-1]
        if claims and is_delta_term(uid, term):
            datatype = all(c.value is not None for c in claims)
            ops.append(DeclareProperty(name, local_name_words(term) or name, datatype=datatype))
        else:
            refused.append(term)
    if refused:
        raise UndeclaredTerms(str(record.iri), tuple(str(t) for t in refused))
    if not ops:
        return None
    return DeltaPatch(tuple(ops), Provenance(f"user:{uid}", at))
