"""References → semantic fact: the deterministic rules of periodic consolidation (pure).

References (imported content) cluster by the entities their claims are about: the cluster of
an entity is every active reference with a claim whose subject it is, and a cluster of at least
:data:`MIN_REFERENCES` references yields one semantic fact stating what they say about the
entity *together*: each distinct claim (subject, predicate, object or value, polarity) about
it, once, with the references that make it.

Why the union rather than only the claims every reference repeats: the write gate's pre-pass
folds a draft whose claims an active memory already makes into that memory (DISCARD/MERGE),
so two active references rarely repeat a claim; what a cluster has in common is its entity,
and the fact consolidates what the references say about it. The rule is monotone (a new
reference only adds claims), and only the subject position counts, so a claim is stated by
the cluster of its subject alone ("Acme is located in Berlin" is a fact about Acme, not
about Berlin).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.memory.entities import name_key
from kgmem.memory.model import ClaimDraft, DraftMemory, EntityDraft, MemoryKind
from kgmem.memory.records import ClaimRecord, MemoryRecord
from kgmem.pipeline.periodic.gate import derived_evidence, one_line
from kgmem.pipeline.worklist import EntityBinding

__all__ = ["MIN_REFERENCES", "ClusterClaim", "FactNames", "cluster_claims", "fact_draft"]

#: References a cluster needs: one reference is its own fact already.
MIN_REFERENCES = 2


@dataclass(frozen=True)
class ClusterClaim:
    """A claim about a cluster's entity and the references that make it."""

    claim: ClaimRecord
    references: tuple[URIRef, ...]


def cluster_claims(entity: URIRef, references: Sequence[MemoryRecord]) -> list[ClusterClaim]:
    """The distinct claims about ``entity`` that ``references`` make, ordered by predicate,
    then object or value; empty unless :data:`MIN_REFERENCES` references make one."""
    makers: dict[tuple[object, ...], set[URIRef]] = {}
    first: dict[tuple[object, ...], ClaimRecord] = {}
    for reference in references:
        for claim in reference.claims:
            if claim.subject == entity:
                first.setdefault(claim.key(), claim)
                makers.setdefault(claim.key(), set()).add(reference.iri)
    if len(set().union(*makers.values())) < MIN_REFERENCES:
        return []
    found = [ClusterClaim(first[k], tuple(sorted(makers[k]))) for k in first]
    return sorted(found, key=_order)


def _order(item: ClusterClaim) -> tuple[str, str, bool]:
    claim = item.claim
    return (str(claim.predicate), str(claim.object or claim.value), claim.negated)


class FactNames:
    """The names a fact draft gives the entities of its claims, and the bindings that tie
    each name back to its entity (the user is "I"). A claim naming an entity that has no
    name, or whose name another entity of the draft also has, is left out."""

    def __init__(
        self,
        me: URIRef,
        name_of: Callable[[URIRef], str | None],
        aliases_of: Callable[[URIRef], tuple[str, ...]],
    ) -> None:
        self._me, self._name_of, self._aliases_of = me, name_of, aliases_of
        self._named: dict[str, URIRef] = {}  # name key -> entity
        self._drafts: dict[URIRef, EntityDraft] = {}

    def name(self, entity: URIRef) -> str | None:
        if entity == self._me:
            return "I"
        name = self._name_of(entity)
        if name is None or self._named.setdefault(name_key(name), entity) != entity:
            return None
        if entity not in self._drafts:
            self._drafts[entity] = EntityDraft(name=name, aliases=self._aliases_of(entity))
        return name

    def claim(self, claim: ClaimRecord) -> ClaimDraft | None:
        subject = self.name(claim.subject)
        obj = None if claim.object is None else self.name(claim.object)
        if subject is None or (claim.object is not None and obj is None):
            return None
        return ClaimDraft(
            subject=subject,
            predicate=str(claim.predicate),
            object=obj,
            value=None if claim.value is None else str(claim.value),
            negated=claim.negated,
        )

    def entities(self) -> tuple[EntityDraft, ...]:
        return tuple(self._drafts.values())

    def bindings(self) -> dict[str, EntityBinding]:
        return {
            name_key(draft.name): EntityBinding(name=draft.name, iri=str(iri))
            for iri, draft in self._drafts.items()
        }


def fact_draft(
    subject: str,
    claims: Sequence[ClaimDraft],
    references: Sequence[MemoryRecord],
    names: FactNames,
) -> DraftMemory:
    """The semantic draft stating ``claims`` about ``subject`` that ``references`` make
    together: their evidence as derived support, confidence no higher than theirs."""
    said = "; ".join(_said(c) for c in claims)
    domains = {r.domain for r in references}
    return DraftMemory(
        kind=MemoryKind.SEMANTIC,
        title=one_line(f"{subject}: {said}", 200),
        excerpt=one_line(f"What {len(references)} references say about {subject}", 300),
        body="\n".join(f"- {subject} {_said(c)}" for c in claims),
        confidence=min(r.confidence for r in references),
        domain=domains.pop() if len(domains) == 1 else None,
        entities=names.entities(),
        claims=tuple(claims),
        evidence=derived_evidence(e for r in references for e in r.evidence),
    )


def _said(claim: ClaimDraft) -> str:
    what = claim.object if claim.object is not None else claim.value
    predicate = claim.predicate.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    return f"{'not ' if claim.negated else ''}{predicate} {what}"
