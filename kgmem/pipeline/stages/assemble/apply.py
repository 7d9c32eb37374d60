"""Applying assemble's decisions: to the schema-delta patch and to the pass's drafts.

=========  ==========================================  ====================================
action     drafts use                                  patch ops
=========  ==========================================  ====================================
declare    the placeholder                             DeclareClass / DeclareProperty
restrict   the placeholder                             DeclareProperty, a subproperty of
                                                       the target with the narrower domain
                                                       or range (a pass never narrows a
                                                       term other memories use)
align      the existing target                         none: nothing new to declare
merge      the other term's placeholder                none: the other term is declared
amend      the target (the user's own delta term)      Amend (label), Align (parent)
defer      the placeholder, listed in deferred_terms   none (reconcile makes the memory
                                                       pending with a vocabulary proposal)
=========  ==========================================  ====================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from rdflib import URIRef

from kgmem.ontology import (
    Align,
    AlignRelation,
    Amend,
    DeclareClass,
    DeclareProperty,
    DeltaOp,
    DeltaPatch,
    Provenance,
    is_delta_term,
)
from kgmem.ontology.vocabulary import local_name_words
from kgmem.pipeline.proposals import TermDecision
from kgmem.pipeline.stages.assemble.check import KEEPS_PLACEHOLDER, term_surface
from kgmem.pipeline.worklist import PassDraft, Undeclared, Worklist

__all__ = ["PROPOSER", "apply_decisions", "delta_patch"]

PROPOSER = "consolidation"  # the provenance of every patch a pass proposes


def _literal_valued(term: Undeclared, work: Worklist) -> bool:
    """Whether the property (with the terms merged into it) only ever takes literal values."""
    iris = {term.iri} | {
        t.iri
        for t in work.undeclared
        for d in work.decisions
        if d.surface == term_surface(t) and d.action == "merge" and d.target == term.iri
    }
    claims = [c for item in work.drafts for c in item.draft.claims if c.predicate in iris]
    return bool(claims) and all(c.value is not None for c in claims)


def _ops(term: Undeclared, d: TermDecision, work: Worklist) -> list[DeltaOp]:
    name = term_surface(term)
    label = d.label or local_name_words(URIRef(term.iri))
    if d.action == "declare" and term.role == "class":
        parents = (URIRef(d.parent),) if d.parent else ()
        return [DeclareClass(name, parents, label)]
    if d.action in KEEPS_PLACEHOLDER:  # a property; restrict: a narrower subproperty
        parent = d.target if d.action == "restrict" else d.parent
        return [
            DeclareProperty(
                name,
                label,
                domain=URIRef(d.domain) if d.domain else None,
                range=URIRef(d.range) if d.range else None,
                parents=(URIRef(parent),) if parent else (),
                datatype=_literal_valued(term, work),
            )
        ]
    if d.action == "amend" and d.target:
        target = URIRef(d.target)
        ops: list[DeltaOp] = [Amend(target, label=d.label)] if d.label else []
        if d.parent:
            relation = AlignRelation.SUBCLASS if term.role == "class" else AlignRelation.SUBPROPERTY
            ops.append(Align(target, URIRef(d.parent), relation))
        return ops
    return []  # align, merge: nothing new to declare; defer: the memory waits


def delta_patch(uid: str, work: Worklist, at: datetime) -> DeltaPatch | None:
    """The schema-delta patch of assemble's decisions in ``work`` (deferrals left out), or
    None when they declare or change nothing. Proposed by ``consolidation`` at ``at``."""
    terms = {term_surface(t): t for t in work.undeclared if is_delta_term(uid, URIRef(t.iri))}
    ops = [op for d in work.decisions if (t := terms.get(d.surface)) for op in _ops(t, d, work)]
    return DeltaPatch(tuple(ops), Provenance(PROPOSER, at)) if ops else None


def _rewrite_draft(item: PassDraft, final: Mapping[str, str], deferred: Sequence[str]) -> PassDraft:
    def swap(terms: Iterable[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(final.get(t, t) for t in terms))

    draft = item.draft
    claims = tuple(
        c.model_copy(update={"predicate": final.get(c.predicate, c.predicate)})
        for c in draft.claims
    )
    entities = tuple(e.model_copy(update={"types": swap(e.types)}) for e in draft.entities)
    bindings = {k: b.model_copy(update={"types": swap(b.types)}) for k, b in item.bindings.items()}
    used = {c.predicate for c in claims} | {t for e in entities for t in e.types}
    used |= {t for b in bindings.values() for t in b.types}
    waiting = tuple(dict.fromkeys([*item.deferred_terms, *(t for t in deferred if t in used)]))
    rewritten = draft.model_copy(update={"claims": claims, "entities": entities})
    return item.model_copy(
        update={"draft": rewritten, "bindings": bindings, "deferred_terms": waiting}
    )


def apply_decisions(work: Worklist, decisions: Sequence[TermDecision]) -> Worklist:
    """``work`` with ``decisions`` recorded and applied to its drafts (see the module docstring)."""
    terms = {term_surface(t): t for t in work.undeclared}
    final: dict[str, str] = {}
    deferred: list[str] = []
    for d in decisions:
        term = terms.get(d.surface)
        if term is None:
            continue
        if d.action in ("align", "merge", "amend") and d.target:
            final[term.iri] = d.target
        elif d.action == "defer":
            deferred.append(term.iri)
    drafts = tuple(_rewrite_draft(item, final, deferred) for item in work.drafts)
    return work.model_copy(update={"drafts": drafts, "decisions": tuple(decisions)})
