"""The native SHACL validator agrees with pySHACL and with every case file's expectation."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS, SH

from kgmem.ontology.shacl import GraphHierarchy, compile_shapes
from kgmem.ontology.shacl_sparql import SparqlData, query_predicates
from kgmem.vocab import KGM
from tests.ontology.shacl_support import (
    CORE_CASES,
    SHACL_CASES,
    component_paths,
    core_expectation,
    core_program,
    core_shapes,
    keys,
    kgmem_ontology,
    native_and_reference,
    read_case,
)

EX = "http://example.org/data#"


@pytest.mark.parametrize("case", CORE_CASES, ids=[p.stem for p in CORE_CASES])
def test_core_case_native_equals_pyshacl_and_expectation(case: Path) -> None:
    data = Graph().parse(case, format="turtle")

    native, reference = native_and_reference(core_shapes(), data, kgmem_ontology())

    assert keys(native) == keys(reference)
    assert native.conforms is reference.conforms
    assert component_paths(native) == core_expectation(case)


@pytest.mark.parametrize("case", SHACL_CASES, ids=[p.stem for p in SHACL_CASES])
def test_shacl_case_native_equals_pyshacl_and_expectation(case: Path) -> None:
    parsed = read_case(case)

    native, reference = native_and_reference(parsed.shapes, parsed.data, None)

    assert keys(native) == keys(reference)
    assert native.conforms is reference.conforms is parsed.conforms
    assert component_paths(native) == parsed.violations


def test_shacl_cases_cover_both_outcomes() -> None:
    outcomes = [read_case(path).conforms for path in SHACL_CASES]

    assert len(outcomes) >= 40
    assert outcomes.count(True) >= 10
    assert outcomes.count(False) >= 25


def test_results_carry_severity_message_and_value() -> None:
    case = read_case(next(p for p in SHACL_CASES if p.stem == "severity_warning_violates"))
    sparql = read_case(next(p for p in SHACL_CASES if p.stem == "sparql_node_shape_violates"))

    (warning,) = compile_shapes(case.shapes).validate(case.data, GraphHierarchy()).results
    (span,) = compile_shapes(sparql.shapes).validate(sparql.data, GraphHierarchy()).results

    assert (warning.severity, warning.message, warning.value) == (SH.Warning, "Name it.", None)
    assert span.value == Literal(3)
    assert span.message == "span 3 ends before it starts"


def test_graph_hierarchy_is_reflexive_and_transitive() -> None:
    g = Graph()
    a, b, c = URIRef(EX + "A"), URIRef(EX + "B"), URIRef(EX + "C")
    g.add((a, RDFS.subClassOf, b))
    g.add((b, RDFS.subClassOf, c))
    g.add((c, RDFS.subClassOf, a))

    assert GraphHierarchy(g).ancestors(a) == frozenset({a, b, c})
    assert GraphHierarchy(g).ancestors(URIRef(EX + "D")) == frozenset({URIRef(EX + "D")})


def test_class_membership_uses_only_the_injected_hierarchy() -> None:
    data = Graph()
    message, evidence = URIRef(EX + "msg"), BNode()
    data.add((message, RDF.type, KGM.Message))
    data.add((URIRef(EX + "memory"), KGM.evidence, evidence))
    data.add((evidence, KGM.source, message))

    with_ontology = core_program().validate(data, GraphHierarchy(kgmem_ontology()))
    without = core_program().validate(data, GraphHierarchy())

    # kgm:Message is a kgm:Source only through the ontology's rdfs:subClassOf.
    found = {(r.constraint_component, r.result_path) for r in with_ontology.results}
    missing = {(r.constraint_component, r.result_path) for r in without.results}
    assert (SH.MinCountConstraintComponent, KGM.text) in found - missing
    assert (SH.ClassConstraintComponent, KGM.source) in missing - found


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("SELECT * { ?s <urn:p> ?o }", {"urn:p"}),
        ("SELECT * { ?s a <urn:C> ; <urn:p>/^<urn:q> ?o }", {str(RDF.type), "urn:p", "urn:q"}),
        ("SELECT * { ?s (<urn:p>|<urn:q>)+ ?o . ?o <urn:r>? ?x }", {"urn:p", "urn:q", "urn:r"}),
        ("SELECT * { ?s <urn:p> [ <urn:q> ?o ] }", {"urn:p", "urn:q"}),
        ("SELECT * { ?s <urn:p> ?o FILTER NOT EXISTS { ?o <urn:q>* ?x } }", {"urn:p", "urn:q"}),
        ("SELECT * { ?s <urn:p> ?o OPTIONAL { ?o <urn:q> ?x } }", {"urn:p", "urn:q"}),
        ("SELECT * { { SELECT ?s { ?s <urn:sub> ?x } } ?s <urn:p> ?o }", {"urn:p", "urn:sub"}),
        ("SELECT * { ?s ?p ?o }", None),
        ("SELECT * { ?s <urn:p> ?o FILTER EXISTS { ?o ?any ?x } }", None),
        ("SELECT * { ?s !<urn:p> ?o }", None),
        ("SELECT * { ?s <urn:p> ?o", None),  # rdflib cannot parse it: any predicate
    ],
)
def test_query_predicates_are_every_predicate_a_pattern_names(
    query: str, expected: set[str] | None
) -> None:
    found = query_predicates(query)

    assert found == (None if expected is None else {URIRef(p) for p in expected})


def test_sparql_data_holds_only_the_predicates_the_queries_name() -> None:
    program = core_program()
    triples = [
        (URIRef(EX + "e"), KGM.source, URIRef(EX + "m")),
        (URIRef(EX + "e"), RDF.type, KGM.Evidence),
    ]

    data = SparqlData((triples,), program.sparql_predicates)

    assert program.sparql_predicates is not None and KGM.source in program.sparql_predicates
    assert [q.predicate.value for q in data.store()] == [str(KGM.source)]
