"""Evaluating compiled shapes against a (small) data graph.

The data graph is indexed once per validation (subject -> predicate -> objects and the reverse),
so every path step is a dictionary lookup; class membership comes only from the injected
``ClassHierarchy``. Results are produced lazily, so ``sh:node``/``sh:or`` and friends stop at the
first result that decides conformance.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from rdflib import Literal, URIRef
from rdflib.namespace import RDF, SH
from rdflib.term import Node

from kgmem.ontology.shacl_model import (
    AllowedProperties,
    AlternativePath,
    Cardinality,
    ClassHierarchy,
    Constraint,
    HasValue,
    InstanceOf,
    InversePath,
    LanguageUnique,
    Logical,
    OneOrMorePath,
    Path,
    PropertyPair,
    PropertyRef,
    SequencePath,
    Shape,
    SparqlConstraint,
    ValidationReport,
    ValidationResult,
    ZeroOrMorePath,
    ZeroOrOnePath,
)
from kgmem.ontology.shacl_sparql import SparqlData, sparql_results
from kgmem.ontology.shacl_values import compare, passes

__all__ = ["ShapesProgram"]

_Edges = dict[Node, dict[Node, list[Node]]]
_PAIR_ORDERS = {
    SH.LessThanConstraintComponent: frozenset({-1}),
    SH.LessThanOrEqualsConstraintComponent: frozenset({-1, 0}),
}


@dataclass(frozen=True)
class ShapesProgram:
    """Compiled shapes, ready to validate any number of data graphs."""

    shapes: Mapping[Node, Shape]
    roots: tuple[Shape, ...]

    def validate(
        self,
        data: Iterable[tuple[Node, Node, Node]],
        hierarchy: ClassHierarchy,
        focus_nodes: Iterable[Node] | None = None,
        *,
        sparql_extra: Iterable[tuple[Node, Node, Node]] | None = None,
    ) -> ValidationReport:
        """Validate ``data``; with ``focus_nodes``, only those nodes, against every shape that
        targets them. ``sparql_extra`` is unioned into the graph sh:sparql queries see."""
        graphs = (data,) if sparql_extra is None else (data, sparql_extra)
        sparql = SparqlData(graphs, self.sparql_predicates)
        run = _Run(self, _Index.of(data), hierarchy, sparql)
        chosen = None if focus_nodes is None else list(dict.fromkeys(focus_nodes))
        targeted = None if chosen is None else run.targeted(chosen)
        results: list[ValidationResult] = []
        for at, shape in enumerate(self.roots):
            foci = run.targets(shape) if targeted is None else targeted.get(at)
            if foci:
                results.extend(run.results(shape, foci))
        return ValidationReport(conforms=not results, results=tuple(results))

    @cached_property
    def by_target(self) -> _TargetIndex:
        """Which root shapes (by position) each kind of target selects."""
        index = _TargetIndex({}, {}, {}, {})
        for at, shape in enumerate(self.roots):
            t = shape.targets
            for keys, found in (
                (t.nodes, index.nodes),
                (t.classes, index.classes),
                (t.subjects_of, index.subjects_of),
                (t.objects_of, index.objects_of),
            ):
                for key in keys:
                    found.setdefault(key, []).append(at)
        return index

    @cached_property
    def sparql_predicates(self) -> frozenset[URIRef] | None:
        """The predicates the sh:sparql queries can match (None: any), so their store holds
        only the triples that can answer them."""
        found: set[URIRef] = set()
        for shape in self.shapes.values():
            for c in shape.constraints:
                if isinstance(c, SparqlConstraint):
                    if c.predicates is None:
                        return None
                    found |= c.predicates
        return frozenset(found)


@dataclass(frozen=True)
class _TargetIndex:
    """Root shape positions by the node, class, or subject/object-of predicate they target."""

    nodes: dict[Node, list[int]]
    classes: dict[Node, list[int]]
    subjects_of: dict[Node, list[int]]
    objects_of: dict[Node, list[int]]


@dataclass(frozen=True)
class _Index:
    out: _Edges
    into: _Edges
    by_predicate: dict[Node, list[tuple[Node, Node]]]

    @classmethod
    def of(cls, graph: Iterable[tuple[Node, Node, Node]]) -> _Index:
        out: _Edges = {}
        into: _Edges = {}
        by_predicate: dict[Node, list[tuple[Node, Node]]] = {}
        for s, p, o in graph:
            out.setdefault(s, {}).setdefault(p, []).append(o)
            into.setdefault(o, {}).setdefault(p, []).append(s)
            by_predicate.setdefault(p, []).append((s, o))
        return cls(out, into, by_predicate)

    def step(self, node: Node, predicate: Node, inverse: bool) -> list[Node]:
        return (self.into if inverse else self.out).get(node, {}).get(predicate, [])


@dataclass
class _Run:
    program: ShapesProgram
    index: _Index
    hierarchy: ClassHierarchy
    sparql: SparqlData
    _classes: dict[Node, frozenset[Node]] = field(default_factory=dict)
    _instances: dict[Node, list[Node]] | None = None
    _conforms: dict[tuple[Node, Node], bool] = field(default_factory=dict)

    # -- targets ---------------------------------------------------------------------------

    def classes_of(self, node: Node) -> frozenset[Node]:
        found = self._classes.get(node)
        if found is None:
            found = frozenset(
                c
                for t in self.index.step(node, RDF.type, False)
                for c in (self.hierarchy.ancestors(t) if isinstance(t, URIRef) else (t,))
            )
            self._classes[node] = found
        return found

    def instances(self, cls: URIRef) -> list[Node]:
        if self._instances is None:
            self._instances = {}
            for node in dict.fromkeys(s for s, _ in self.index.by_predicate.get(RDF.type, [])):
                for c in self.classes_of(node):
                    self._instances.setdefault(c, []).append(node)
        return self._instances.get(cls, [])

    def targets(self, shape: Shape) -> list[Node]:
        t = shape.targets
        found: dict[Node, None] = dict.fromkeys(sorted(t.nodes, key=str))
        for cls in t.classes:
            found.update(dict.fromkeys(self.instances(cls)))
        for p in t.subjects_of:
            found.update(dict.fromkeys(s for s, _ in self.index.by_predicate.get(p, [])))
        for p in t.objects_of:
            found.update(dict.fromkeys(o for _, o in self.index.by_predicate.get(p, [])))
        return list(found)

    def targeted(self, chosen: list[Node]) -> dict[int, list[Node]]:
        """The chosen nodes each root shape (by position) targets, in the order chosen."""
        by = self.program.by_target
        out: dict[int, list[Node]] = {}
        for n in chosen:
            shapes = set(by.nodes.get(n, ()))
            for keys, found in (
                (self.classes_of(n), by.classes),
                (self.index.out.get(n, {}), by.subjects_of),
                (self.index.into.get(n, {}), by.objects_of),
            ):
                for key in keys:
                    shapes.update(found.get(key, ()))
            for at in shapes:
                out.setdefault(at, []).append(n)
        return out

    # -- shapes ----------------------------------------------------------------------------

    def results(self, shape: Shape, foci: list[Node]) -> Iterator[ValidationResult]:
        if shape.deactivated:
            return
        known: dict[Node, list[Node]] = {}
        for constraint in shape.constraints:
            if isinstance(constraint, SparqlConstraint):
                yield from sparql_results(shape, constraint, foci, self.sparql)
                continue
            for focus in foci:
                values = known.get(focus)
                if values is None:
                    values = [focus] if shape.path is None else self.values(shape.path, focus)
                    known[focus] = values
                yield from self.check(shape, constraint, focus, values)

    def conforms(self, shape_node: Node, node: Node) -> bool:
        key = (shape_node, node)
        found = self._conforms.get(key)
        if found is None:
            shape = self.program.shapes[shape_node]
            found = next(self.results(shape, [node]), None) is None
            self._conforms[key] = found
        return found

    def values(self, path: Path, node: Node) -> list[Node]:
        return list(dict.fromkeys(self._walk(path, node, False)))

    def _walk(self, path: Path, node: Node, inverse: bool) -> Iterable[Node]:
        match path:
            case URIRef():
                return self.index.step(node, path, inverse)
            case InversePath(inner):
                return self._walk(inner, node, not inverse)
            case SequencePath(steps):
                frontier: dict[Node, None] = {node: None}
                for step in reversed(steps) if inverse else steps:
                    frontier = {y: None for x in frontier for y in self._walk(step, x, inverse)}
                return frontier
            case AlternativePath(options):
                return {y: None for o in options for y in self._walk(o, node, inverse)}
            case ZeroOrOnePath(inner):
                return {node: None, **dict.fromkeys(self._walk(inner, node, inverse))}
            case ZeroOrMorePath(inner) | OneOrMorePath(inner):
                return self._closure(inner, node, inverse, isinstance(path, ZeroOrMorePath))

    def _closure(self, inner: Path, node: Node, inverse: bool, reflexive: bool) -> list[Node]:
        seen: dict[Node, None] = {node: None} if reflexive else {}
        todo = [node]
        while todo:
            for y in self._walk(inner, todo.pop(), inverse):
                if y not in seen:
                    seen[y] = None
                    todo.append(y)
        return list(seen)

    # -- constraints -----------------------------------------------------------------------

    def check(
        self, shape: Shape, c: Constraint, focus: Node, values: list[Node]
    ) -> Iterator[ValidationResult]:
        def result(value: Node | None, path: Path | None = shape.path) -> ValidationResult:
            return ValidationResult(
                focus, path, value, shape.node, c.component, shape.severity, shape.message
            )

        match c:
            case Cardinality(_, low, high):
                if (low is not None and len(values) < low) or (
                    high is not None and len(values) > high
                ):
                    yield result(None)
            case HasValue(wanted):
                if wanted not in values:
                    yield result(None)
            case InstanceOf(cls):
                for v in values:
                    if isinstance(v, Literal) or cls not in self.classes_of(v):
                        yield result(v)
            case LanguageUnique():
                langs = [v.language for v in values if isinstance(v, Literal) and v.language]
                duplicated = {lang for lang in langs if langs.count(lang) > 1}
                yield from (result(None) for _ in duplicated)
            case Logical(component, refs):
                for v in values:
                    if not self._logical(component, refs, v):
                        yield result(v)
            case PropertyRef(ref):
                yield from self.results(self.program.shapes[ref], values)
            case PropertyPair(component, other):
                for v in self._pair(component, values, self.index.step(focus, other, False)):
                    yield result(v)
            case AllowedProperties(allowed):
                for v in values:
                    for p, objects in self.index.out.get(v, {}).items():
                        if p not in allowed:
                            yield from (result(o, p) for o in objects)  # type: ignore[arg-type]
            case _:
                for v in values:
                    if not passes(c, v):
                        yield result(v)

    def _logical(self, component: URIRef, refs: tuple[Node, ...], value: Node) -> bool:
        if component == SH.AndConstraintComponent:
            return all(self.conforms(r, value) for r in refs)
        if component == SH.OrConstraintComponent:
            return any(self.conforms(r, value) for r in refs)
        if component == SH.XoneConstraintComponent:
            return sum(self.conforms(r, value) for r in refs) == 1
        if component == SH.NotConstraintComponent:
            return not self.conforms(refs[0], value)
        return self.conforms(refs[0], value)

    @staticmethod
    def _pair(component: URIRef, values: list[Node], others: list[Node]) -> list[Node]:
        if component == SH.EqualsConstraintComponent:
            return [v for v in values if v not in others] + [o for o in others if o not in values]
        if component == SH.DisjointConstraintComponent:
            return [v for v in values if v in others]
        allowed = _PAIR_ORDERS[component]
        return list(
            dict.fromkeys(
                v for v in values for o in others if compare(_lit(v), _lit(o)) not in allowed
            )
        )


def _lit(node: Node) -> Node:
    """IRIs order as their strings in sh:lessThan (as pySHACL does)."""
    return Literal(str(node)) if isinstance(node, URIRef) else node
