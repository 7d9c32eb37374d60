"""The ontology layer on the full official releases (needs ../shared/ontologies)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from kgmem.ontology import (
    Catalogue,
    OntologyService,
    ValidationService,
    ViolationKind,
    bundled_files,
    ensure_bundled,
    load_manifest,
    load_vocabulary,
)
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs, catalogue_graph
from kgmem.vocab import KGM, KKO, RC, RDF, SDO

REPO = Path(__file__).resolve().parents[2]
MIRROR = REPO.parent / "shared" / "ontologies"
pytestmark = pytest.mark.shared


@pytest.fixture(scope="module")
def mirrored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OxigraphStore]:
    store = OxigraphStore(tmp_path_factory.mktemp("mirror") / "store")
    queries = QueryRegistry.load()
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    Catalogue(store, queries, load_manifest()).install(mirror=MIRROR, download=False)
    yield store
    store.close()


@pytest.fixture(scope="module")
def service(mirrored: OxigraphStore) -> OntologyService:
    return OntologyService(mirrored, QueryRegistry.load())


def test_all_releases_are_searchable(service: OntologyService) -> None:
    vocab = service.vocabulary()
    assert sum(1 for c in vocab.classes if str(c).startswith(str(RC))) >= 57557
    assert service.search("chemical element")[0].term == RC.ChemicalElement  # no label: name
    assert service.search("mercury")[0].term == RC.Mercury
    assert service.search("person")[0].term == SDO.Person
    assert service.search("broader")[0].term == URIRef(
        "http://www.w3.org/2004/02/skos/core#broader"
    )
    assert any(
        h.term == URIRef("http://xmlns.com/foaf/0.1/Person")
        for h in service.search("person", limit=20)
    )


def test_kko_typologies_alone_separate_mercury_readings(mirrored: OxigraphStore) -> None:
    releases = [g for g in service_graphs(mirrored) if g != catalogue_graph("starter")]
    vocab = load_vocabulary(mirrored, QueryRegistry.load(), releases)
    for thing in (RC.Planet, RC.ChemicalElement):
        proof = vocab.disjointness(thing, RC.Organization)
        assert proof is not None, thing
        assert proof.axiom.kind == "disjointWithUnion"
        assert proof.axiom.graph == catalogue_graph("kko")
        assert proof.a_path[0] == thing and str(proof.a_path[-1]).startswith(str(KKO))
    assert vocab.disjointness(RC.Planet, RC.ChemicalElement) is None  # KKO is silent here


def test_with_the_starter_all_three_readings_are_pairwise_disjoint(
    service: OntologyService,
) -> None:
    eff = service.effective("alice")
    readings = (RC.Planet, RC.ChemicalElement, SDO.Organization)
    for i, a in enumerate(readings):
        for b in readings[i + 1 :]:
            assert eff.disjointness(a, b) is not None, (a, b)


def test_a_person_typed_as_an_organization_fails_validation(
    mirrored: OxigraphStore, service: OntologyService
) -> None:
    validation = ValidationService(mirrored, QueryRegistry.load(), service)
    kg = UserGraphs("alice").kg
    node = URIRef("https://example.org/bob")
    patch = Changeset.of(
        [
            Quad(node, RDF.type, KGM.Entity, kg),
            Quad(node, KGM.name, Literal("Bob"), kg),
            Quad(node, RDF.type, SDO.Person, kg),
            Quad(node, RDF.type, SDO.Organization, kg),
        ]
    )
    report = validation.validate("alice", patch)
    assert [v.kind for v in report.violations] == [ViolationKind.DISJOINT]
    # KKO does not separate persons from organizations (KBpedia files 44 concepts, "Child"
    # among them, under both), so the starter's axiom is what catches this, releases or not.
    assert report.violations[0].proof is not None
    assert report.violations[0].proof.axiom.graph == catalogue_graph("starter")


def service_graphs(store: OxigraphStore) -> list[URIRef]:
    return list(OntologyService(store, QueryRegistry.load()).catalogue_graphs())
