"""Checking assemble's answer: the model's schema patch, trusted in nothing.

:func:`check_patch` turns the model's :class:`~kgmem.pipeline.proposals.SchemaPatch` into
exactly one decision per undeclared term of the pass, every term in it a full IRI:

- a term without a decision is deferred (:data:`NO_DECISION`); decisions about unknown
  surfaces and second decisions are ignored (and reported);
- parents, targets, domains and ranges must be terms the user's effective ontology knows,
  of the right kind (a class's parent is a class, a property's range a class or an XSD
  datatype); only a term of the user's own schema can be amended; anything else becomes
  ``defer`` with the reason;
- a merge target must be another term of the pass, of the same role, that is itself
  declared or restricted (:func:`settle_merges`).

Terms are named to the model by their placeholder's local name (:func:`term_surface`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from rdflib import URIRef

from kgmem.memory.planning import expand_term
from kgmem.ontology import EffectiveOntology, TermKind, is_delta_term
from kgmem.ontology.vocabulary import local_name_words
from kgmem.pipeline.proposals import SchemaPatch, TermDecision
from kgmem.pipeline.terms_match import ROLE_KINDS
from kgmem.pipeline.worklist import Undeclared
from kgmem.vocab import XSD

__all__ = [
    "KEEPS_PLACEHOLDER",
    "NO_DECISION",
    "CheckedPatch",
    "TermNames",
    "check_patch",
    "defer",
    "settle_merges",
    "term_surface",
]

NO_DECISION = "no decision"
#: the actions after which the drafts keep using the term's placeholder
KEEPS_PLACEHOLDER = ("declare", "restrict")


@dataclass(frozen=True)
class CheckedPatch:
    """The model's patch after the checks: one decision per undeclared term (IRIs in full),
    and what of the answer was not used."""

    decisions: tuple[TermDecision, ...]
    ignored: tuple[str, ...] = ()


def term_surface(term: Undeclared) -> str:
    """How a term is named to the model and in decisions: its placeholder's local name."""
    return term.iri.rsplit("#", 1)[-1]


def defer(surface: str, reason: str) -> TermDecision:
    """The decision to defer ``surface``, saying why."""
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
    return {"target": _iri(eff, d.target, ROLE_KINDS[term.role], "target")}


def _amend(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    kind = ROLE_KINDS[term.role]
    target = _iri(eff, d.target, kind, "target")
    if not is_delta_term(uid, URIRef(target)):
        raise _Refused(f"target {d.target!r} is not a term of the user's own schema")
    if not (d.label or d.parent):
        raise _Refused("an amendment needs a label or a parent")
    return {"target": target, "label": d.label, "parent": _maybe(eff, d.parent, kind, "parent")}


def _merge(uid: str, term: Undeclared, d: TermDecision, eff: EffectiveOntology) -> _Fields:
    return {"target": d.target}  # resolved against the other decisions by settle_merges


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
        return defer(surface, f"{d.action} refused: {exc}")
    values = {"surface": surface, "action": d.action, "reason": d.reason, **fields}
    return TermDecision.model_validate(values)


class TermNames:
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


def settle_merges(decisions: list[TermDecision], terms: TermNames) -> list[TermDecision]:
    """Merges point at another term of the pass that is declared, by its IRI; else defer."""
    by_surface = {d.surface: d for d in decisions}
    settled = []
    for d in decisions:
        if d.action == "merge":
            d = _merge_into(d, terms, by_surface)
        settled.append(d)
    return settled


def _merge_into(
    d: TermDecision, terms: TermNames, by_surface: Mapping[str, TermDecision]
) -> TermDecision:
    source, other = terms.get(d.surface), terms.get(d.target)
    if other is None or source is None or other is source:
        return defer(d.surface, f"merge refused: {d.target!r} is not another term of this pass")
    if other.role != source.role:
        return defer(d.surface, f"merge refused: {d.target!r} is a {other.role}")
    kept = by_surface.get(term_surface(other))
    if kept is None or kept.action not in KEEPS_PLACEHOLDER:
        action = "no decision" if kept is None else kept.action
        return defer(d.surface, f"merge refused: {d.target!r} is not declared ({action})")
    return d.model_copy(update={"target": other.iri})


def check_patch(
    uid: str, undeclared: Sequence[Undeclared], patch: SchemaPatch, effective: EffectiveOntology
) -> CheckedPatch:
    """The deterministic checks of the model's patch (see the module docstring)."""
    terms = TermNames(undeclared)
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
        else defer(term_surface(t), NO_DECISION)
        for t in undeclared
    ]
    return CheckedPatch(tuple(settle_merges(decisions, terms)), tuple(ignored))
