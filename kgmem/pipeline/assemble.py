"""Assemble (model): every undeclared term of the pass decided together, as one schema delta.

The model sees all undeclared terms at once (one ``AssembleTerms`` call, so one concept gets
one term) and answers one decision per term. Nothing of it is trusted:

- exactly one decision per term: a term without one is deferred ("no decision"), decisions
  about unknown surfaces and second decisions are ignored (and reported);
- parents, targets, domains and ranges must be terms the user's effective ontology knows,
  of the right kind (a class's parent is a class, a property's range a class or an XSD
  datatype); a merge target must be another term of the pass that is itself declared;
  anything else becomes ``defer`` with the reason;
- the resulting :func:`delta_patch` is planned with
  :meth:`~kgmem.ontology.OntologyService.plan_delta`; a term the ontology refuses (a label
  that duplicates a known term, a cycle) is deferred and the rest planned again.

What each decision does to the drafts and to the patch:

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

Without a model every term is deferred ("no model configured").
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from rdflib import URIRef

from kgmem.errors import ModelOutputError, OntologyError
from kgmem.memory.planning import expand_term
from kgmem.ontology import (
    Align,
    AlignRelation,
    Amend,
    DeclareClass,
    DeclareProperty,
    DeltaOp,
    DeltaPatch,
    EffectiveOntology,
    Provenance,
    TermKind,
    is_delta_term,
)
from kgmem.ontology.vocabulary import local_name_words
from kgmem.pipeline.lm import ModelGroup
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.proposals import SchemaPatch, TermDecision, UndeclaredTerm
from kgmem.pipeline.stages import PassContext, PassState, StageName
from kgmem.pipeline.worklist import PassDraft, Undeclared, Worklist, worklist
from kgmem.vocab import XSD

if TYPE_CHECKING:
    import dspy

__all__ = [
    "NO_DECISION",
    "NO_MODEL",
    "PROPOSER",
    "AssembleStage",
    "CheckedPatch",
    "apply_decisions",
    "check_patch",
    "delta_patch",
    "term_surface",
]

_log = logging.getLogger(__name__)

PROPOSER = "consolidation"  # the provenance of every patch a pass proposes
NO_MODEL = "no model configured"
NO_DECISION = "no decision"
_MAX_USES = 10  # claims shown to the model per term
_KIND = {"class": TermKind.CLASS, "property": TermKind.PROPERTY}
_KEEPS_PLACEHOLDER = ("declare", "restrict")


@dataclass(frozen=True)
class CheckedPatch:
    """The model's patch after the checks: one decision per undeclared term (IRIs in full),
    and what of the answer was not used."""

    decisions: tuple[TermDecision, ...]
    ignored: tuple[str, ...] = ()


def term_surface(term: Undeclared) -> str:
    """How a term is named to the model and in decisions: its placeholder's local name."""
    return term.iri.rsplit("#", 1)[-1]


def _defer(surface: str, reason: str) -> TermDecision:
    return TermDecision(surface=surface, action="defer", reason=reason)


class _Refused(Exception):
    """Why a decision is turned into a deferral."""


_Fields = dict[str, str | None]


def _expand(text: str | None) -> URIRef | None:
    """A CURIE or IRI in full; None for anything with spaces (words are not terms)."""
    text = (text or "").strip()
    return expand_term(text) if text and not any(c.isspace() for c in text) else None


def _iri(effective: EffectiveOntology, text: str | None, kind: TermKind, role: str) -> str:
    iri = _expand(text)
    if iri is None or effective.info(iri).kind is not kind:
        raise _Refused(f"{role} {text!r} is not a known {kind.value}")
    return str(iri)


def _maybe(effective: EffectiveOntology, text: str | None, kind: TermKind, role: str) -> str | None:
    return _iri(effective, text, kind, role) if text else None


def _range(effective: EffectiveOntology, text: str | None) -> str | None:
    """A class, or (for a property of literal values) an XSD datatype."""
    iri = _expand(text)
    if iri is not None and iri.startswith(str(XSD)):
        return str(iri)
    return _maybe(effective, text, TermKind.CLASS, "range")


def _label(term: Undeclared, d: TermDecision) -> str:
    return (d.label or "").strip() or local_name_words(URIRef(term.iri))


def _declare(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    if term.role == "class":
        return {"label": _label(term, d), "parent": _iri(eff, d.parent, TermKind.CLASS, "parent")}
    return {
        "label": _label(term, d),
        "parent": _maybe(eff, d.parent, TermKind.PROPERTY, "parent"),
        "domain": _maybe(eff, d.domain, TermKind.CLASS, "domain"),
        "range": _range(eff, d.range),
    }


def _restrict(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    if term.role != "property":
        raise _Refused("only a property can be restricted")
    if not (d.domain or d.range):
        raise _Refused("a restriction needs a narrower domain or range")
    return {
        "label": _label(term, d),
        "target": _iri(eff, d.target, TermKind.PROPERTY, "target"),
        "domain": _maybe(eff, d.domain, TermKind.CLASS, "domain"),
        "range": _range(eff, d.range),
    }


def _align(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    return {"target": _iri(eff, d.target, _KIND[term.role], "target")}


def _amend(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    kind = _KIND[term.role]
    target = _iri(eff, d.target, kind, "target")
    if not is_delta_term(uid, URIRef(target)):
        raise _Refused(f"target {d.target!r} is not a term of the user's own schema")
    if not (d.label or d.parent):
        raise _Refused("an amendment needs a label or a parent")
    return {"target": target, "label": d.label, "parent": _maybe(eff, d.parent, kind, "parent")}


def _merge(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    return {"target": d.target}  # resolved against the other decisions by _settle_merges


def _keep_reason(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    return {"reason": d.reason or "deferred by the model"}


_CHECKS = {
    "declare": _declare,
    "restrict": _restrict,
    "align": _align,
    "amend": _amend,
    "merge": _merge,
    "defer": _keep_reason,
}


def _vet(uid: str, term: Undeclared, d: TermDecision, effective: EffectiveOntology) -> TermDecision:
    """``d`` with every term as a full IRI, or a deferral that says what is wrong with it."""
    surface = term_surface(term)
    try:
        if not is_delta_term(uid, URIRef(term.iri)):
            raise _Refused(f"{term.iri} is not a placeholder in the user's term namespace")
        fields = _CHECKS[d.action](uid, term, d, effective)
    except _Refused as exc:
        return _defer(surface, f"{d.action} refused: {exc}")
    values = {"surface": surface, "action": d.action, "reason": d.reason, **fields}
    return TermDecision.model_validate(values)


class _Terms:
    """The pass's undeclared terms by every name a model may use for them: the placeholder's
    local name or IRI, the surface words; case-insensitively when that is unambiguous."""

    def __init__(self, terms: Iterable[Undeclared]) -> None:
        self._exact: dict[str, Undeclared] = {}
        folded: dict[str, list[Undeclared]] = {}
        for term in terms:
            for name in (term_surface(term), term.iri, term.surface):
                self._exact.setdefault(name, term)
                group = folded.setdefault(name.casefold(), [])
                group += [] if term in group else [term]
        self._folded = {name: group[0] for name, group in folded.items() if len(group) == 1}

    def get(self, name: str | None) -> Undeclared | None:
        name = (name or "").strip()
        return self._exact.get(name) or self._folded.get(name.casefold())


def _settle_merges(decisions: list[TermDecision], terms: _Terms) -> list[TermDecision]:
    """Merges point at another term of the pass that is declared, by its IRI; else defer."""
    by_surface = {d.surface: d for d in decisions}
    settled = []
    for d in decisions:
        if d.action == "merge":
            d = _merge_into(d, terms, by_surface)
        settled.append(d)
    return settled


def _merge_into(
    d: TermDecision, terms: _Terms, by_surface: Mapping[str, TermDecision]
) -> TermDecision:
    source, other = terms.get(d.surface), terms.get(d.target)
    if other is None or source is None or other is source:
        return _defer(d.surface, f"merge refused: {d.target!r} is not another term of this pass")
    if other.role != source.role:
        return _defer(d.surface, f"merge refused: {d.target!r} is a {other.role}")
    kept = by_surface.get(term_surface(other))
    if kept is None or kept.action not in _KEEPS_PLACEHOLDER:
        action = "no decision" if kept is None else kept.action
        return _defer(d.surface, f"merge refused: {d.target!r} is not declared ({action})")
    return d.model_copy(update={"target": other.iri})


def check_patch(
    uid: str, undeclared: Sequence[Undeclared], patch: SchemaPatch, effective: EffectiveOntology
) -> CheckedPatch:
    """The deterministic checks of the model's patch (see the module docstring)."""
    terms = _Terms(undeclared)
    chosen: dict[str, TermDecision] = {}
    ignored: list[str] = []
    for d in patch.decisions:
        term = terms.get(d.surface)
        if term is None:
            ignored.append(f"{d.surface!r}: not an undeclared term of this pass")
        elif term.iri in chosen:
            ignored.append(f"{d.surface!r}: a second decision about {term_surface(term)}")
        else:
            chosen[term.iri] = d
    decisions = [
        _vet(uid, t, chosen[t.iri], effective)
        if t.iri in chosen
        else _defer(term_surface(t), NO_DECISION)
        for t in undeclared
    ]
    return CheckedPatch(tuple(_settle_merges(decisions, terms)), tuple(ignored))


# -- the schema-delta patch ----------------------------------------------------------------


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
    if d.action in _KEEPS_PLACEHOLDER:  # a property; restrict: a narrower subproperty
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


# -- the drafts ----------------------------------------------------------------------------


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
    """``work`` with ``decisions`` recorded and applied to its drafts (see the table above)."""
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


def _uses(term: Undeclared, work: Worklist) -> list[str]:
    """The claims (and typings) of the pass that use ``term``, as the model is shown them."""
    name, lines = term_surface(term), []
    for item in work.drafts:
        draft = item.draft
        for e in draft.entities:
            if term.iri in e.types:
                lines.append(f"{draft.title}: {e.name} is a {name}")
        for c in draft.claims:
            if c.predicate == term.iri:
                target = c.object if c.object is not None else repr(c.value)
                lines.append(f"{draft.title}: {c.subject} | {name} | {target}")
    return lines[:_MAX_USES]


class AssembleStage:
    """The assemble stage (see the module docstring)."""

    def __init__(self, ports: PassPorts) -> None:
        self._ports = ports

    @property
    def name(self) -> StageName:
        return StageName.ASSEMBLE

    def run(self, ctx: PassContext, state: PassState) -> PassState:
        work = worklist(state, before=StageName.ASSEMBLE)
        if not work.undeclared:
            return state.with_output(StageName.ASSEMBLE, work.to_json())
        lm = self._ports.models.lm(ModelGroup.MEMORY)
        if lm is None:
            decisions = tuple(_defer(term_surface(t), NO_MODEL) for t in work.undeclared)
        else:
            checked = self.decide(ctx.uid, work, lm, ctx.clock.now())
            for note in checked.ignored:
                _log.info("assemble %s: ignored %s", ctx.pass_id, note)
            decisions = checked.decisions
        return state.with_output(StageName.ASSEMBLE, apply_decisions(work, decisions).to_json())

    def decide(self, uid: str, work: Worklist, lm: dspy.LM, at: datetime) -> CheckedPatch:
        """One ``AssembleTerms`` call for every undeclared term of ``work``, checked, and
        planned against the user's schema (refused terms deferred)."""
        from kgmem.pipeline.programs import run_signature
        from kgmem.pipeline.signatures import AssembleTerms

        shown = [
            UndeclaredTerm(
                surface=term_surface(t),
                role=t.role,
                uses=_uses(t, work),
                candidates=list(t.candidates),
            )
            for t in work.undeclared
        ]
        answer = run_signature(AssembleTerms, lm, StageName.ASSEMBLE.value, terms=shown)
        if not isinstance(answer.patch, SchemaPatch):
            raise ModelOutputError(StageName.ASSEMBLE.value, "patch is not a schema patch")
        effective = self._ports.ontology.effective(uid)
        checked = check_patch(uid, work.undeclared, answer.patch, effective)
        planned = self._plan(uid, work, list(checked.decisions), at)
        return CheckedPatch(tuple(planned), checked.ignored)

    def _plan(
        self, uid: str, work: Worklist, decisions: list[TermDecision], at: datetime
    ) -> list[TermDecision]:
        """Defer every decision the ontology refuses; the others plan as one patch."""
        if self._refusal(uid, work, decisions, at) is None:
            return decisions
        # merges add no ops, but the claims they bring decide whether a property is literal
        merges = [d for d in decisions if d.action == "merge"]
        accepted: list[TermDecision] = []
        for index, d in enumerate(decisions):
            if d.action in ("merge", "defer"):
                continue
            reason = self._refusal(uid, work, [*accepted, d, *merges], at)
            if reason is None:
                accepted.append(d)
            else:
                decisions[index] = _defer(d.surface, f"refused by the ontology: {reason}")
        return _settle_merges(decisions, _Terms(work.undeclared))

    def _refusal(
        self, uid: str, work: Worklist, decisions: Sequence[TermDecision], at: datetime
    ) -> str | None:
        patch = delta_patch(uid, work.model_copy(update={"decisions": tuple(decisions)}), at)
        if patch is None:
            return None
        try:
            self._ports.ontology.plan_delta(uid, patch)
        except OntologyError as exc:
            return str(exc)
        return None
