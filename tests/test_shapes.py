"""Data-driven tests of shapes/core.ttl against ontologies/kgmem.ttl.

Each file in tests/data/shapes/ is one case. Its leading comment lines state the expectation:

    # expect: conforms
    # expect: violates <ConstraintComponentLocalName> <path>

with one ``violates`` line per expected (component, path) pair; ``<path>`` is a ``kgm:``/``sh:``
prefixed name, a full IRI (optionally in angle brackets), or ``-`` for a result without a path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest
from pyshacl import validate
from rdflib import RDF, RDFS, SH, Graph, Namespace, URIRef
from rdflib.compare import to_canonical_graph
from rdflib.namespace import OWL
from rdflib.term import Node

ROOT = Path(__file__).resolve().parent.parent
ONTOLOGY = ROOT / "ontologies" / "kgmem.ttl"
SHAPES = ROOT / "shapes" / "core.ttl"
CASES_DIR = ROOT / "tests" / "data" / "shapes"
CASE_FILES = sorted(CASES_DIR.glob("*.ttl"))

KGM = Namespace("https://w3id.org/kgmem/ns#")
PREFIXES = {"kgm": str(KGM), "sh": str(SH), "rdf": str(RDF), "rdfs": str(RDFS)}
EXPECT = "# expect:"
MIN_CASES = 20
MIN_PER_OUTCOME = 8

Violation = tuple[str, URIRef | None]


@dataclass(frozen=True)
class Expectation:
    """What a case file says validation must report."""

    conforms: bool
    violations: frozenset[Violation]


@cache
def ontology() -> Graph:
    return Graph().parse(ONTOLOGY, format="turtle")


@cache
def shapes() -> Graph:
    return Graph().parse(SHAPES, format="turtle")


def _expand(token: str) -> URIRef | None:
    if token == "-":
        return None
    if token.startswith("<") and token.endswith(">"):
        return URIRef(token[1:-1])
    prefix, sep, local = token.partition(":")
    if sep and prefix in PREFIXES:
        return URIRef(PREFIXES[prefix] + local)
    if "://" in token:
        return URIRef(token)
    raise ValueError(f"cannot read path {token!r}")


def read_expectation(path: Path) -> Expectation:
    """Parse the ``# expect:`` header lines of a case file."""
    conforms = False
    violations: set[Violation] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith(EXPECT):
            continue
        words = line[len(EXPECT) :].split()
        if words == ["conforms"]:
            conforms = True
        elif len(words) == 3 and words[0] == "violates":
            violations.add((words[1], _expand(words[2])))
        else:
            raise ValueError(f"{path.name}: malformed expectation {line!r}")
    if conforms == bool(violations):
        raise ValueError(f"{path.name}: expect either 'conforms' or 'violates' lines")
    return Expectation(conforms, frozenset(violations))


def _component_name(node: Node | None) -> str:
    if not isinstance(node, URIRef):
        raise TypeError(f"unexpected constraint component {node!r}")
    return str(node).rpartition("#")[2]


def reported_violations(report: Graph) -> frozenset[Violation]:
    """The (component local name, result path) pairs of a pySHACL report."""
    found: set[Violation] = set()
    for result in report.subjects(RDF.type, SH.ValidationResult):
        path = report.value(result, SH.resultPath)
        if path is not None and not isinstance(path, URIRef):
            raise TypeError(f"complex result paths are not expected here: {path!r}")
        found.add((_component_name(report.value(result, SH.sourceConstraintComponent)), path))
    return frozenset(found)


def _kgm_terms(graph: Graph) -> set[URIRef]:
    nodes = set(graph.subjects()) | set(graph.predicates()) | set(graph.objects())
    return {n for n in nodes if isinstance(n, URIRef) and n.startswith(str(KGM))}


@pytest.mark.parametrize("case", CASE_FILES, ids=[p.stem for p in CASE_FILES])
def test_shapes_case_matches_expectation(case: Path) -> None:
    expected = read_expectation(case)
    data = Graph().parse(case, format="turtle")

    conforms, report, text = validate(
        data,
        shacl_graph=shapes(),
        ont_graph=ontology(),
        inference="none",
        abort_on_first=False,
        allow_warnings=False,
    )

    assert isinstance(report, Graph)
    assert conforms is expected.conforms, text
    assert reported_violations(report) == expected.violations, text


def test_shapes_cases_cover_both_outcomes() -> None:
    outcomes = [read_expectation(path).conforms for path in CASE_FILES]

    assert len(outcomes) >= MIN_CASES
    assert outcomes.count(True) >= MIN_PER_OUTCOME
    assert outcomes.count(False) >= MIN_PER_OUTCOME


def test_shapes_cases_are_distinct_graphs() -> None:
    seen: dict[frozenset[tuple[Node, Node, Node]], str] = {}
    for path in CASE_FILES:
        key = frozenset(to_canonical_graph(Graph().parse(path, format="turtle")))

        assert key not in seen, f"{path.name} is the same graph as {seen.get(key)}"
        seen[key] = path.name


def test_ontology_terms_have_label_and_comment() -> None:
    graph = ontology()
    declared = {
        s
        for cls in (
            OWL.Class,
            OWL.ObjectProperty,
            OWL.DatatypeProperty,
            OWL.AnnotationProperty,
            RDF.Property,
            OWL.NamedIndividual,
        )
        for s in graph.subjects(RDF.type, cls)
        if isinstance(s, URIRef)
    }
    missing = sorted(
        str(term)
        for term in declared
        if graph.value(term, RDFS.label) is None or graph.value(term, RDFS.comment) is None
    )

    assert len(declared) > 100
    assert missing == []


def test_ontology_header_declares_version() -> None:
    graph = ontology()
    header = URIRef(str(KGM).rstrip("#"))

    assert (header, RDF.type, OWL.Ontology) in graph
    assert str(graph.value(header, OWL.versionInfo)) == "0.1.0"


def test_ontology_terms_all_declared() -> None:
    graph = ontology()
    declared = {s for s in graph.subjects(RDF.type, None) if isinstance(s, URIRef)}

    assert sorted(map(str, _kgm_terms(graph) - declared)) == []


def test_shapes_use_only_declared_terms() -> None:
    declared = {s for s in ontology().subjects(RDF.type, None) if isinstance(s, URIRef)}

    assert sorted(map(str, _kgm_terms(shapes()) - declared)) == []


def test_ontology_required_terms_exist() -> None:
    graph = ontology()
    classes = [
        "Memory", "MemoryKind", "MemoryStatus", "Claim", "Evidence", "SourceType",
        "SupportKind", "Source", "Message", "TaskRecord", "ExternalNote", "ShortNote",
        "Entity", "Shell", "Page", "PageRevision", "Decision", "ConsolidationPass",
        "StageCheckpoint",
    ]  # fmt: skip
    functional = [
        "kind", "status", "title", "confidence", "pinned", "occurredAt", "source",
        "spanStart", "spanEnd", "supportKind", "turn", "role", "text", "revision",
        "markdown", "action", "target", "stage", "checkpointOf",
    ]  # fmt: skip

    for name in classes:
        assert (KGM[name], RDF.type, OWL.Class) in graph, name
    for name in functional:
        assert (KGM[name], RDF.type, OWL.FunctionalProperty) in graph, name
    assert len(list(graph.subjects(RDF.type, KGM.MemoryKind))) == 4
    assert len(list(graph.subjects(RDF.type, KGM.MemoryStatus))) == 9
    assert len(list(graph.subjects(RDF.type, KGM.SourceType))) == 6
    assert len(list(graph.subjects(RDF.type, KGM.Stage))) == 9
