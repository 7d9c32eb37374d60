"""A user's schema delta: the vocabulary the catalogue lacks, added explicitly.

Every change is an operation in a :class:`DeltaPatch` with provenance (a person or a
consolidation pass). :func:`plan_patch` checks the whole patch against the user's current
vocabulary (catalogue + delta) — parents must be known, a new term must not duplicate a
known one, no subclass cycle may appear, only the user's own terms may be amended — and
returns the quads to commit plus the vocabulary as it would be, so validation can test the
schema change and the instance change together before anything is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from hashlib import sha256

from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import DeltaConflict, DeltaCycle, TermCollision, UnknownTerm
from kgmem.ontology.search import TermIndex
from kgmem.ontology.vocabulary import TermKind, Vocabulary
from kgmem.store import Quad, check_id
from kgmem.vocab import KGM, OWL, RDF, RDFS, SKOS

__all__ = [
    "Align",
    "AlignRelation",
    "Amend",
    "DeclareClass",
    "DeclareProperty",
    "Defer",
    "DeltaOp",
    "DeltaPatch",
    "DeltaPlan",
    "Merge",
    "Provenance",
    "Restrict",
    "delta_term",
    "is_delta_term",
    "plan_patch",
]

_BASE = "https://w3id.org/kgmem/user/"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def delta_term(uid: str, name: str) -> URIRef:
    """The IRI of ``name`` in ``uid``'s delta namespace."""
    if not _NAME.fullmatch(name):
        raise DeltaConflict(
            name, "a term name is 1-64 letters, digits or _ and starts with a letter"
        )
    return URIRef(f"{_BASE}{check_id(uid, 'user id')}/terms#{name}")


def is_delta_term(uid: str, term: URIRef) -> bool:
    return str(term).startswith(f"{_BASE}{uid}/terms#")


class AlignRelation(StrEnum):
    SUBCLASS = "subClassOf"
    EQUIVALENT = "equivalentClass"
    SUBPROPERTY = "subPropertyOf"


@dataclass(frozen=True)
class DeclareClass:
    name: str
    parents: tuple[URIRef, ...]
    label: str
    definition: str = ""


@dataclass(frozen=True)
class DeclareProperty:
    name: str
    label: str
    domain: URIRef | None = None
    range: URIRef | None = None
    parents: tuple[URIRef, ...] = ()
    functional: bool = False
    datatype: bool = False
    definition: str = ""


@dataclass(frozen=True)
class Align:
    term: URIRef
    target: URIRef
    relation: AlignRelation = AlignRelation.SUBCLASS


@dataclass(frozen=True)
class Restrict:
    prop: URIRef
    domain: URIRef | None = None
    range: URIRef | None = None


@dataclass(frozen=True)
class Amend:
    term: URIRef
    label: str | None = None
    definition: str | None = None


@dataclass(frozen=True)
class Merge:
    """``source`` (a delta term) is folded into ``target``: same meaning, one name kept."""

    source: URIRef
    target: URIRef


@dataclass(frozen=True)
class Defer:
    name: str
    reason: str


DeltaOp = DeclareClass | DeclareProperty | Align | Restrict | Amend | Merge | Defer


@dataclass(frozen=True)
class Provenance:
    """Who proposed a patch: ``user:<id>`` or ``pass:<id>``, and when."""

    proposer: str
    at: datetime


@dataclass(frozen=True)
class DeltaPatch:
    ops: tuple[DeltaOp, ...]
    provenance: Provenance


@dataclass(frozen=True)
class DeltaPlan:
    """What committing a patch writes, and the vocabulary as it will then be."""

    quads: tuple[Quad, ...]
    vocabulary: Vocabulary
    terms: tuple[URIRef, ...]


def plan_patch(
    uid: str, vocab: Vocabulary, index: TermIndex | None, patch: DeltaPatch, graph: URIRef
) -> DeltaPlan:
    """Check ``patch`` against ``vocab`` and return its plan; raise on the first bad op."""
    planner = _Planner(uid, vocab.copy(), index, patch.provenance, graph)
    for position, op in enumerate(patch.ops):
        planner.apply(position, op)
    return DeltaPlan(tuple(planner.quads), planner.vocab, tuple(planner.terms))


class _Planner:
    def __init__(
        self,
        uid: str,
        vocab: Vocabulary,
        index: TermIndex | None,
        provenance: Provenance,
        graph: URIRef,
    ) -> None:
        self.uid, self.vocab, self.index = uid, vocab, index
        self.provenance, self.graph = provenance, graph
        self.quads: list[Quad] = []
        self.terms: list[URIRef] = []
        self._digest = sha256(f"{provenance.proposer}{provenance.at.isoformat()}".encode())

    def add(self, s: URIRef, p: URIRef, o: URIRef | Literal) -> None:
        self.quads.append(Quad(s, p, o, self.graph))

    def record(self, position: int, operation: str, term: URIRef, reason: str = "") -> URIRef:
        self._digest.update(f"{position}{operation}{term}".encode())
        change = URIRef(f"{_BASE}{self.uid}/changes#{self._digest.hexdigest()[:16]}")
        self.add(change, RDF.type, KGM.SchemaChange)
        self.add(change, KGM.changeOperation, Literal(operation))
        self.add(change, KGM.changedTerm, term)
        self.add(change, KGM.proposedBy, Literal(self.provenance.proposer))
        self.add(change, KGM.changedAt, Literal(self.provenance.at, datatype=XSD.dateTime))
        if reason:
            self.add(change, KGM.changeReason, Literal(reason))
        self.terms.append(term)
        return change

    def apply(self, position: int, op: DeltaOp) -> None:
        handlers = {
            DeclareClass: self.declare_class,
            DeclareProperty: self.declare_property,
            Align: self.align,
            Restrict: self.restrict,
            Amend: self.amend,
            Merge: self.merge,
            Defer: self.defer,
        }
        handlers[type(op)](position, op)  # type: ignore[operator]

    # -- checks --------------------------------------------------------------------------

    def known(self, term: URIRef, role: str, kind: TermKind | None = None) -> None:
        found = self.vocab.kind_of(term)
        if found is None or (kind is not None and found is not kind):
            raise UnknownTerm(str(term), role if kind is None else f"{role} ({kind.value})")

    def own(self, term: URIRef) -> None:
        if not is_delta_term(self.uid, term):
            raise DeltaConflict(str(term), "only the user's own delta terms can be changed")
        self.known(term, "delta term")

    def fresh(self, name: str, label: str) -> URIRef:
        term = delta_term(self.uid, name)
        if self.vocab.kind_of(term) is not None:
            raise DeltaConflict(str(term), "is already declared")
        if self.index is not None:
            for text in (label, name):
                clash = self.index.exact(text)
                if clash:
                    raise TermCollision(text, str(clash[0]))
        return term

    def no_cycle(self, child: URIRef, parent: URIRef) -> None:
        if child in self.vocab.ancestors(parent):
            path = self.vocab.path_up(parent, child)
            raise DeltaCycle(str(child), tuple(str(t) for t in (child, *path)))

    # -- operations ----------------------------------------------------------------------

    def declare_class(self, position: int, op: DeclareClass) -> None:
        if not op.parents:
            raise DeltaConflict(op.name, "a class needs a parent in the catalogue or delta")
        term = self.fresh(op.name, op.label)
        for parent in op.parents:
            self.known(parent, "parent", TermKind.CLASS)
        change = self.record(position, "declareClass", term)
        self.add(term, RDF.type, OWL.Class)
        self.add(term, RDFS.label, Literal(op.label))
        self.add(term, KGM.declaredBy, change)
        if op.definition:
            self.add(term, SKOS.definition, Literal(op.definition))
        self.vocab.declare(term, OWL.Class, self.graph)
        self.vocab.labels[term].append(op.label)
        for parent in op.parents:
            self.add(term, RDFS.subClassOf, parent)
            self.vocab.add_subclass(term, parent)

    def declare_property(self, position: int, op: DeclareProperty) -> None:
        term = self.fresh(op.name, op.label)
        for parent in op.parents:
            self.known(parent, "superproperty", TermKind.PROPERTY)
        for cls, role in ((op.domain, "domain"), (op.range, "range")):
            if cls is not None and not (op.datatype and role == "range"):
                self.known(cls, role, TermKind.CLASS)
        change = self.record(position, "declareProperty", term)
        kind = OWL.DatatypeProperty if op.datatype else OWL.ObjectProperty
        self.add(term, RDF.type, kind)
        self.add(term, RDFS.label, Literal(op.label))
        self.add(term, KGM.declaredBy, change)
        self.vocab.declare(term, kind, self.graph)
        self.vocab.labels[term].append(op.label)
        info = self.vocab.property(term)
        if op.functional:
            self.add(term, RDF.type, OWL.FunctionalProperty)
            info.functional = True
        if op.definition:
            self.add(term, SKOS.definition, Literal(op.definition))
        for parent in op.parents:
            self.add(term, RDFS.subPropertyOf, parent)
            info.parents.add(parent)
        self._domain_range(term, op.domain, op.range)

    def _domain_range(self, term: URIRef, domain: URIRef | None, rng: URIRef | None) -> None:
        info = self.vocab.property(term)
        if domain is not None:
            self.add(term, RDFS.domain, domain)
            info.domains.add(domain)
        if rng is not None:
            self.add(term, RDFS.range, rng)
            info.ranges.add(rng)

    def align(self, position: int, op: Align) -> None:
        self.own(op.term)
        if op.relation is AlignRelation.SUBPROPERTY:
            self.known(op.term, "property", TermKind.PROPERTY)
            self.known(op.target, "superproperty", TermKind.PROPERTY)
            self.add(op.term, RDFS.subPropertyOf, op.target)
            self.vocab.property(op.term).parents.add(op.target)
        else:
            self.known(op.target, "target", TermKind.CLASS)
            self.no_cycle(op.term, op.target)
            predicate = (
                RDFS.subClassOf if op.relation is AlignRelation.SUBCLASS else (OWL.equivalentClass)
            )
            self.add(op.term, predicate, op.target)
            self.vocab.add_subclass(op.term, op.target)
            if op.relation is AlignRelation.EQUIVALENT:  # both ways, as the store reads it
                self.vocab.add_subclass(op.target, op.term)
        self.record(position, f"align:{op.relation.value}", op.term)

    def restrict(self, position: int, op: Restrict) -> None:
        self.own(op.prop)
        self.known(op.prop, "property", TermKind.PROPERTY)
        for cls, role in ((op.domain, "domain"), (op.range, "range")):
            if cls is not None:
                self.known(cls, role, TermKind.CLASS)
        self.record(position, "restrict", op.prop)
        self._domain_range(op.prop, op.domain, op.range)

    def amend(self, position: int, op: Amend) -> None:
        self.own(op.term)
        self.record(position, "amend", op.term)
        if op.label is not None:
            self.add(op.term, SKOS.altLabel, Literal(op.label))
            self.vocab.labels[op.term].insert(0, op.label)
        if op.definition is not None:
            self.add(op.term, SKOS.definition, Literal(op.definition))

    def merge(self, position: int, op: Merge) -> None:
        self.own(op.source)
        self.own(op.target)
        if op.source == op.target:
            raise DeltaConflict(str(op.source), "cannot be merged into itself")
        self.record(position, "merge", op.source)
        self.add(op.source, KGM.replacedBy, op.target)
        self.add(op.source, OWL.deprecated, Literal(True))
        equivalent = (
            OWL.equivalentProperty
            if self.vocab.kind_of(op.source) is TermKind.PROPERTY
            else OWL.equivalentClass
        )
        self.add(op.source, equivalent, op.target)
        if equivalent == OWL.equivalentClass:
            self.vocab.add_subclass(op.source, op.target)
            self.vocab.add_subclass(op.target, op.source)

    def defer(self, position: int, op: Defer) -> None:
        term = delta_term(self.uid, op.name)
        self.record(position, "defer", term, op.reason)
        self.add(term, RDF.type, KGM.DeferredTerm)
        self.add(term, KGM.changeReason, Literal(op.reason))
