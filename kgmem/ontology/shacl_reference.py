"""pySHACL as the reference implementation, returning kgmem's report type (tests, debugging)."""

from __future__ import annotations

from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, SH
from rdflib.term import Node

from kgmem.errors import ShapeError
from kgmem.ontology.shacl_compile import parse_path
from kgmem.ontology.shacl_model import Path, ValidationReport, ValidationResult

__all__ = ["pyshacl_reference"]


def pyshacl_reference(
    shapes: Graph,
    data: Graph,
    ont: Graph | None = None,
    focus_nodes: list[URIRef] | None = None,
) -> ValidationReport:
    """Validate with pySHACL (``inference="none"``) and convert its results graph."""
    from pyshacl import validate  # imported here: pySHACL is slow to import and only for tests

    conforms, report, _ = validate(
        data,
        shacl_graph=shapes,
        ont_graph=ont,
        inference="none",
        abort_on_first=False,
        allow_warnings=False,
        focus_nodes=None if focus_nodes is None else list[str | URIRef](focus_nodes),
    )
    assert isinstance(report, Graph)
    # pySHACL also lists the nested results of sh:node as sh:detail; SHACL reports only the
    # top-level ones, and so does the native validator.
    details = set(report.objects(None, SH.detail))
    results = tuple(
        _result(report, shapes, node)
        for node in report.subjects(RDF.type, SH.ValidationResult)
        if node not in details
    )
    return ValidationReport(conforms=bool(conforms), results=results)


def _path(report: Graph, shapes: Graph, node: Node | None) -> Path | None:
    if node is None:
        return None
    try:
        return parse_path(report, node, node)
    except ShapeError:
        return parse_path(shapes, node, node)


def _result(report: Graph, shapes: Graph, node: Node) -> ValidationResult:
    def one(pred: URIRef) -> Node | None:
        return report.value(node, pred)

    focus, shape, component = (
        one(SH.focusNode),
        one(SH.sourceShape),
        one(SH.sourceConstraintComponent),
    )
    severity = one(SH.resultSeverity)
    assert focus is not None and shape is not None
    assert isinstance(component, URIRef) and isinstance(severity, URIRef)
    messages = sorted(
        str(m) for m in report.objects(node, SH.resultMessage) if isinstance(m, Literal)
    )
    return ValidationResult(
        focus_node=focus,
        result_path=_path(report, shapes, one(SH.resultPath)),
        value=one(SH.value),
        source_shape=shape,
        constraint_component=component,
        severity=severity,
        message=messages[0] if messages else None,
    )
