"""The typed result of validating a patch: one :class:`Violation` per finding."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rdflib import URIRef
from rdflib.term import Node

from kgmem.ontology.vocabulary import DisjointnessProof

__all__ = ["PatchReport", "Violation", "ViolationKind"]


class ViolationKind(StrEnum):
    SHACL = "shacl"  # a shape's constraint
    DISJOINT = "disjoint"  # one node typed with two disjoint classes
    FUNCTIONAL = "functional"  # two values of a single-valued property
    DOMAIN = "domain"  # the subject's type is disjoint with the property's domain
    RANGE = "range"  # the object's type is disjoint with the range, or literal vs node
    SCHEMA = "schema"  # the schema-delta patch itself is refused


@dataclass(frozen=True)
class Violation:
    focus: Node
    kind: ViolationKind
    constraint: URIRef | str  # sh:…ConstraintComponent, owl:disjointWith, …
    path: Node | None
    value: Node | None
    message: str
    source_shape: Node | None = None
    proof: DisjointnessProof | None = None


@dataclass(frozen=True)
class PatchReport:
    violations: tuple[Violation, ...]
    focus_nodes: tuple[Node, ...]
    data_triples: int

    @property
    def conforms(self) -> bool:
        return not self.violations

    def for_node(self, node: Node) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.focus == node)
