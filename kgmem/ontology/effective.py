"""A user's effective ontology: the terms in use, closed over the hierarchy.

The reasoner and the validator never see the whole catalogue: per user, kgmem takes the
terms the user's graph uses (plus the starter module's), closes them over superclasses,
superproperties, domains, ranges and the disjointness axioms that hold between the
resulting classes (KKO's typology-level unions expanded to pairs), and hands that small
ontology on. Extending it with newly used terms costs only the closure of those terms.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from rdflib import Graph, URIRef

from kgmem.ontology.vocabulary import DisjointnessProof, TermKind, Vocabulary
from kgmem.vocab import OWL, RDF, RDFS

__all__ = ["EffectiveOntology", "TermInfo", "TermStatus", "close_terms"]


class TermStatus(StrEnum):
    CATALOGUE = "catalogue"  # declared by a catalogue ontology
    DELTA = "delta"  # declared by the user's schema delta
    UNKNOWN = "unknown"  # neither: using it needs a vocabulary proposal


@dataclass(frozen=True)
class TermInfo:
    """The typed answer to "is this term known?"."""

    term: URIRef
    status: TermStatus
    kind: TermKind | None = None
    origin: URIRef | None = None  # the graph that declares it
    label: str = ""

    @property
    def known(self) -> bool:
        return self.status is not TermStatus.UNKNOWN


def close_terms(
    vocab: Vocabulary, seeds: Iterable[URIRef]
) -> tuple[frozenset[URIRef], frozenset[URIRef]]:
    """(classes, properties) reachable upward from ``seeds``."""
    classes: set[URIRef] = set()
    properties: set[URIRef] = set()
    for term in seeds:
        kind = vocab.kind_of(term)
        if kind is TermKind.PROPERTY:
            properties |= vocab.super_properties(term)
        elif kind is TermKind.CLASS:
            classes |= vocab.ancestors(term)
    for prop in list(properties):
        info = vocab.properties.get(prop)
        if info is None:
            continue
        for cls in (*info.domains, *info.ranges, *info.domain_includes, *info.range_includes):
            classes |= vocab.ancestors(cls)
    return frozenset(classes), frozenset(properties)


@dataclass(frozen=True)
class EffectiveOntology:
    """The closed term set of one user, answering ontology questions about it."""

    uid: str
    vocabulary: Vocabulary = field(repr=False, compare=False)
    classes: frozenset[URIRef]
    properties: frozenset[URIRef]
    delta_graph: URIRef | None = None

    @classmethod
    def build(
        cls,
        uid: str,
        vocabulary: Vocabulary,
        seeds: Iterable[URIRef],
        delta_graph: URIRef | None = None,
    ) -> EffectiveOntology:
        classes, properties = close_terms(vocabulary, seeds)
        return cls(uid, vocabulary, classes, properties, delta_graph)

    def extend(self, terms: Iterable[URIRef]) -> EffectiveOntology:
        """This ontology plus the closure of ``terms`` (unchanged object if nothing is new)."""
        new = [t for t in terms if t not in self.classes and t not in self.properties]
        if not new:
            return self
        classes, properties = close_terms(self.vocabulary, new)
        return EffectiveOntology(
            self.uid,
            self.vocabulary,
            self.classes | classes,
            self.properties | properties,
            self.delta_graph,
        )

    # -- questions ---------------------------------------------------------------------

    def info(self, term: URIRef) -> TermInfo:
        kind = self.vocabulary.kind_of(term)
        if kind is None:
            return TermInfo(term, TermStatus.UNKNOWN)
        origin = self.vocabulary.origin.get(term)
        status = (
            TermStatus.DELTA
            if origin is not None and origin == self.delta_graph
            else (TermStatus.CATALOGUE)
        )
        return TermInfo(term, status, kind, origin, self.vocabulary.label(term))

    def ancestors(self, cls: URIRef) -> frozenset[URIRef]:
        return self.vocabulary.ancestors(cls)

    def is_subclass(self, a: URIRef, b: URIRef) -> bool:
        return self.vocabulary.is_subclass(a, b)

    def disjointness(self, a: URIRef, b: URIRef) -> DisjointnessProof | None:
        return self.vocabulary.disjointness(a, b)

    def is_functional(self, prop: URIRef) -> bool:
        return self.vocabulary.is_functional(prop)

    def domain(self, prop: URIRef) -> frozenset[URIRef]:
        """Classes every subject of ``prop`` belongs to (rdfs:domain, conjunctive)."""
        info = self.vocabulary.properties.get(prop)
        return frozenset() if info is None else frozenset(info.domains)

    def range(self, prop: URIRef) -> frozenset[URIRef]:
        info = self.vocabulary.properties.get(prop)
        return frozenset() if info is None else frozenset(info.ranges)

    def domain_includes(self, prop: URIRef) -> frozenset[URIRef]:
        """Schema.org's disjunctive domains (a subject belongs to at least one)."""
        info = self.vocabulary.properties.get(prop)
        return frozenset() if info is None else frozenset(info.domain_includes)

    def range_includes(self, prop: URIRef) -> frozenset[URIRef]:
        info = self.vocabulary.properties.get(prop)
        return frozenset() if info is None else frozenset(info.range_includes)

    # -- the materialized ontology -----------------------------------------------------

    def graph(self) -> Graph:
        """The effective ontology as RDF: what a validator is given, and nothing more."""
        g = Graph()
        vocab = self.vocabulary
        for cls in self.classes:
            g.add((cls, RDF.type, OWL.Class))
            for parent in vocab.parents.get(cls, ()):
                g.add((cls, RDFS.subClassOf, parent))
            for other, _axiom in vocab.disjoint.get(cls, {}).items():
                if other in self.classes:
                    g.add((cls, OWL.disjointWith, other))
        for prop in self.properties:
            info = vocab.properties.get(prop)
            if info is None:  # a superproperty no loaded ontology declares
                g.add((prop, RDF.type, RDF.Property))
                continue
            g.add((prop, RDF.type, OWL.ObjectProperty if info.object_property else RDF.Property))
            if info.functional:
                g.add((prop, RDF.type, OWL.FunctionalProperty))
            for parent in info.parents:
                g.add((prop, RDFS.subPropertyOf, parent))
            for d in info.domains:
                g.add((prop, RDFS.domain, d))
            for r in info.ranges:
                g.add((prop, RDFS.range, r))
        return g
