"""Compiled SHACL shapes: paths, constraints, shapes, and the validation report types.

Everything here is a frozen dataclass built once by ``shacl_compile`` and read by
``shacl_eval``; nothing refers back to the rdflib shapes graph.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from rdflib import Literal, URIRef
from rdflib.namespace import SH
from rdflib.term import Node

__all__ = [
    "AllowedProperties",
    "AlternativePath",
    "Bound",
    "Cardinality",
    "ClassHierarchy",
    "Constraint",
    "DatatypeIs",
    "HasValue",
    "InstanceOf",
    "InversePath",
    "KindIs",
    "LanguageIn",
    "LanguageUnique",
    "Length",
    "Logical",
    "Matches",
    "OneOf",
    "OneOrMorePath",
    "Path",
    "PropertyPair",
    "PropertyRef",
    "SequencePath",
    "Shape",
    "SparqlConstraint",
    "Targets",
    "ValidationReport",
    "ValidationResult",
    "ValueTest",
    "ZeroOrMorePath",
    "ZeroOrOnePath",
]


class ClassHierarchy(Protocol):
    """Where class membership comes from: the reflexive-transitive superclasses of a class."""

    def ancestors(self, cls: URIRef) -> frozenset[URIRef]: ...


# -- paths -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class InversePath:
    path: Path


@dataclass(frozen=True)
class SequencePath:
    steps: tuple[Path, ...]


@dataclass(frozen=True)
class AlternativePath:
    options: tuple[Path, ...]


@dataclass(frozen=True)
class ZeroOrMorePath:
    path: Path


@dataclass(frozen=True)
class OneOrMorePath:
    path: Path


@dataclass(frozen=True)
class ZeroOrOnePath:
    path: Path


#: A SHACL property path; a predicate path is just its IRI.
Path = (
    URIRef
    | InversePath
    | SequencePath
    | AlternativePath
    | ZeroOrMorePath
    | OneOrMorePath
    | ZeroOrOnePath
)


# -- constraints -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DatatypeIs:
    datatype: URIRef
    component: URIRef = SH.DatatypeConstraintComponent


@dataclass(frozen=True)
class InstanceOf:
    cls: URIRef
    component: URIRef = SH.ClassConstraintComponent


@dataclass(frozen=True)
class KindIs:
    """sh:nodeKind, compiled to the set of kinds allowed: "iri", "bnode", "literal"."""

    kinds: frozenset[str]
    component: URIRef = SH.NodeKindConstraintComponent


@dataclass(frozen=True)
class OneOf:
    values: frozenset[Node]
    component: URIRef = SH.InConstraintComponent


@dataclass(frozen=True)
class Bound:
    """sh:minInclusive and friends: ``order`` is the allowed signs of compare(value, limit)."""

    limit: Literal
    order: frozenset[int]
    component: URIRef


@dataclass(frozen=True)
class Length:
    limit: int
    is_max: bool
    component: URIRef


@dataclass(frozen=True)
class Matches:
    regex: re.Pattern[str]
    component: URIRef = SH.PatternConstraintComponent


@dataclass(frozen=True)
class LanguageIn:
    ranges: tuple[str, ...]
    component: URIRef = SH.LanguageInConstraintComponent


#: Constraints checked on each value node alone.
ValueTest = DatatypeIs | InstanceOf | KindIs | OneOf | Bound | Length | Matches | LanguageIn


@dataclass(frozen=True)
class Cardinality:
    component: URIRef
    minimum: int | None
    maximum: int | None


@dataclass(frozen=True)
class HasValue:
    value: Node
    component: URIRef = SH.HasValueConstraintComponent


@dataclass(frozen=True)
class LanguageUnique:
    component: URIRef = SH.UniqueLangConstraintComponent


@dataclass(frozen=True)
class Logical:
    """sh:node, sh:not, sh:and, sh:or, sh:xone: each value node against other shapes."""

    component: URIRef
    shapes: tuple[Node, ...]


@dataclass(frozen=True)
class PropertyRef:
    """sh:property: each value node is a focus node of the property shape."""

    shape: Node
    component: URIRef = SH.PropertyConstraintComponent


@dataclass(frozen=True)
class PropertyPair:
    """sh:equals, sh:disjoint, sh:lessThan, sh:lessThanOrEquals."""

    component: URIRef
    other: URIRef


@dataclass(frozen=True)
class AllowedProperties:
    """sh:closed true: the predicates a focus node may have."""

    allowed: frozenset[URIRef]
    component: URIRef = SH.ClosedConstraintComponent


@dataclass(frozen=True)
class SparqlConstraint:
    """One sh:sparql SELECT, with prefixes applied and $PATH substituted.

    ``head`` ends with the opening brace of the WHERE clause, so the evaluator can insert a
    VALUES block for the pre-bound variables between ``head`` and ``tail``.
    """

    node: Node
    head: str
    tail: str
    uses_current_shape: bool
    message: Literal | None
    component: URIRef = SH.SPARQLConstraintComponent
    # the predicates its triple patterns and paths name; None when one is a variable or a
    # negated set (it may match any triple)
    predicates: frozenset[URIRef] | None = None


Constraint = (
    ValueTest
    | Cardinality
    | HasValue
    | LanguageUnique
    | Logical
    | PropertyRef
    | PropertyPair
    | AllowedProperties
    | SparqlConstraint
)


# -- shapes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Targets:
    classes: frozenset[URIRef] = frozenset()
    nodes: frozenset[Node] = frozenset()
    subjects_of: frozenset[URIRef] = frozenset()
    objects_of: frozenset[URIRef] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.classes or self.nodes or self.subjects_of or self.objects_of)


@dataclass(frozen=True)
class Shape:
    """A node shape (``path is None``) or a property shape, compiled."""

    node: Node
    path: Path | None
    targets: Targets
    constraints: tuple[Constraint, ...]
    severity: URIRef
    message: str | None
    deactivated: bool


# -- report ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ValidationResult:
    focus_node: Node
    result_path: Path | None
    value: Node | None
    source_shape: Node
    constraint_component: URIRef
    severity: URIRef
    message: str | None


@dataclass(frozen=True)
class ValidationReport:
    conforms: bool
    results: tuple[ValidationResult, ...]
