"""SPARQL-based constraints (sh:sparql with sh:select), compiled and evaluated on pyoxigraph.

Pre-binding. The SHACL spec pre-binds ``$this`` (and ``$currentShape``) before the query runs.
Oxigraph's ``substitutions`` only bind *projected* variables, so the compiler makes sure
``?this`` is projected (adding it when the author did not) and the evaluator binds it with a
``VALUES`` block inserted as the first element of the WHERE group: one query for all IRI focus
nodes of a constraint, whose rows are grouped back by ``?this``. Blank nodes cannot be written in
a VALUES block, so a blank focus node is bound through ``substitutions`` instead, one query each.
For the queries SHACL allows (no MINUS, VALUES or SERVICE, subqueries projecting ``$this``) both
are the same as the spec's pre-binding. ``$PATH`` is substituted as text, as the spec says.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import SH, XSD
from rdflib.paths import AlternativePath as RdfAlternative
from rdflib.paths import InvPath, MulPath
from rdflib.paths import SequencePath as RdfSequence
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import Node

from kgmem.errors import ShapeError
from kgmem.ontology.shacl_model import (
    AlternativePath,
    InversePath,
    OneOrMorePath,
    Path,
    SequencePath,
    Shape,
    SparqlConstraint,
    ValidationResult,
    ZeroOrMorePath,
    ZeroOrOnePath,
)
from kgmem.ontology.shacl_params import boolean, single, string
from kgmem.vocab import prefix_declaration

__all__ = [
    "SparqlData",
    "compile_sparql",
    "query_predicates",
    "sparql_path",
    "sparql_results",
]

_MASKED = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"(?:[^"\\\n]|\\.)*"'
    r"|'(?:[^'\\\n]|\\.)*'"
    r"|<[^<>\"{}|^`\\\s]*>"
    r"|#[^\n]*",
)
_SELECT = re.compile(r"\bSELECT(\s+(?:DISTINCT|REDUCED))?\b", re.IGNORECASE)
_FORBIDDEN = re.compile(r"\b(VALUES|MINUS|SERVICE)\b", re.IGNORECASE)
_THIS = re.compile(r"[?$]this\b")
_XSD_STRING = ox.NamedNode(str(XSD.string))
_THIS_VAR = ox.Variable("this")


def _mask(text: str) -> str:
    """The query with strings, IRIs and comments blanked out, so keywords can be searched."""
    return _MASKED.sub(lambda m: " " * len(m.group(0)), text)


def sparql_path(path: Path) -> str:
    match path:
        case URIRef():
            return f"<{path}>"
        case InversePath(inner):
            return f"^({sparql_path(inner)})"
        case SequencePath(steps):
            return "(" + "/".join(sparql_path(s) for s in steps) + ")"
        case AlternativePath(options):
            return "(" + "|".join(sparql_path(o) for o in options) + ")"
        case ZeroOrMorePath(inner):
            return f"({sparql_path(inner)})*"
        case OneOrMorePath(inner):
            return f"({sparql_path(inner)})+"
        case ZeroOrOnePath(inner):
            return f"({sparql_path(inner)})?"


def _prefixes(g: Graph, shape: Node, constraint: Node) -> str:
    lines = []
    for owner in g.objects(constraint, SH.prefixes):
        for decl in g.objects(owner, SH.declare):
            prefix, namespace = single(g, decl, SH.prefix), single(g, decl, SH.namespace)
            if prefix is None or namespace is None:
                raise ShapeError(shape, "an sh:declare needs sh:prefix and sh:namespace")
            lines.append(prefix_declaration(str(prefix), str(namespace)))
    return "".join(sorted(set(lines)))


def compile_sparql(
    g: Graph, shape: Node, constraint: Node, path: Path | None
) -> SparqlConstraint | None:
    """Compile one value of sh:sparql; None when the constraint is deactivated."""
    if boolean(g, constraint, SH.deactivated):
        return None
    select = single(g, constraint, SH.select)
    if select is None:
        raise ShapeError(
            shape, "an sh:sparql constraint needs sh:select (sh:ask is for components)"
        )
    text = _prefixes(g, shape, constraint) + string(g, shape, SH.select, select)
    masked = _mask(text)
    if re.search(r"[?$]shapesGraph\b", masked):
        raise ShapeError(shape, "$shapesGraph is not supported in sh:sparql")
    forbidden = _FORBIDDEN.search(masked)
    if forbidden:
        raise ShapeError(shape, f"{forbidden.group(1).upper()} is not allowed in sh:sparql")
    if "$PATH" in masked:
        if path is None:
            raise ShapeError(shape, "$PATH in sh:sparql needs a property shape")
        text = "".join(
            sparql_path(path) if part == "$PATH" else part
            for part in _split_code(text, masked, r"\$PATH\b")
        )
        masked = _mask(text)
    text, masked = _project_this(shape, text, masked)
    brace = masked.find("{", _SELECT.search(masked).end())  # type: ignore[union-attr]
    if brace < 0:
        raise ShapeError(shape, "sh:select has no WHERE clause")
    messages = [m for m in g.objects(constraint, SH.message) if isinstance(m, Literal)]
    compiled = SparqlConstraint(
        node=constraint,
        head=text[: brace + 1],
        tail=text[brace + 1 :],
        uses_current_shape=re.search(r"[?$]currentShape\b", masked) is not None,
        message=sorted(messages)[0] if messages else None,
        predicates=query_predicates(text),
    )
    if compiled.uses_current_shape and not isinstance(shape, URIRef):
        raise ShapeError(shape, "$currentShape needs a shape with an IRI")
    _check_syntax(shape, compiled)
    return compiled


class _AnyPredicate(Exception):
    """A pattern whose predicate is a variable or a negated set."""


def query_predicates(text: str) -> frozenset[URIRef] | None:
    """Every predicate the triple patterns and property paths of the query ``text`` name
    (EXISTS and subqueries included), or None when one may be any predicate: a variable, a
    negated property set, or a query rdflib cannot parse. A triple with none of them cannot
    match the query, so the data it runs on can leave such triples out.

    >>> sorted(query_predicates("SELECT * { ?s <urn:p>/^<urn:q> ?o }"))
    [rdflib.term.URIRef('urn:p'), rdflib.term.URIRef('urn:q')]
    >>> query_predicates("SELECT * { ?s ?p ?o }") is None
    True
    """
    try:
        algebra = prepareQuery(text).algebra
    except Exception:  # rdflib's grammar is not Oxigraph's: then assume any predicate
        return None
    found: set[URIRef] = set()
    try:
        _collect(algebra, found)
    except _AnyPredicate:
        return None
    return frozenset(found)


def _collect(node: object, found: set[URIRef]) -> None:
    if isinstance(node, CompValue):
        for key, value in node.items():
            if key == "triples":
                for triple in value:  # (s, p, o), or a flat s p o s p o ... of a block
                    for at in range(1, len(triple), 3):
                        _predicate(triple[at], found)
            else:
                _collect(value, found)
    elif isinstance(node, list | tuple):
        for item in node:
            _collect(item, found)


def _predicate(term: object, found: set[URIRef]) -> None:
    if isinstance(term, URIRef):
        found.add(term)
    elif isinstance(term, InvPath):
        _predicate(term.arg, found)
    elif isinstance(term, MulPath):
        _predicate(term.path, found)
    elif isinstance(term, RdfSequence | RdfAlternative):
        for arg in term.args:
            _predicate(arg, found)
    else:  # a variable, a negated property set
        raise _AnyPredicate


def _split_code(text: str, masked: str, pattern: str) -> list[str]:
    parts, last = [], 0
    for found in re.finditer(pattern, masked):
        parts += [text[last : found.start()], found.group(0)]
        last = found.end()
    return [*parts, text[last:]]


def _project_this(shape: Node, text: str, masked: str) -> tuple[str, str]:
    select = _SELECT.search(masked)
    if select is None:
        raise ShapeError(shape, "sh:select must be a SELECT query")
    projection = masked[select.end() : masked.find("{", select.end())]
    if _THIS.search(projection) or projection.strip().startswith("*"):
        return text, masked
    at = select.end()
    return text[:at] + " ?this" + text[at:], masked[:at] + " ?this" + masked[at:]


def _check_syntax(shape: Node, constraint: SparqlConstraint) -> None:
    probe = _values(constraint, [URIRef("urn:kgmem:probe")], URIRef("urn:kgmem:probe"))
    try:
        ox.Store().query(constraint.head + probe + constraint.tail)
    except SyntaxError as exc:
        raise ShapeError(shape, f"sh:select does not parse: {exc}") from exc


def _values(constraint: SparqlConstraint, foci: Sequence[URIRef], shape: Node) -> str:
    rows = " ".join(f"<{f}>" for f in foci)
    block = f" VALUES ?this {{ {rows} }} " if foci else " "
    if constraint.uses_current_shape:
        block += f"VALUES ?currentShape {{ <{shape}> }} "
    return block


@dataclass
class SparqlData:
    """The data graph (plus an optional ontology graph) as an in-memory Oxigraph store.

    Built on first use, so a validation that runs no sh:sparql constraint never pays for it;
    with ``predicates``, of only the triples with one of them (what the queries can match).
    """

    graphs: tuple[Iterable[tuple[Node, Node, Node]], ...]
    predicates: frozenset[URIRef] | None = None
    _store: ox.Store | None = None
    _to_ox: dict[Node, ox.NamedNode | ox.BlankNode | ox.Literal] = field(default_factory=dict)
    _back: dict[object, Node] = field(default_factory=dict)

    def store(self) -> ox.Store:
        if self._store is None:
            wanted = self.predicates
            self._store = ox.Store()
            self._store.extend(
                ox.Quad(self.term(s), self.term(p), self.term(o))  # type: ignore[arg-type]
                for graph in self.graphs
                for s, p, o in graph
                if wanted is None or p in wanted
            )
        return self._store

    def term(self, node: Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
        found = self._to_ox.get(node)
        if found is None:
            found = _convert(node)
            self._to_ox[node] = found
            self._back.setdefault(found, node)
        return found

    def node(self, term: object) -> Node:
        found = self._back.get(term)
        if found is not None:
            return found
        if isinstance(term, ox.NamedNode):
            return URIRef(term.value)
        if isinstance(term, ox.BlankNode):
            return BNode(term.value)
        assert isinstance(term, ox.Literal)
        if term.language:
            return Literal(term.value, lang=term.language)
        if term.datatype == _XSD_STRING:
            return Literal(term.value)
        return Literal(term.value, datatype=URIRef(term.datatype.value))


def _convert(node: Node) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(node, URIRef):
        return ox.NamedNode(str(node))
    if isinstance(node, BNode):
        return ox.BlankNode()
    assert isinstance(node, Literal)
    if node.language:
        return ox.Literal(str(node), language=node.language)
    if node.datatype is not None:
        return ox.Literal(str(node), datatype=ox.NamedNode(str(node.datatype)))
    return ox.Literal(str(node))


def sparql_results(
    shape: Shape, constraint: SparqlConstraint, foci: Iterable[Node], data: SparqlData
) -> Iterator[ValidationResult]:
    """The results of one sh:sparql constraint for the given focus nodes."""
    foci = list(dict.fromkeys(foci))
    iris = [f for f in foci if isinstance(f, URIRef)]
    store = data.store()
    if iris:
        query = constraint.head + _values(constraint, iris, shape.node) + constraint.tail
        yield from _rows(shape, constraint, store.query(query), None, data)
    for focus in foci:
        if not isinstance(focus, URIRef):
            query = constraint.head + _values(constraint, [], shape.node) + constraint.tail
            bound: dict[ox.Variable, ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple]
            bound = {_THIS_VAR: data.term(focus)}
            yield from _rows(
                shape, constraint, store.query(query, substitutions=bound), focus, data
            )


def _rows(
    shape: Shape, constraint: SparqlConstraint, rows: object, focus: Node | None, data: SparqlData
) -> Iterator[ValidationResult]:
    assert isinstance(rows, ox.QuerySolutions)
    names = [v.value for v in rows.variables]
    seen: set[tuple[Node | None, ...]] = set()
    for row in rows:
        values = {name: data.node(row[name]) for name in names if row[name] is not None}
        this = values.get("this", focus)
        assert this is not None
        path = values.get("path") if "failure" not in values else None
        value = values.get("value") if "failure" not in values else None
        if value is None and shape.path is None:
            value = this
        if (this, path, value) in seen:
            continue
        seen.add((this, path, value))
        yield ValidationResult(
            focus_node=this,
            result_path=path if isinstance(path, URIRef) else shape.path,
            value=value,
            source_shape=shape.node,
            constraint_component=constraint.component,
            severity=shape.severity,
            message=_message(constraint, shape, values),
        )


def _message(constraint: SparqlConstraint, shape: Shape, values: dict[str, Node]) -> str | None:
    if constraint.message is None:
        return shape.message
    return re.sub(
        r"\{[?$](\w+)\}",
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0),
        str(constraint.message),
    )
