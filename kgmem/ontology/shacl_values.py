"""Per-value-node tests of SHACL Core (sh:datatype, sh:minInclusive, sh:pattern, ...).

The literal semantics follow pySHACL (the reference the tests compare against), which follows
rdflib: a literal matches its datatype when it is not ill-typed, and ordering compares rdflib
literal values, with strings never comparable to non-strings.
"""

from __future__ import annotations

import datetime
from decimal import Decimal

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import RDF, RDFS, XSD
from rdflib.term import Node

from kgmem.ontology.shacl_model import (
    Bound,
    DatatypeIs,
    KindIs,
    LanguageIn,
    Length,
    Matches,
    OneOf,
)

__all__ = ["compare", "kind_of", "passes", "text_of"]

_PYTHON_TYPES: dict[URIRef, type | tuple[type, ...]] = {
    XSD.string: (str, bytes),
    RDF.langString: (str, bytes),
    XSD.integer: int,
    XSD.float: float,
    XSD.decimal: Decimal,
    XSD.boolean: bool,
    XSD.date: datetime.date,
    XSD.time: datetime.time,
    XSD.dateTime: datetime.datetime,
}
_TEXT_DATATYPES = (None, RDF.langString, XSD.string)


def kind_of(node: Node) -> str:
    if isinstance(node, BNode):
        return "bnode"
    return "literal" if isinstance(node, Literal) else "iri"


def text_of(node: Node) -> str:
    """The string a length or pattern constraint reads (lexical form, or the IRI)."""
    if isinstance(node, Literal) and node.value is not None and node.datatype in _TEXT_DATATYPES:
        return str(node.value)
    return str(node)


def _has_datatype(value: Node, datatype: URIRef) -> bool:
    if not isinstance(value, Literal):
        return False
    if datatype == RDFS.Literal:
        return True
    if value.datatype == datatype:
        if getattr(value, "ill_typed", None) is True:
            return False
    elif datatype == RDFS.Datatype and value.datatype is not None:
        return True
    elif not (
        (datatype == XSD.string and value.datatype is None and value.language is None)
        or (datatype == RDF.langString and value.language)
    ):
        return False
    expected = _PYTHON_TYPES.get(datatype)
    return expected is None or isinstance(value.value, expected)


def compare(left: Node, right: Node) -> int | None:
    """-1, 0 or 1 when the two literals are comparable, else None."""
    if not isinstance(left, Literal) or not isinstance(right, Literal):
        return None
    if isinstance(left.value, str) != isinstance(right.value, str):
        return None
    try:
        if left.eq(right):
            return 0
        if isinstance(left.value, datetime.datetime | datetime.time):
            if left.value == right.value:
                return 0
            return 1 if left.value > right.value else -1
        return 1 if left > right else -1
    except (TypeError, NotImplementedError):
        return None


def _lang_matches(tag: str, ranges: tuple[str, ...]) -> bool:
    tag = tag.lower()
    for lang_range in ranges:
        wanted = lang_range.lower()
        if wanted == "*" or tag == wanted or tag.startswith(wanted + "-"):
            return True
    return False


def passes(test: object, value: Node) -> bool:
    """Whether one value node satisfies a per-value test (not sh:class: that needs the data)."""
    if isinstance(test, DatatypeIs):
        return _has_datatype(value, test.datatype)
    if isinstance(test, KindIs):
        return kind_of(value) in test.kinds
    if isinstance(test, OneOf):
        return value in test.values
    if isinstance(test, Bound):
        return compare(value, test.limit) in test.order
    if isinstance(test, Length):
        if isinstance(value, BNode):
            return not test.is_max and test.limit == 0
        size = len(text_of(value))
        return size <= test.limit if test.is_max else size >= test.limit
    if isinstance(test, Matches):
        return not isinstance(value, BNode) and test.regex.search(text_of(value)) is not None
    if isinstance(test, LanguageIn):
        return (
            isinstance(value, Literal)
            and bool(value.language)
            and _lang_matches(str(value.language), test.ranges)
        )
    raise TypeError(f"not a value test: {test!r}")
