"""Native SHACL validation: compile a shapes graph once, validate small data graphs fast.

kgmem validates every write (a patch plus its touched neighbourhood, a few hundred triples), so
the validator must cost milliseconds, not pySHACL's half a second per call. This module covers
SHACL Core and SHACL-SPARQL constraints (``sh:sparql`` with ``sh:select``); anything else in a
shapes graph is refused with ``ShapeError`` when it is compiled. ``pyshacl_reference`` runs
pySHACL on the same input and returns the same report type: the tests hold the two equal.

Class membership (``sh:class``, ``sh:targetClass``) comes only from the injected
``ClassHierarchy``: a node is an instance of C when one of its ``rdf:type`` values has C among
its reflexive-transitive superclasses. That is what pySHACL computes with
``inference="none"`` from the ``rdfs:subClassOf`` triples of the data graph mixed with
``ont_graph``; ``GraphHierarchy(ontology, data)`` reproduces it exactly.
"""

from __future__ import annotations

from rdflib import Graph, URIRef
from rdflib.namespace import RDFS
from rdflib.term import Node

from kgmem.errors import ShapeError
from kgmem.ontology.shacl_compile import compile_shape, shape_nodes
from kgmem.ontology.shacl_eval import ShapesProgram
from kgmem.ontology.shacl_model import (
    ClassHierarchy,
    Logical,
    Path,
    PropertyRef,
    Shape,
    ValidationReport,
    ValidationResult,
)
from kgmem.ontology.shacl_reference import pyshacl_reference

__all__ = [
    "ClassHierarchy",
    "GraphHierarchy",
    "Path",
    "ShapesProgram",
    "ValidationReport",
    "ValidationResult",
    "compile_shapes",
    "pyshacl_reference",
]


def compile_shapes(shapes: Graph) -> ShapesProgram:
    """Compile every shape of ``shapes``; raise ``ShapeError`` for what cannot be evaluated."""
    compiled = {node: compile_shape(shapes, node) for node in shape_nodes(shapes)}
    _check_acyclic(compiled)
    roots = tuple(s for s in compiled.values() if s.targets and not s.deactivated)
    return ShapesProgram(shapes=compiled, roots=roots)


def _references(shape: Shape) -> list[Node]:
    refs: list[Node] = []
    for c in shape.constraints:
        if isinstance(c, Logical):
            refs.extend(c.shapes)
        elif isinstance(c, PropertyRef):
            refs.append(c.shape)
    return refs


def _check_acyclic(shapes: dict[Node, Shape]) -> None:
    """Recursive shapes have no defined meaning in SHACL 1.0; refuse them."""
    done: set[Node] = set()

    def visit(node: Node, stack: tuple[Node, ...]) -> None:
        if node in stack:
            raise ShapeError(node, "recursive shapes are not supported")
        if node in done:
            return
        for ref in _references(shapes[node]):
            visit(ref, (*stack, node))
        done.add(node)

    for node in shapes:
        visit(node, ())


class GraphHierarchy:
    """``ClassHierarchy`` from the ``rdfs:subClassOf`` triples of one or more rdflib graphs.

    Answers are cached: the graphs are read as they are when a class is first asked about.
    """

    def __init__(self, *graphs: Graph) -> None:
        self._graphs = graphs
        self._cache: dict[URIRef, frozenset[URIRef]] = {}

    def ancestors(self, cls: URIRef) -> frozenset[URIRef]:
        found = self._cache.get(cls)
        if found is None:
            seen = {cls}
            todo = [cls]
            while todo:
                current = todo.pop()
                for graph in self._graphs:
                    for parent in graph.objects(current, RDFS.subClassOf):
                        if isinstance(parent, URIRef) and parent not in seen:
                            seen.add(parent)
                            todo.append(parent)
            found = frozenset(seen)
            self._cache[cls] = found
        return found
