"""The ontology service on what ships in the repo (kgmem + starter), no mirror needed."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from kgmem.ontology import bundled_files, ensure_bundled
from kgmem.ontology.service import OntologyService
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs
from kgmem.vocab import KGM, RC, RDF, SDO

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def service(store: OxigraphStore, queries: QueryRegistry) -> OntologyService:
    ensure_bundled(store, queries, bundled_files(REPO / "shapes"))
    return OntologyService(store, queries)


def test_mercury_candidates_are_pairwise_disjoint_with_starter_alone(
    service: OntologyService,
) -> None:
    eff = service.effective("alice")
    planet, element, organization = RC.Planet, RC.ChemicalElement, SDO.Organization
    for a, b in ((planet, element), (planet, organization), (element, organization)):
        proof = eff.disjointness(a, b)
        assert proof is not None, (a, b)
        assert proof.axiom.graph == URIRef("urn:kgmem:catalogue:starter")
        assert proof.a_path[0] == a and proof.b_path[0] == b
    assert eff.disjointness(SDO.Person, SDO.Organization) is not None
    assert eff.disjointness(SDO.Organization, SDO.Place) is None  # deliberately not disjoint


def test_starter_terms_are_searchable_and_seed_every_user(service: OntologyService) -> None:
    assert service.search("person")[0].term == SDO.Person
    assert service.search("works for")[0].term == SDO.worksFor
    assert service.search("allergic to")[0].term == KGM.allergicTo
    eff = service.effective("newcomer")
    assert SDO.Person in eff.classes and SDO.worksFor in eff.properties
    assert eff.is_functional(SDO.birthDate)


def test_terms_used_in_the_users_graph_join_the_closure(
    service: OntologyService, store: OxigraphStore
) -> None:
    kg = UserGraphs("alice").kg
    dolphin = KGM.Memory  # a catalogue class outside the starter module
    store.commit(
        Changeset.of(
            [
                Quad(URIRef("urn:x:flipper"), RDF.type, dolphin, kg),
                Quad(URIRef("urn:x:flipper"), SDO.name, Literal("Flipper"), kg),
                Quad(URIRef("urn:x:flipper"), KGM.tag, Literal("sea"), kg),  # a property
            ]
        )
    )
    service.invalidate("alice")
    assert dolphin in service.effective("alice").classes
    assert KGM.tag in service.effective("alice").properties
    assert dolphin not in service.effective("bob").classes
    assert KGM.tag not in service.effective("bob").properties
    extended = service.note_terms("bob", [dolphin])
    assert dolphin in extended.classes and service.effective("bob") is extended
