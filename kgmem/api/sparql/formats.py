"""What ``/sparql`` answers in: content negotiation and the result serializations.

| query form          | formats (first: the default for ``*/*`` or no ``Accept``)           |
|---------------------|---------------------------------------------------------------------|
| SELECT              | SPARQL JSON, SPARQL XML, CSV, TSV                                   |
| ASK                 | SPARQL JSON, SPARQL XML (CSV and TSV define no boolean)             |
| CONSTRUCT, DESCRIBE | Turtle, N-Triples, JSON-LD, RDF/XML, N3 (written as Turtle, a subset)|

The best offer for the ``Accept`` header wins (the most specific matching range gives each
offer its quality; ties go to the order above); nothing acceptable is a 406 naming what is
offered. Plain ``application/json`` means SPARQL JSON for results and JSON-LD for graphs;
``application/xml`` means SPARQL XML or RDF/XML.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from rdflib import BNode, Graph, URIRef

from kgmem.store import AskResult, GraphResult, QueryResult, SelectResult, Term
from kgmem.vocab import PREFIXES

__all__ = ["Format", "NotAcceptable", "offers_for", "render"]

_RESULTS_NS = "http://www.w3.org/2005/sparql-results#"


@dataclass(frozen=True)
class Format:
    """One serialization: its media type, the others it answers for, and its writer."""

    name: str
    media_type: str
    write: Callable[[Any], bytes]
    aliases: tuple[str, ...] = ()

    @property
    def media_types(self) -> tuple[str, ...]:
        return (self.media_type, *self.aliases)


class NotAcceptable(Exception):
    """No offered format is acceptable to the client (HTTP 406)."""

    def __init__(self, form: str, offers: Sequence[Format]) -> None:
        self.form, self.offers = form, tuple(offers)
        listed = ", ".join(f.media_type for f in offers)
        super().__init__(f"a {form} result can be sent as {listed}; the Accept header allows none")


# -- SELECT and ASK ------------------------------------------------------------------------


def _json_term(term: Term) -> dict[str, str]:
    if isinstance(term, URIRef):
        return {"type": "uri", "value": str(term)}
    if isinstance(term, BNode):
        return {"type": "bnode", "value": str(term)}
    out = {"type": "literal", "value": str(term)}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype is not None:
        out["datatype"] = str(term.datatype)
    return out


def _select_json(result: SelectResult) -> bytes:
    bindings = [{k: _json_term(v) for k, v in row.items()} for row in result.rows]
    body = {"head": {"vars": list(result.variables)}, "results": {"bindings": bindings}}
    return json.dumps(body, ensure_ascii=False).encode()


def _ask_json(result: AskResult) -> bytes:
    return json.dumps({"head": {}, "boolean": result.value}).encode()


def _xml_term(term: Term) -> str:
    if isinstance(term, URIRef):
        return f"<uri>{escape(str(term))}</uri>"
    if isinstance(term, BNode):
        return f"<bnode>{escape(str(term))}</bnode>"
    attribute = ""
    if term.language:
        attribute = f" xml:lang={quoteattr(term.language)}"
    elif term.datatype is not None:
        attribute = f" datatype={quoteattr(str(term.datatype))}"
    return f"<literal{attribute}>{escape(str(term))}</literal>"


def _xml(head: str, body: str) -> bytes:
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n<sparql xmlns="{_RESULTS_NS}">'
        f"<head>{head}</head>{body}</sparql>\n"
    ).encode()


def _select_xml(result: SelectResult) -> bytes:
    head = "".join(f"<variable name={quoteattr(v)}/>" for v in result.variables)
    rows = "".join(
        "<result>"
        + "".join(f"<binding name={quoteattr(k)}>{_xml_term(v)}</binding>" for k, v in row.items())
        + "</result>"
        for row in result.rows
    )
    return _xml(head, f"<results>{rows}</results>")


def _ask_xml(result: AskResult) -> bytes:
    return _xml("", f"<boolean>{'true' if result.value else 'false'}</boolean>")


def _csv_term(term: Term | None) -> str:
    if term is None:
        return ""
    return f"_:{term}" if isinstance(term, BNode) else str(term)


def _select_csv(result: SelectResult) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(result.variables)
    for row in result.rows:
        writer.writerow([_csv_term(row.get(v)) for v in result.variables])
    return out.getvalue().encode()


_TSV_ESCAPES = str.maketrans({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _tsv_term(term: Term | None) -> str:
    if term is None:
        return ""
    if isinstance(term, URIRef):
        return f"<{term}>"
    if isinstance(term, BNode):
        return f"_:{term}"
    text = f'"{str(term).translate(_TSV_ESCAPES)}"'
    if term.language:
        return f"{text}@{term.language}"
    return text if term.datatype is None else f"{text}^^<{term.datatype}>"


def _select_tsv(result: SelectResult) -> bytes:
    lines = ["\t".join(f"?{v}" for v in result.variables)]
    lines += ["\t".join(_tsv_term(row.get(v)) for v in result.variables) for row in result.rows]
    return ("\n".join(lines) + "\n").encode()


# -- CONSTRUCT and DESCRIBE ----------------------------------------------------------------


def _graph(result: GraphResult) -> Graph:
    graph = Graph()
    for prefix, namespace in PREFIXES.items():
        graph.bind(prefix, namespace, override=True, replace=True)
    for triple in result.triples:
        graph.add(triple)
    return graph


def _rdf(fmt: str) -> Callable[[GraphResult], bytes]:
    def write(result: GraphResult) -> bytes:
        return _graph(result).serialize(format=fmt, encoding="utf-8")

    return write


SELECT_FORMATS = (
    Format("json", "application/sparql-results+json", _select_json, ("application/json",)),
    Format("xml", "application/sparql-results+xml", _select_xml, ("application/xml",)),
    Format("csv", "text/csv", _select_csv),
    Format("tsv", "text/tab-separated-values", _select_tsv),
)
ASK_FORMATS = (
    Format("json", "application/sparql-results+json", _ask_json, ("application/json",)),
    Format("xml", "application/sparql-results+xml", _ask_xml, ("application/xml",)),
)
GRAPH_FORMATS = (
    Format("turtle", "text/turtle", _rdf("turtle"), ("application/turtle", "application/x-turtle")),
    Format("ntriples", "application/n-triples", _rdf("nt")),
    Format("jsonld", "application/ld+json", _rdf("json-ld"), ("application/json",)),
    Format("rdfxml", "application/rdf+xml", _rdf("xml"), ("application/xml",)),
    Format("n3", "text/n3", _rdf("turtle"), ("text/rdf+n3",)),
)


def offers_for(result: QueryResult) -> tuple[str, tuple[Format, ...]]:
    """The query form of ``result`` and the formats it can be sent in."""
    if isinstance(result, SelectResult):
        return "SELECT", SELECT_FORMATS
    if isinstance(result, AskResult):
        return "ASK", ASK_FORMATS
    return "CONSTRUCT/DESCRIBE", GRAPH_FORMATS


# -- negotiation ---------------------------------------------------------------------------


def _ranges(accept: str) -> list[tuple[str, str, float]]:
    """(type, subtype, quality) of each media range of an Accept header."""
    ranges = []
    for item in accept.split(","):
        media, *params = (part.strip() for part in item.split(";"))
        kind, _, subtype = media.lower().partition("/")
        if not kind or not subtype:
            continue
        quality = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = min(max(float(value), 0.0), 1.0)
                except ValueError:
                    quality = 0.0
        ranges.append((kind, subtype, quality))
    return ranges


def _quality(media_type: str, ranges: list[tuple[str, str, float]]) -> float:
    """The quality the most specific range matching ``media_type`` gives it (0: none)."""
    kind, _, subtype = media_type.partition("/")
    best_specificity, quality = -1, 0.0
    for r_kind, r_subtype, r_quality in ranges:
        if (r_kind, r_subtype) == (kind, subtype):
            specificity = 2
        elif r_kind == kind and r_subtype == "*":
            specificity = 1
        elif (r_kind, r_subtype) == ("*", "*"):
            specificity = 0
        else:
            continue
        if specificity > best_specificity:
            best_specificity, quality = specificity, r_quality
    return quality


def negotiate(accept: str | None, offers: Sequence[Format]) -> Format | None:
    """The offer the client prefers (ties: the first offered); None if none is acceptable."""
    ranges = _ranges(accept or "")
    if not ranges:
        return offers[0]
    best, best_quality = None, 0.0
    for offer in offers:
        quality = max(_quality(m, ranges) for m in offer.media_types)
        if quality > best_quality:
            best, best_quality = offer, quality
    return best


def render(result: QueryResult, accept: str | None) -> tuple[Format, bytes]:
    """The format ``accept`` chooses for ``result`` and the result written in it."""
    form, offers = offers_for(result)
    chosen = negotiate(accept, offers)
    if chosen is None:
        raise NotAcceptable(form, offers)
    return chosen, chosen.write(result)
