"""Reading SHACL parameter values from a shapes graph, each check raising ``ShapeError``."""

from __future__ import annotations

import re

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, XSD
from rdflib.term import Node

from kgmem.errors import ShapeError

__all__ = ["boolean", "compile_regex", "count", "iri", "rdf_list", "single", "string"]

_FLAGS = {"s": re.DOTALL, "m": re.MULTILINE, "i": re.IGNORECASE, "x": re.VERBOSE}


def _name(g: Graph, pred: URIRef) -> str:
    return pred.n3(g.namespace_manager)


def single(g: Graph, shape: Node, pred: URIRef) -> Node | None:
    """The one value of ``pred`` on ``shape``, or None; more than one is an error."""
    values = list(g.objects(shape, pred))
    if len(values) > 1:
        raise ShapeError(shape, f"{_name(g, pred)} has {len(values)} values, at most one allowed")
    return values[0] if values else None


def iri(g: Graph, shape: Node, pred: URIRef, value: Node) -> URIRef:
    if not isinstance(value, URIRef):
        raise ShapeError(shape, f"{_name(g, pred)} must be an IRI, not {value.n3()}")
    return value


def count(g: Graph, shape: Node, pred: URIRef, value: Node) -> int:
    """A non-negative xsd:integer parameter (sh:minCount, sh:maxLength, ...)."""
    if (
        not isinstance(value, Literal)
        or value.datatype != XSD.integer
        or not isinstance(value.value, int)
        or value.value < 0
    ):
        raise ShapeError(
            shape, f"{_name(g, pred)} must be a non-negative integer, not {value.n3()}"
        )
    return value.value


def boolean(g: Graph, shape: Node, pred: URIRef) -> bool:
    """A boolean parameter that defaults to false."""
    value = single(g, shape, pred)
    if value is None:
        return False
    if not isinstance(value, Literal) or not isinstance(value.value, bool):
        raise ShapeError(shape, f"{_name(g, pred)} must be a boolean, not {value.n3()}")
    return value.value


def string(g: Graph, shape: Node, pred: URIRef, value: Node) -> str:
    if not isinstance(value, Literal) or value.datatype not in (None, XSD.string):
        raise ShapeError(shape, f"{_name(g, pred)} must be a string literal, not {value.n3()}")
    return str(value)


def rdf_list(g: Graph, shape: Node, head: Node) -> list[Node]:
    """The members of a well-formed RDF list; cycles and forks are shape errors."""
    members: list[Node] = []
    seen: set[Node] = set()
    node = head
    while node != RDF.nil:
        if node in seen:
            raise ShapeError(shape, "an RDF list is cyclic")
        seen.add(node)
        firsts = list(g.objects(node, RDF.first))
        rests = list(g.objects(node, RDF.rest))
        if len(firsts) != 1 or len(rests) != 1:
            raise ShapeError(shape, f"{node.n3()} is not a well-formed RDF list")
        members.append(firsts[0])
        node = rests[0]
    return members


def compile_regex(shape: Node, pattern: str, flags: str) -> re.Pattern[str]:
    """An XPath regular expression with its flags, as a Python regex.

    The XPath and Python syntaxes agree on everything kgmem's shapes use; a pattern Python
    cannot compile is refused. Flag ``q`` quotes the pattern, as in XPath.
    """
    value = 0
    for flag in flags:
        if flag == "q":
            pattern = re.escape(pattern)
        elif flag in _FLAGS:
            value |= _FLAGS[flag]
        else:
            raise ShapeError(shape, f"unknown sh:flags letter {flag!r}")
    try:
        return re.compile(pattern, value)
    except re.error as exc:
        raise ShapeError(shape, f"sh:pattern {pattern!r}: {exc}") from exc
