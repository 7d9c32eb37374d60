"""The validation service: scoped SHACL plus disjointness, functionality, domain and range."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import XSD

from kgmem.ontology import bundled_files, ensure_bundled
from kgmem.ontology.delta import DeclareClass, DeltaPatch, Provenance
from kgmem.ontology.service import OntologyService
from kgmem.ontology.validation import ValidationService, ViolationKind
from kgmem.store import (
    Changeset,
    OxigraphStore,
    Quad,
    QueryRegistry,
    RdfFormat,
    UserGraphs,
    catalogue_graph,
    shapes_graph,
)
from kgmem.vocab import KGM, RC, RDF, SDO, SH

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "tests" / "data" / "shapes" / "memory_semantic_active_conforms.ttl"
ALICE = UserGraphs("alice")
EX = "https://example.org/kgmem-test/"


def ex(name: str) -> URIRef:
    return URIRef(EX + name)


@pytest.fixture
def services(
    store: OxigraphStore, queries: QueryRegistry
) -> tuple[OntologyService, ValidationService]:
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    store.load(
        (REPO / "ontologies" / "starter.ttl").read_bytes(),
        RdfFormat.TURTLE,
        catalogue_graph("starter"),
    )
    ontology = OntologyService(store, queries)
    return ontology, ValidationService(store, queries, ontology)


def case_patch(graph: URIRef = ALICE.kg) -> Changeset:
    g = Graph().parse(CASE)
    return Changeset.of(Quad(s, p, o, graph) for s, p, o in g)  # type: ignore[arg-type]


def entity(name: str, *types: URIRef) -> list[Quad]:
    node = ex(name)
    quads = [
        Quad(node, RDF.type, KGM.Entity, ALICE.kg),
        Quad(node, KGM.name, Literal(name), ALICE.kg),
    ]
    return quads + [Quad(node, RDF.type, t, ALICE.kg) for t in types]


def test_a_grounded_memory_conforms(services: tuple[OntologyService, ValidationService]) -> None:
    report = services[1].validate("alice", case_patch())
    assert report.conforms, report.violations
    assert ex("m1") in report.focus_nodes


def test_shacl_violation_is_reported_per_focus_node(
    services: tuple[OntologyService, ValidationService],
) -> None:
    patch = case_patch()
    bad = Changeset.of(
        [q for q in patch.add if q.predicate != KGM.confidence]
        + [Quad(ex("m1"), KGM.confidence, Literal(1.5), ALICE.kg)]
    )
    report = services[1].validate("alice", bad)
    assert not report.conforms
    [violation] = report.for_node(ex("m1"))
    assert violation.kind is ViolationKind.SHACL
    assert violation.constraint == SH.MaxInclusiveConstraintComponent
    assert violation.path == KGM.confidence and violation.value == Literal(1.5)


def test_a_person_typed_as_an_organization_fails(
    services: tuple[OntologyService, ValidationService],
) -> None:
    report = services[1].validate(
        "alice", Changeset.of(entity("Bob", SDO.Person, SDO.Organization))
    )
    [violation] = [v for v in report.violations if v.kind is ViolationKind.DISJOINT]
    assert violation.focus == ex("Bob")
    assert violation.proof is not None
    assert violation.proof.axiom.graph == catalogue_graph("starter")


def test_mercury_as_planet_and_element_fails(
    services: tuple[OntologyService, ValidationService],
) -> None:
    report = services[1].validate(
        "alice", Changeset.of(entity("Mercury", RC.Planet, RC.ChemicalElement))
    )
    assert [v.kind for v in report.violations] == [ViolationKind.DISJOINT]


def test_functional_property_against_the_stored_value(
    services: tuple[OntologyService, ValidationService],
    store: OxigraphStore,
) -> None:
    born = Quad(ex("Ann"), SDO.birthDate, Literal("1990-01-01", datatype=XSD.date), ALICE.kg)
    store.commit(Changeset.of([*entity("Ann", SDO.Person), born]))
    second = Quad(ex("Ann"), SDO.birthDate, Literal("1991-02-02", datatype=XSD.date), ALICE.kg)
    report = services[1].validate("alice", Changeset.of([second]))
    [violation] = report.violations
    assert violation.kind is ViolationKind.FUNCTIONAL and violation.path == SDO.birthDate
    corrected = services[1].validate("alice", Changeset.of(add=[second], remove=[born]))
    assert corrected.conforms, corrected.violations


@pytest.mark.parametrize("other_facts", [0, 10, 200])
def test_an_entitys_stored_facts_are_read_only_where_the_patch_needs_them(
    services: tuple[OntologyService, ValidationService],
    store: OxigraphStore,
    other_facts: int,
) -> None:
    """An entity with few facts is read in one sweep, a hub with many by key; either way
    its stored single value is seen and its unrelated facts stay out of the data graph."""
    born = Quad(ex("Ann"), SDO.birthDate, Literal("1990-01-01", datatype=XSD.date), ALICE.kg)
    known = [Quad(ex("Ann"), SDO.knows, ex(f"friend{i}"), ALICE.kg) for i in range(other_facts)]
    store.commit(Changeset.of([*entity("Ann", SDO.Person), born, *known]))
    second = Quad(ex("Ann"), SDO.birthDate, Literal("1991-02-02", datatype=XSD.date), ALICE.kg)
    report = services[1].validate("alice", Changeset.of([second]))
    [violation] = report.violations
    assert violation.kind is ViolationKind.FUNCTIONAL and violation.focus == ex("Ann")
    # the patch, the stored birth date, the entity's two types and its name: no friends
    assert report.data_triples == 5
    corrected = services[1].validate("alice", Changeset.of(add=[second], remove=[born]))
    assert corrected.conforms and corrected.data_triples == 4


@pytest.mark.parametrize("stored", [3, 64, 65, 150])
def test_a_node_that_is_not_an_entity_is_read_whole(
    services: tuple[OntologyService, ValidationService],
    store: OxigraphStore,
    stored: int,
) -> None:
    """A record's triples all count, however many: past the first sweep the read goes on."""
    record = ex("Record")
    store.commit(
        Changeset.of(Quad(record, KGM.tag, Literal(f"t{i}"), ALICE.kg) for i in range(stored))
    )
    report = services[1].validate(
        "alice", Changeset.of([Quad(record, KGM.tag, Literal("new"), ALICE.kg)])
    )
    assert report.data_triples == stored + 1


def test_domain_disjoint_with_the_subject_type(
    services: tuple[OntologyService, ValidationService],
) -> None:
    patch = [
        *entity("Acme", SDO.Organization),
        Quad(ex("Acme"), SDO.birthDate, Literal("1990-01-01", datatype=XSD.date), ALICE.kg),
    ]
    report = services[1].validate("alice", Changeset.of(patch))
    assert [v.kind for v in report.violations] == [ViolationKind.DOMAIN]


@pytest.mark.parametrize(
    ("name", "predicate", "value", "expected"),
    [  # value: a literal, or the name of an entity typed as given
        ("node for a date", SDO.birthDate, ("Someone", SDO.Person), "expects a literal"),
        ("text for a skill", SDO.skills, Literal("welding"), "expects a node"),
        ("person as employer", SDO.worksFor, ("Bob", SDO.Person), "cannot be a"),
        ("text for an employer", SDO.worksFor, Literal("Acme"), None),  # schema.org: allowed
        ("organization as employer", SDO.worksFor, ("Acme", SDO.Organization), None),
    ],
)
def test_range_of_the_value(
    services: tuple[OntologyService, ValidationService],
    name: str,
    predicate: URIRef,
    value: Literal | tuple[str, URIRef],
    expected: str | None,
) -> None:
    patch = entity("Ann", SDO.Person)
    if isinstance(value, tuple):
        patch += entity(*value)
        value = ex(value[0])
    patch.append(Quad(ex("Ann"), predicate, value, ALICE.kg))

    report = services[1].validate("alice", Changeset.of(patch))

    ranges = [v for v in report.violations if v.kind is ViolationKind.RANGE]
    if expected is None:
        assert report.conforms, report.violations
    else:
        [violation] = ranges
        assert violation.focus == ex("Ann") and violation.path == predicate, name
        assert expected in violation.message, violation.message


def test_validation_is_scoped_to_the_patch(
    services: tuple[OntologyService, ValidationService],
    store: OxigraphStore,
) -> None:
    store.commit(Changeset.of(entity("Broken", SDO.Person, SDO.Organization)))
    report = services[1].validate("alice", Changeset.of(entity("Fine", SDO.Person)))
    assert report.conforms
    other_user = services[1].validate(
        "bob", Changeset.of([Quad(ex("Broken"), KGM.alias, Literal("B"), UserGraphs("bob").kg)])
    )
    assert other_user.conforms  # alice's data is not bob's neighbourhood


def test_delta_and_instance_patch_are_validated_together(
    services: tuple[OntologyService, ValidationService],
    store: OxigraphStore,
) -> None:
    from kgmem.ontology.delta import delta_term

    gym = delta_term("alice", "ClimbingGym")
    delta = DeltaPatch(
        (DeclareClass("ClimbingGym", (SDO.Organization,), "climbing gym"),),
        Provenance("pass:p1", datetime(2026, 1, 1, tzinfo=UTC)),
    )
    mislabelled = Changeset.of(entity("Crux", gym, SDO.Person))
    report = services[1].validate("alice", mislabelled, delta)
    [violation] = report.violations
    assert violation.kind is ViolationKind.DISJOINT  # known only through the proposed delta
    assert list(store.quads(ALICE.schema)) == []  # validating writes nothing
    bad_delta = DeltaPatch(
        (DeclareClass("Thing2", (URIRef("urn:nope"),), "thing two"),), delta.provenance
    )
    refused = services[1].validate("alice", Changeset.of(entity("X")), bad_delta)
    assert [v.kind for v in refused.violations] == [ViolationKind.SCHEMA]


def shapes_dir_with_person_email(tmp_path: Path, name: str) -> Path:
    """A shapes directory: kgmem's core shapes plus an author's file ``name``.ttl that
    requires every schema:Person to have a schema:email."""
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "core.ttl").write_bytes((REPO / "shapes" / "core.ttl").read_bytes())
    (shapes / f"{name}.ttl").write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "@prefix schema: <https://schema.org/> .\n"
        "<urn:shapes:PersonEmail> a sh:NodeShape ; sh:targetClass schema:Person ;\n"
        "  sh:property [ sh:path schema:email ; sh:minCount 1 ] .\n"
    )
    return shapes


def test_an_authored_shapes_file_applies(
    services: tuple[OntologyService, ValidationService],
    store: OxigraphStore,
    queries: QueryRegistry,
    tmp_path: Path,
) -> None:
    shapes = shapes_dir_with_person_email(tmp_path, "pets")
    patch = Changeset.of(entity("Cleo", SDO.Person))
    assert services[1].validate("alice", patch).conforms
    ensure_bundled(store, queries, bundled_files(shapes))  # what a restart does
    assert shapes_graph("pets") in store.graphs()
    fresh = ValidationService(store, queries, services[0])
    [violation] = fresh.validate("alice", patch).violations
    assert violation.constraint == SH.MinCountConstraintComponent
    assert violation.path == SDO.email


def test_shapes_on_existing_entities_see_the_predicates_they_constrain(
    services: tuple[OntologyService, ValidationService],
    store: OxigraphStore,
    queries: QueryRegistry,
    tmp_path: Path,
) -> None:
    shapes = shapes_dir_with_person_email(tmp_path, "people")
    ensure_bundled(store, queries, bundled_files(shapes))
    validation = ValidationService(store, queries, services[0])
    dana = ex("Dana")
    store.commit(
        Changeset.of(
            [*entity("Dana", SDO.Person), Quad(dana, SDO.email, Literal("d@example.org"), ALICE.kg)]
        )
    )
    knows = Changeset.of([Quad(dana, SDO.knows, ex("Eve"), ALICE.kg)])
    assert validation.validate("alice", knows).conforms  # the stored email was read back
    store.commit(Changeset.of(entity("Finn", SDO.Person)))
    [violation] = validation.validate(
        "alice", Changeset.of([Quad(ex("Finn"), SDO.knows, dana, ALICE.kg)])
    ).violations
    assert violation.path == SDO.email and violation.focus == ex("Finn")
