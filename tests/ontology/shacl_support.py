"""Helpers shared by the SHACL tests: case files, expectations, report keys."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from rdflib import Graph, URIRef
from rdflib.namespace import RDF, SH

from kgmem.ontology.shacl import (
    GraphHierarchy,
    ValidationReport,
    compile_shapes,
    pyshacl_reference,
)
from kgmem.ontology.shacl_eval import ShapesProgram
from kgmem.ontology.shacl_model import Path as ShaclPath
from tests.test_shapes import read_expectation

REPO = Path(__file__).resolve().parents[2]
CORE_SHAPES = REPO / "shapes" / "core.ttl"
KGMEM_ONTOLOGY = REPO / "ontologies" / "kgmem.ttl"
CORE_CASES = sorted((REPO / "tests" / "data" / "shapes").glob("*.ttl"))
SHACL_CASES = sorted((REPO / "tests" / "data" / "shacl").glob("*.ttl"))

EXPECT = "# expect:"
DATA_MARK = "\n# data\n"
PREFIXES = {
    "ex": "http://example.org/data#",
    "s": "http://example.org/shapes#",
    "sh": str(SH),
    "rdf": str(RDF),
}

#: What two reports must agree on: bnode shapes compare by identity, as both sides read the
#: same rdflib shapes graph object.
Key = tuple[object, ShaclPath | None, URIRef, object]


def keys(report: ValidationReport) -> set[Key]:
    return {
        (r.focus_node, r.result_path, r.constraint_component, r.source_shape)
        for r in report.results
    }


def component_paths(report: ValidationReport) -> set[tuple[str, str]]:
    """(component local name, path) pairs; complex paths read as "complex", none as "-"."""
    found = set()
    for r in report.results:
        name = str(r.constraint_component).rpartition("#")[2]
        path = r.result_path
        found.add(
            (name, "-" if path is None else str(path) if isinstance(path, URIRef) else "complex")
        )
    return found


@cache
def core_shapes() -> Graph:
    return Graph().parse(CORE_SHAPES, format="turtle")


@cache
def kgmem_ontology() -> Graph:
    return Graph().parse(KGMEM_ONTOLOGY, format="turtle")


@cache
def core_program() -> ShapesProgram:
    return compile_shapes(core_shapes())


def core_expectation(path: Path) -> set[tuple[str, str]]:
    """tests/test_shapes.py's expectation in the shape of ``component_paths``."""
    expected = read_expectation(path)
    return {(name, "-" if p is None else str(p)) for name, p in expected.violations}


@dataclass(frozen=True)
class ShaclCase:
    """A tests/data/shacl file: its shapes part, its data part, what it expects."""

    shapes: Graph
    data: Graph
    conforms: bool
    violations: frozenset[tuple[str, str]]


def _expand(token: str) -> str:
    if token in ("-", "complex"):
        return token
    prefix, _, local = token.partition(":")
    return PREFIXES[prefix] + local


def read_case(path: Path) -> ShaclCase:
    text = path.read_text(encoding="utf-8")
    header, _, data = text.partition(DATA_MARK)
    prefixes = "".join(line + "\n" for line in text.splitlines() if line.startswith("@prefix"))
    violations = set()
    conforms = False
    for line in text.splitlines():
        if line.startswith(EXPECT):
            words = line[len(EXPECT) :].split()
            if words == ["conforms"]:
                conforms = True
            else:
                assert len(words) == 3 and words[0] == "violates", line
                violations.add((words[1], _expand(words[2])))
    assert conforms != bool(violations), f"{path.name}: conforms or violates, not both"
    return ShaclCase(
        shapes=Graph().parse(data=header, format="turtle"),
        data=Graph().parse(data=prefixes + data, format="turtle"),
        conforms=conforms,
        violations=frozenset(violations),
    )


def native_and_reference(
    shapes: Graph, data: Graph, ontology: Graph | None
) -> tuple[ValidationReport, ValidationReport]:
    hierarchy = GraphHierarchy(data) if ontology is None else GraphHierarchy(ontology, data)
    program = core_program() if shapes is core_shapes() else compile_shapes(shapes)
    native = program.validate(data, hierarchy)
    return native, pyshacl_reference(shapes, data, ontology)
