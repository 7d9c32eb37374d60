"""Terms between rdflib and Oxigraph: every read and write of the store converts here.

rdflib validates every IRI and parses every typed literal it makes (microseconds each), and a
store's reads repeat the same predicates, graphs, statuses and dates, so conversions of IRIs
and of short literals are cached (literals are immutable; long texts are made anew so the
caches stay small).
"""

from __future__ import annotations

from functools import lru_cache

import pyoxigraph as ox
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import RDF, XSD

from kgmem.errors import StoreOperationFailed
from kgmem.store.base import Dataset, Quad, Row, Term

__all__ = [
    "dataset_to_ox",
    "from_ox",
    "iri_from_ox",
    "named_ox",
    "node_from_ox",
    "node_to_ox",
    "quad_from_ox",
    "quad_to_ox",
    "row_from_ox",
    "to_ox",
    "triple_from_ox",
]

_XSD_STRING = str(XSD.string)
_LANG_STRING = str(RDF.langString)


@lru_cache(maxsize=1 << 16)
def named_ox(value: str) -> ox.NamedNode:
    """Oxigraph checks every IRI it makes too; patterns repeat the same predicates/graphs."""
    return ox.NamedNode(value)


def node_to_ox(term: URIRef | BNode) -> ox.NamedNode | ox.BlankNode:
    if isinstance(term, URIRef):
        return named_ox(str(term))
    return ox.BlankNode(str(term))


def to_ox(term: Term) -> ox.NamedNode | ox.BlankNode | ox.Literal:
    if isinstance(term, URIRef | BNode):
        return node_to_ox(term)
    if term.language:
        return ox.Literal(str(term), language=term.language)
    if term.datatype is not None:
        return ox.Literal(str(term), datatype=ox.NamedNode(str(term.datatype)))
    return ox.Literal(str(term))


@lru_cache(maxsize=1 << 16)
def _iri(value: str) -> URIRef:
    """rdflib checks every IRI it makes (~2 µs); reads repeat the same few thousand."""
    return URIRef(value)


_CACHED_LITERAL = 256  # longer values (message texts, bodies) are made anew: bounded memory


@lru_cache(maxsize=1 << 16)
def _literal(value: str, language: str | None, datatype: str) -> Literal:
    """rdflib parses a typed literal's value as it makes it (dates, numbers: ~5 µs); reads
    repeat the same titles, statuses, scores and dates. Literals are immutable."""
    if language:
        return Literal(value, lang=language)
    if datatype in (_XSD_STRING, _LANG_STRING):
        return Literal(value)
    return Literal(value, datatype=_iri(datatype))


def from_ox(term: object) -> Term:
    if isinstance(term, ox.NamedNode):
        return _iri(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    if isinstance(term, ox.Literal):
        value = term.value
        make = _literal if len(value) <= _CACHED_LITERAL else _literal.__wrapped__
        return make(value, term.language, term.datatype.value)
    raise StoreOperationFailed("read", f"unsupported term {term!r} (RDF-star is not used)")


def node_from_ox(term: object) -> URIRef | BNode:
    """A subject: an IRI or a blank node."""
    if isinstance(term, ox.NamedNode):
        return _iri(term.value)
    if isinstance(term, ox.BlankNode):
        return BNode(term.value)
    raise StoreOperationFailed("read", f"unsupported subject {term!r} (RDF-star is not used)")


def iri_from_ox(term: ox.NamedNode) -> URIRef:
    """A predicate (always an IRI)."""
    return _iri(term.value)


def quad_to_ox(quad: Quad) -> ox.Quad:
    return ox.Quad(
        node_to_ox(quad.subject),
        named_ox(str(quad.predicate)),
        to_ox(quad.object),
        named_ox(str(quad.graph)),
    )


def quad_from_ox(quad: ox.Quad) -> Quad:
    graph = quad.graph_name
    if not isinstance(graph, ox.NamedNode):
        raise StoreOperationFailed("read", "kgmem keeps nothing in the default graph")
    return Quad(
        node_from_ox(quad.subject),
        iri_from_ox(quad.predicate),
        from_ox(quad.object),
        _iri(graph.value),
    )


def row_from_ox(names: list[str], solution: ox.QuerySolution) -> Row:
    row: dict[str, Term] = {}
    for name in names:
        value = solution[name]
        if value is not None:
            row[name] = from_ox(value)
    return row


def triple_from_ox(triple: ox.Triple) -> tuple[URIRef | BNode, URIRef, Term]:
    subject, predicate = from_ox(triple.subject), from_ox(triple.predicate)
    assert not isinstance(subject, Literal) and isinstance(predicate, URIRef)
    return subject, predicate, from_ox(triple.object)


_Graphs = list[ox.NamedNode | ox.BlankNode | ox.DefaultGraph]
# An empty list would mean "the store's default graph": an impossible graph keeps an empty
# dataset empty.
_NOWHERE = ox.NamedNode("urn:kgmem:none")


def dataset_to_ox(
    dataset: Dataset | None,
) -> tuple[bool, _Graphs | None, list[ox.NamedNode | ox.BlankNode] | None]:
    """(union default graph?, default graphs, named graphs) for pyoxigraph's query()."""
    if dataset is None:
        return True, None, None
    named: list[ox.NamedNode | ox.BlankNode] | None = None
    if dataset.named is not None:
        named = [ox.NamedNode(str(g)) for g in dataset.named] or [_NOWHERE]
    if dataset.default is not None:
        return False, [ox.NamedNode(str(g)) for g in dataset.default] or [_NOWHERE], named
    if named is None:
        return True, None, None
    return False, list(named), named
