"""The terms a vocabulary holds: kinds, disjointness axioms and their proofs, what is known
about a property, and words for a term that has no label."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from rdflib import URIRef

__all__ = [
    "DisjointAxiom",
    "DisjointnessProof",
    "PropertyInfo",
    "TermKind",
    "copy_property",
    "local_name_words",
]


class TermKind(StrEnum):
    CLASS = "class"
    PROPERTY = "property"


@dataclass(frozen=True)
class DisjointAxiom:
    """One stated disjointness between two named classes."""

    a: URIRef
    b: URIRef
    kind: str  # disjointWith | disjointWithUnion | AllDisjointClasses | delta
    graph: URIRef

    def describe(self) -> str:
        if self.kind == "disjointWithUnion":
            return f"{self.a} owl:disjointWith a union containing {self.b} ({self.graph})"
        if self.kind == "AllDisjointClasses":
            return f"owl:AllDisjointClasses lists {self.a} and {self.b} ({self.graph})"
        return f"{self.a} owl:disjointWith {self.b} ({self.graph})"


@dataclass(frozen=True)
class DisjointnessProof:
    """Why two classes cannot share an instance: ``a ⊑ … ⊑ x``, ``x ⊥ y``, ``b ⊑ … ⊑ y``."""

    a_path: tuple[URIRef, ...]
    b_path: tuple[URIRef, ...]
    axiom: DisjointAxiom

    def explain(self) -> str:
        up_a = " ⊑ ".join(self.a_path)
        up_b = " ⊑ ".join(self.b_path)
        return f"{up_a}; {up_b}; {self.axiom.describe()}"


@dataclass
class PropertyInfo:
    """What the view knows about one property."""

    iri: URIRef
    domains: set[URIRef] = field(default_factory=set)  # rdfs:domain: all of them hold
    ranges: set[URIRef] = field(default_factory=set)
    domain_includes: set[URIRef] = field(default_factory=set)  # schema.org: any one holds
    range_includes: set[URIRef] = field(default_factory=set)
    parents: set[URIRef] = field(default_factory=set)
    functional: bool = False
    object_property: bool = False
    datatype_property: bool = False


def copy_property(info: PropertyInfo) -> PropertyInfo:
    return PropertyInfo(
        info.iri,
        set(info.domains),
        set(info.ranges),
        set(info.domain_includes),
        set(info.range_includes),
        set(info.parents),
        info.functional,
        info.object_property,
        info.datatype_property,
    )


def local_name_words(term: URIRef) -> str:
    """``rc:ChemicalElement`` → ``chemical element``.

    >>> local_name_words(URIRef("http://kbpedia.org/kko/rc/Victim-UnfortunatePerson"))
    'victim unfortunate person'
    """
    name = str(term).rstrip("/#")
    name = name.rsplit("#", 1)[-1].rsplit("/", 1)[-1]
    words: list[str] = []
    current = ""
    for i, ch in enumerate(name):
        boundary = (
            ch.isupper()
            and current
            and (not current[-1].isupper() or (i + 1 < len(name) and name[i + 1].islower()))
        )
        if not ch.isalnum():
            boundary, ch = True, ""
        if boundary and current:
            words.append(current)
            current = ""
        current += ch
    if current:
        words.append(current)
    return " ".join(w.lower() for w in words)
