"""Shapes graph -> compiled shapes: every shape parsed once, every parameter checked.

Anything the native validator cannot evaluate faithfully raises ``ShapeError`` here, so an
unsupported or malformed shapes file is refused when it is loaded, never half-applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import OWL, RDF, RDFS, SH
from rdflib.term import Node

from kgmem.errors import ShapeError
from kgmem.ontology.shacl_model import (
    AllowedProperties,
    AlternativePath,
    Bound,
    Cardinality,
    Constraint,
    DatatypeIs,
    HasValue,
    InstanceOf,
    InversePath,
    KindIs,
    LanguageIn,
    LanguageUnique,
    Length,
    Logical,
    Matches,
    OneOf,
    OneOrMorePath,
    Path,
    PropertyPair,
    PropertyRef,
    SequencePath,
    Shape,
    Targets,
    ZeroOrMorePath,
    ZeroOrOnePath,
)
from kgmem.ontology.shacl_params import (
    boolean,
    compile_regex,
    count,
    iri,
    rdf_list,
    single,
    string,
)
from kgmem.ontology.shacl_sparql import compile_sparql

__all__ = ["check_known", "compile_shape", "parse_path", "shape_nodes"]

_KINDS = {
    SH.IRI: frozenset({"iri"}),
    SH.BlankNode: frozenset({"bnode"}),
    SH.Literal: frozenset({"literal"}),
    SH.BlankNodeOrIRI: frozenset({"bnode", "iri"}),
    SH.BlankNodeOrLiteral: frozenset({"bnode", "literal"}),
    SH.IRIOrLiteral: frozenset({"iri", "literal"}),
}
_BOUNDS = {
    SH.minInclusive: (frozenset({0, 1}), SH.MinInclusiveConstraintComponent),
    SH.minExclusive: (frozenset({1}), SH.MinExclusiveConstraintComponent),
    SH.maxInclusive: (frozenset({0, -1}), SH.MaxInclusiveConstraintComponent),
    SH.maxExclusive: (frozenset({-1}), SH.MaxExclusiveConstraintComponent),
}
_LOGICAL_LISTS = {
    SH["and"]: SH.AndConstraintComponent,
    SH["or"]: SH.OrConstraintComponent,
    SH.xone: SH.XoneConstraintComponent,
}
_PAIRS = {
    SH.equals: SH.EqualsConstraintComponent,
    SH.disjoint: SH.DisjointConstraintComponent,
    SH.lessThan: SH.LessThanConstraintComponent,
    SH.lessThanOrEquals: SH.LessThanOrEqualsConstraintComponent,
}
_TARGETS = (SH.targetClass, SH.targetNode, SH.targetSubjectsOf, SH.targetObjectsOf)
_SHAPE_REFS = (SH.node, SH.property, SH["not"])
#: SHACL predicates that carry no constraint (annotations, or read by another parameter).
_PASSIVE = frozenset(
    {
        SH.name, SH.description, SH.order, SH.group, SH.defaultValue, SH.message, SH.severity,
        SH.deactivated, SH.path, SH.flags, SH.ignoredProperties, SH.declare, SH.prefixes,
        SH.closed, *_TARGETS,
    }
)  # fmt: skip
_UNSUPPORTED = frozenset(
    {
        SH.qualifiedValueShape, SH.qualifiedMinCount, SH.qualifiedMaxCount,
        SH.qualifiedValueShapesDisjoint, SH.target, SH.rule, SH.expression, SH.condition,
        SH.shapesGraph, SH.entailment,
    }
)  # fmt: skip
_IMPLICIT_CLASS_TYPES = (RDFS.Class, OWL.Class)


def shape_nodes(g: Graph) -> list[Node]:
    """Every node the shapes graph uses as a shape, in a stable order."""
    found: dict[Node, None] = {}
    for cls in (SH.NodeShape, SH.PropertyShape):
        found.update(dict.fromkeys(g.subjects(RDF.type, cls)))
    for pred in _TARGETS:
        found.update(dict.fromkeys(g.subjects(pred, None)))
    for pred in _SHAPE_REFS:
        found.update(dict.fromkeys(g.objects(None, pred)))
    for pred in _LOGICAL_LISTS:
        for owner, head in g.subject_objects(pred):
            found.update(dict.fromkeys(rdf_list(g, owner, head)))
    if (None, RDF.type, SH.ConstraintComponent) in g:
        owner = next(g.subjects(RDF.type, SH.ConstraintComponent))
        raise ShapeError(owner, "custom constraint components are not supported")
    return sorted(found, key=lambda n: (isinstance(n, BNode), str(n)))


def compile_shape(g: Graph, node: Node) -> Shape:
    """Compile one shape; nested shapes are referenced by node and compiled separately."""
    check_known(g, node)
    path_node = single(g, node, SH.path)
    path = None if path_node is None else parse_path(g, node, path_node)
    severity = single(g, node, SH.severity)
    messages = sorted(str(m) for m in g.objects(node, SH.message) if isinstance(m, Literal))
    return Shape(
        node=node,
        path=path,
        targets=_targets(g, node),
        constraints=tuple(_constraints(g, node, path)),
        severity=SH.Violation if severity is None else iri(g, node, SH.severity, severity),
        message=messages[0] if messages else None,
        deactivated=boolean(g, node, SH.deactivated),
    )


def parse_path(g: Graph, shape: Node, node: Node) -> Path:
    """A SHACL property path from its RDF form (also used to read pySHACL's result paths)."""
    if isinstance(node, URIRef):
        return node
    if isinstance(node, BNode) and (node, RDF.first, None) in g:
        steps = tuple(parse_path(g, shape, step) for step in rdf_list(g, shape, node))
        if len(steps) < 2:
            raise ShapeError(shape, "a sequence path needs at least two members")
        return SequencePath(steps)
    unary: dict[URIRef, Callable[[Path], Path]] = {
        SH.inversePath: InversePath,
        SH.zeroOrMorePath: ZeroOrMorePath,
        SH.oneOrMorePath: OneOrMorePath,
        SH.zeroOrOnePath: ZeroOrOnePath,
    }
    for pred, make in unary.items():
        inner = g.value(node, pred)
        if inner is not None:
            return make(parse_path(g, shape, inner))
    options = g.value(node, SH.alternativePath)
    if options is not None:
        members = tuple(parse_path(g, shape, o) for o in rdf_list(g, shape, options))
        if len(members) < 2:
            raise ShapeError(shape, "an alternative path needs at least two members")
        return AlternativePath(members)
    raise ShapeError(shape, f"malformed sh:path {node.n3()}")


def _targets(g: Graph, node: Node) -> Targets:
    def iris(pred: URIRef) -> set[URIRef]:
        return {iri(g, node, pred, value) for value in g.objects(node, pred)}

    classes = iris(SH.targetClass)
    if isinstance(node, URIRef) and any((node, RDF.type, t) in g for t in _implicit_types(g)):
        classes.add(node)
    return Targets(
        classes=frozenset(classes),
        nodes=frozenset(g.objects(node, SH.targetNode)),
        subjects_of=frozenset(iris(SH.targetSubjectsOf)),
        objects_of=frozenset(iris(SH.targetObjectsOf)),
    )


def _implicit_types(g: Graph) -> set[Node]:
    types: set[Node] = set(_IMPLICIT_CLASS_TYPES)
    for root in _IMPLICIT_CLASS_TYPES:
        types.update(n for n in g.transitive_subjects(RDFS.subClassOf, root) if n is not None)
    return types


def _constraints(g: Graph, node: Node, path: Path | None) -> Iterator[Constraint]:
    yield from _cardinality(g, node, path)
    yield from _value_tests(g, node)
    for value in g.objects(node, SH.hasValue):
        yield HasValue(value)
    if boolean(g, node, SH.uniqueLang):
        if path is None:
            raise ShapeError(node, "sh:uniqueLang needs a property shape")
        yield LanguageUnique()
    for pred, component in _PAIRS.items():
        for other in g.objects(node, pred):
            yield PropertyPair(component, iri(g, node, pred, other))
    yield from _shape_refs(g, node)
    yield from _closed(g, node)
    for constraint in g.objects(node, SH.sparql):
        compiled = compile_sparql(g, node, constraint, path)
        if compiled is not None:
            yield compiled


def _cardinality(g: Graph, node: Node, path: Path | None) -> Iterator[Constraint]:
    low = single(g, node, SH.minCount)
    high = single(g, node, SH.maxCount)
    if (low is not None or high is not None) and path is None:
        raise ShapeError(node, "sh:minCount and sh:maxCount need a property shape")
    if low is not None:
        yield Cardinality(SH.MinCountConstraintComponent, count(g, node, SH.minCount, low), None)
    if high is not None:
        yield Cardinality(SH.MaxCountConstraintComponent, None, count(g, node, SH.maxCount, high))


def _value_tests(g: Graph, node: Node) -> Iterator[Constraint]:
    datatype = single(g, node, SH.datatype)
    if datatype is not None:
        yield DatatypeIs(iri(g, node, SH.datatype, datatype))
    for cls in g.objects(node, SH["class"]):
        yield InstanceOf(iri(g, node, SH["class"], cls))
    kind = single(g, node, SH.nodeKind)
    if kind is not None:
        if not isinstance(kind, URIRef) or kind not in _KINDS:
            raise ShapeError(node, f"sh:nodeKind {kind.n3()} is not a node kind")
        yield KindIs(_KINDS[kind])
    allowed = single(g, node, SH["in"])
    if allowed is not None:
        yield OneOf(frozenset(rdf_list(g, node, allowed)))
    for pred, (order, component) in _BOUNDS.items():
        for limit in g.objects(node, pred):
            if not isinstance(limit, Literal):
                raise ShapeError(node, f"{pred.n3(g.namespace_manager)} must be a literal")
            yield Bound(limit, order, component)
    for pred, is_max in ((SH.minLength, False), (SH.maxLength, True)):
        length = single(g, node, pred)
        if length is not None:
            component = (
                SH.MaxLengthConstraintComponent if is_max else SH.MinLengthConstraintComponent
            )
            yield Length(count(g, node, pred, length), is_max, component)
    yield from _patterns(g, node)
    ranges = single(g, node, SH.languageIn)
    if ranges is not None:
        tags = tuple(string(g, node, SH.languageIn, t) for t in rdf_list(g, node, ranges))
        yield LanguageIn(tags)


def _patterns(g: Graph, node: Node) -> Iterator[Constraint]:
    flags_node = single(g, node, SH.flags)
    flags = "" if flags_node is None else string(g, node, SH.flags, flags_node)
    for pattern in g.objects(node, SH.pattern):
        yield Matches(compile_regex(node, string(g, node, SH.pattern, pattern), flags))


def _shape_refs(g: Graph, node: Node) -> Iterator[Constraint]:
    for ref in g.objects(node, SH.node):
        yield Logical(SH.NodeConstraintComponent, (ref,))
    for ref in g.objects(node, SH["not"]):
        yield Logical(SH.NotConstraintComponent, (ref,))
    for pred, component in _LOGICAL_LISTS.items():
        for head in g.objects(node, pred):
            yield Logical(component, tuple(rdf_list(g, node, head)))
    for ref in g.objects(node, SH.property):
        if single(g, ref, SH.path) is None:
            raise ShapeError(ref, "a value of sh:property needs an sh:path")
        yield PropertyRef(ref)


def _closed(g: Graph, node: Node) -> Iterator[Constraint]:
    ignored = single(g, node, SH.ignoredProperties)
    if not boolean(g, node, SH.closed):
        return
    allowed = {
        iri(g, node, SH.ignoredProperties, p)
        for p in ([] if ignored is None else rdf_list(g, node, ignored))
    }
    for prop in g.objects(node, SH.property):
        path = g.value(prop, SH.path)
        if isinstance(path, URIRef):
            allowed.add(path)
    yield AllowedProperties(frozenset(allowed))


def check_known(g: Graph, node: Node) -> None:
    """Refuse SHACL parameters this module does not know, rather than ignore them."""
    for pred in sorted(set(g.predicates(node, None)), key=str):
        if not isinstance(pred, URIRef) or not pred.startswith(str(SH)):
            continue
        if pred in _UNSUPPORTED or pred not in _KNOWN:
            raise ShapeError(node, f"{pred.n3(g.namespace_manager)} is not supported")


_KNOWN = frozenset(
    {
        *_PASSIVE, SH.minCount, SH.maxCount, SH.datatype, SH["class"], SH.nodeKind, SH["in"],
        *_BOUNDS, SH.minLength, SH.maxLength, SH.pattern, SH.languageIn, SH.uniqueLang,
        SH.hasValue, *_PAIRS, *_SHAPE_REFS, *_LOGICAL_LISTS, SH.sparql,
    }
)  # fmt: skip
