"""The validation service: a schema-delta patch and an instance patch, tested together.

Validation is scoped: the data graph is the patch plus its touched neighbourhood (the
existing triples of the nodes it writes, and of the nodes those point to), and only the
nodes the patch writes are focus nodes, so the cost follows the patch, not the store. On
top of the SHACL shapes (core + ``shapes/`` files) it checks what shapes cannot see: an
entity typed with two disjoint classes, two values of a functional property, a subject or
object whose type is disjoint with a property's domain or range, and a delta patch the
ontology refuses. Every finding is a :class:`Violation` in one typed report.
"""

from __future__ import annotations

import threading

from rdflib import Graph, URIRef
from rdflib.term import Node

from kgmem.errors import OntologyError
from kgmem.ontology.axioms import check_axioms
from kgmem.ontology.delta import DeltaPatch
from kgmem.ontology.effective import EffectiveOntology
from kgmem.ontology.neighbourhood import Triples, constrained_predicates, neighbourhood
from kgmem.ontology.report import PatchReport, Violation, ViolationKind
from kgmem.ontology.service import OntologyService
from kgmem.ontology.shacl import ShapesProgram, compile_shapes
from kgmem.store import Changeset, Dataset, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import RDF, SH

__all__ = ["PatchReport", "ValidationService", "Violation", "ViolationKind"]


class ValidationService:
    """Validates patches for one store with the shapes it holds."""

    def __init__(
        self, store: TripleStore, queries: QueryRegistry, ontology: OntologyService
    ) -> None:
        self._store, self._queries, self._ontology = store, queries, ontology
        self._program: ShapesProgram | None = None
        self._constrained: frozenset[URIRef] | None = None
        self._lock = threading.Lock()

    def program(self) -> ShapesProgram:
        """The compiled shapes of every ``urn:kgmem:shapes:*`` graph (cached)."""
        with self._lock:
            if self._program is None:
                shapes = Graph()
                # named up front: the query would otherwise scan every graph (the
                # catalogue's ~600k triples: a third of a second of each command's write)
                dataset = Dataset(named=shapes_graphs(self._store))
                query = self._queries["ontology/shapes_graphs"]
                for row in self._store.select(query, dataset=dataset):
                    shapes.add((row["s"], row["p"], row["o"]))
                self._program = compile_shapes(shapes)
                self._constrained = constrained_predicates(shapes)
            return self._program

    def invalidate(self) -> None:
        with self._lock:
            self._program = None

    def validate(
        self,
        uid: str,
        instance: Changeset,
        delta: DeltaPatch | None = None,
        *,
        store: TripleStore | None = None,
    ) -> PatchReport:
        """Check ``instance`` (and ``delta``) for ``uid``; nothing is written. The patch's
        surroundings are read from ``store`` (a view of this store with changes not yet
        committed, say), by default from the store itself."""
        effective = self._ontology.effective(uid)
        violations: list[Violation] = []
        if delta is not None:
            try:
                effective, _ = self._ontology.preview(uid, delta)
            except OntologyError as exc:
                term = URIRef(getattr(exc, "term", "urn:kgmem:delta"))
                violations.append(
                    Violation(term, ViolationKind.SCHEMA, "delta", None, None, str(exc))
                )
        self.program()  # compiles the shapes and the predicates they constrain, once
        data, focus = neighbourhood(
            self._store if store is None else store,
            UserGraphs(uid),
            instance,
            self._constrained,
            effective.is_functional,
        )
        effective = effective.extend(_terms(data))
        violations += self._shacl(data, effective, focus)
        violations += check_axioms(data, focus, effective)
        return PatchReport(tuple(violations), tuple(focus), len(data))

    def _shacl(
        self, data: Triples, effective: EffectiveOntology, focus: list[Node]
    ) -> list[Violation]:
        report = self.program().validate(data, effective, focus)
        return [
            Violation(
                r.focus_node,
                ViolationKind.SHACL,
                r.constraint_component,
                r.result_path if isinstance(r.result_path, URIRef) else None,
                r.value,
                r.message or _component_name(r.constraint_component),
                r.source_shape,
            )
            for r in report.results
            if r.severity == SH.Violation
        ]


def _component_name(component: URIRef) -> str:
    return str(component).rsplit("#", 1)[-1]


def _terms(data: Triples) -> set[URIRef]:
    terms: set[URIRef] = set()
    for _, p, o in data:
        if isinstance(p, URIRef):
            terms.add(p)
        if p == RDF.type and isinstance(o, URIRef):
            terms.add(o)
    return terms


def shapes_graphs(store: TripleStore) -> tuple[URIRef, ...]:
    """The store's ``urn:kgmem:shapes:*`` graphs (the ones the query's filter keeps)."""
    return tuple(g for g in store.graphs() if str(g).startswith("urn:kgmem:shapes:"))
