"""Focus-node scoping and compile-time refusals (ShapeError) of the native validator."""

from __future__ import annotations

import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.namespace import RDF, SH, XSD

from kgmem.errors import KgmemError, ShapeError
from kgmem.ontology.shacl import GraphHierarchy, compile_shapes, pyshacl_reference
from kgmem.vocab import KGM
from tests.ontology.shacl_support import (
    CORE_CASES,
    core_program,
    core_shapes,
    keys,
    kgmem_ontology,
)

EX = "https://example.org/kgmem-test/"
PREFIXES = """@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix ex: <http://example.org/data#> .
@prefix s: <http://example.org/shapes#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
"""


def _patch() -> Graph:
    """A conforming memory (ex:m1) and a second memory without title or kind (ex:m2)."""
    case = next(p for p in CORE_CASES if p.stem == "memory_semantic_active_conforms")
    data = Graph().parse(case, format="turtle")
    m2 = URIRef(EX + "m2")
    data.add((m2, RDF.type, KGM.Memory))
    data.add((m2, KGM.status, KGM.proposed))
    data.add((m2, KGM.confidence, Literal("0.5", datatype=XSD.double)))
    return data


def test_focus_nodes_validate_only_those_nodes() -> None:
    data = _patch()
    hierarchy = GraphHierarchy(kgmem_ontology(), data)
    m1, m2 = URIRef(EX + "m1"), URIRef(EX + "m2")

    full = core_program().validate(data, hierarchy)
    only_m2 = core_program().validate(data, hierarchy, [m2])
    only_m1 = core_program().validate(data, hierarchy, [m1, URIRef(EX + "m1-ev1")])

    assert {r.focus_node for r in full.results} == {m2}
    assert keys(only_m2) == keys(full)
    assert only_m1.conforms and only_m1.results == ()
    assert core_program().validate(data, hierarchy, []).conforms


def test_focus_nodes_match_pyshacl_focus_nodes() -> None:
    data = _patch()
    focus = [URIRef(EX + "m2"), URIRef(EX + "m1-ev1"), URIRef(EX + "msg1")]

    native = core_program().validate(data, GraphHierarchy(kgmem_ontology(), data), focus)
    reference = pyshacl_reference(core_shapes(), data, kgmem_ontology(), focus)

    assert keys(native) == keys(reference)
    assert not native.conforms


def test_focus_nodes_may_be_blank_nodes() -> None:
    data = _patch()
    evidence = BNode()
    data.add((URIRef(EX + "m2"), KGM.evidence, evidence))
    data.add((evidence, KGM.source, URIRef(EX + "msg1")))

    report = core_program().validate(data, GraphHierarchy(kgmem_ontology()), [evidence])

    assert {r.focus_node for r in report.results} == {evidence}
    assert SH.MinCountConstraintComponent in {r.constraint_component for r in report.results}


def _compile(shapes: str) -> None:
    compile_shapes(Graph().parse(data=PREFIXES + shapes, format="turtle"))


@pytest.mark.parametrize(
    ("shapes", "reason"),
    [
        ('s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:minCount "x" ] .', "minCount"),
        ("s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:minCount -1 ] .", "minCount"),
        (
            "s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:maxCount 1, 2 ] .",
            "at most one",
        ),
        ('s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:datatype "x" ] .', "IRI"),
        ("s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:nodeKind ex:x ] .", "node kind"),
        ('s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:pattern "(" ] .', "pattern"),
        (
            "s:S sh:targetNode ex:a ; "
            'sh:property [ sh:path ex:p ; sh:pattern "a" ; sh:flags "z" ] .',
            "flags",
        ),
        ("s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; sh:in ex:notAList ] .", "list"),
        ("s:S sh:targetNode ex:a ; sh:property [ sh:path [ ex:weird ex:p ] ] .", "sh:path"),
        ("s:S sh:targetNode ex:a ; sh:property [ sh:minCount 1 ] .", "needs an sh:path"),
        ("s:S sh:targetNode ex:a ; sh:minCount 1 .", "property shape"),
        ("s:S sh:targetNode ex:a ; sh:closed 1 .", "boolean"),
        ("s:S sh:targetNode ex:a ; sh:node s:S .", "recursive"),
        (
            "s:S sh:targetNode ex:a ; sh:property [ sh:path ex:p ; "
            "sh:qualifiedValueShape [ sh:datatype xsd:string ] ; sh:qualifiedMinCount 1 ] .",
            "sh:qualified",
        ),
        ("s:S sh:targetNode ex:a ; sh:target [ a ex:Target ] .", "sh:target"),
        ("s:S sh:targetNode ex:a ; sh:madeUp 1 .", "not supported"),
        ("ex:C a sh:ConstraintComponent ; sh:parameter [ sh:path ex:q ] .", "custom constraint"),
        ('s:S sh:targetNode ex:a ; sh:sparql [ sh:ask "ASK { ?s ?p ?o }" ] .', "sh:select"),
        ('s:S sh:targetNode ex:a ; sh:sparql [ sh:select "SELECT $this WHERE { " ] .', "parse"),
        (
            "s:S sh:targetNode ex:a ; sh:sparql [ sh:select "
            '"SELECT $this WHERE { VALUES ?x { 1 } }" ] .',
            "VALUES",
        ),
        (
            "s:S sh:targetNode ex:a ; sh:sparql [ sh:select "
            '"SELECT $this WHERE { $this ?p $shapesGraph }" ] .',
            "shapesGraph",
        ),
        (
            "s:S sh:targetNode ex:a ; "
            'sh:sparql [ sh:select "SELECT $this WHERE { $this $PATH ?v }" ] .',
            "$PATH",
        ),
    ],
)
def test_unsupported_or_malformed_shapes_raise_shape_error(shapes: str, reason: str) -> None:
    with pytest.raises(ShapeError) as caught:
        _compile(shapes)

    assert reason in str(caught.value)
    assert isinstance(caught.value, KgmemError)
    assert caught.value.reason in str(caught.value)


def test_shape_error_names_the_shape() -> None:
    with pytest.raises(ShapeError) as caught:
        _compile('s:S sh:targetNode ex:a ; sh:minLength "long" ; sh:path ex:p .')

    assert caught.value.shape == URIRef("http://example.org/shapes#S")
    assert "<http://example.org/shapes#S>" in str(caught.value)


def test_owl_class_shape_is_an_implicit_class_target_without_declaring_it() -> None:
    shapes = Graph().parse(
        data=PREFIXES + "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "s:Person a owl:Class , sh:NodeShape ; sh:property [ sh:path ex:name ; sh:minCount 1 ] .",
        format="turtle",
    )
    data = Graph()
    data.add(
        (
            URIRef("http://example.org/data#bob"),
            RDF.type,
            URIRef("http://example.org/shapes#Person"),
        )
    )

    report = compile_shapes(shapes).validate(data, GraphHierarchy())

    assert [r.constraint_component for r in report.results] == [SH.MinCountConstraintComponent]
