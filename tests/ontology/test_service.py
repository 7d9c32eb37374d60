"""The ontology service on what ships in the repo (kgmem + starter), no mirror needed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from kgmem.ontology import bundled_files, ensure_bundled
from kgmem.ontology.effective import EffectiveOntology
from kgmem.ontology.service import STARTER, OntologyService
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


def test_the_used_terms_read_by_probes_close_as_a_scan_of_the_graph_would(
    service: OntologyService, store: OxigraphStore
) -> None:
    """The first write after a start probes each vocabulary term in the user's graph
    instead of scanning the graph: the closure is the one every statement of the graph,
    read whole, gives (terms outside the vocabulary included, which close to nothing)."""
    kg, vocab = UserGraphs("alice").kg, service.user_vocabulary("alice")
    properties, classes = sorted(vocab.properties), sorted(vocab.classes)
    rng = random.Random(24)
    quads = [
        Quad(URIRef(f"urn:x:n{i}"), p, Literal(i), kg)
        for i, p in enumerate(rng.sample(properties, 15))
    ]
    typed = rng.sample(classes, 10)
    quads += [Quad(URIRef(f"urn:x:t{i}"), RDF.type, c, kg) for i, c in enumerate(typed)]
    quads += [  # a graph's own vocabulary, unknown to the catalogue
        Quad(URIRef("urn:x:o"), URIRef("urn:x:ownPredicate"), Literal("x"), kg),
        Quad(URIRef("urn:x:o"), RDF.type, URIRef("urn:x:OwnClass"), kg),
    ]
    store.commit(Changeset.of(quads))
    service.invalidate("alice")
    probed = service.effective("alice")
    scanned = [q.predicate for q in store.quads(kg)]
    scanned += [q.object for q in store.quads(kg, None, RDF.type) if isinstance(q.object, URIRef)]
    seeds = vocab.declared_in((STARTER, UserGraphs("alice").schema)) + scanned
    whole = EffectiveOntology.build("alice", vocab, seeds, UserGraphs("alice").schema)
    assert probed.classes == whole.classes and probed.properties == whole.properties
    assert set(typed) <= probed.classes
    assert probed.properties > service.effective("bob").properties
