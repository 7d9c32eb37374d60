"""The schema delta: each operation, its checks, provenance, and all-or-nothing patches."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import DeltaConflict, DeltaCycle, TermCollision, UnknownTerm
from kgmem.ontology.delta import (
    Align,
    AlignRelation,
    Amend,
    DeclareClass,
    DeclareProperty,
    Defer,
    DeltaPatch,
    Merge,
    Provenance,
    Restrict,
    delta_term,
)
from kgmem.ontology.effective import TermStatus
from kgmem.ontology.service import OntologyService
from kgmem.store import OxigraphStore, QueryRegistry, UserGraphs
from kgmem.vocab import KGM, OWL, RDFS
from tests.ontology.conftest import C, P, T

WHEN = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
BY_USER = Provenance("user:alice", WHEN)
SCHEMA = UserGraphs("alice").schema


def patch(*ops: object, by: Provenance = BY_USER) -> DeltaPatch:
    return DeltaPatch(tuple(ops), by)  # type: ignore[arg-type]


@pytest.fixture
def service(fixture_store: OxigraphStore, queries: QueryRegistry) -> OntologyService:
    return OntologyService(fixture_store, queries)


def gym() -> URIRef:
    return delta_term("alice", "ClimbingGym")


def test_declare_class_commits_with_provenance(
    service: OntologyService, fixture_store: OxigraphStore
) -> None:
    plan = service.apply_delta(
        "alice", patch(DeclareClass("ClimbingGym", (C.Company,), "climbing gym", "Walls to climb."))
    )
    assert plan.terms == (gym(),)
    stored = {(q.subject, q.predicate, q.object) for q in fixture_store.quads(SCHEMA)}
    assert (gym(), RDFS.subClassOf, C.Company) in stored
    changes = [q.subject for q in fixture_store.quads(SCHEMA, predicate=KGM.changedTerm)]
    assert len(changes) == 1
    assert (changes[0], KGM.proposedBy, Literal("user:alice")) in stored
    effective = service.effective("alice")
    info = effective.info(gym())
    assert info.status is TermStatus.DELTA and info.label == "climbing gym"
    assert effective.is_subclass(gym(), T.Agents)
    assert gym() in effective.classes
    # the delta is the user's own: another user does not see it
    assert service.effective("bob").info(gym()).status is TermStatus.UNKNOWN


def test_unknown_parent_is_refused_and_nothing_is_written(
    service: OntologyService, fixture_store: OxigraphStore
) -> None:
    with pytest.raises(UnknownTerm, match="Spaceship"):
        service.apply_delta(
            "alice",
            patch(
                DeclareClass("Rocket", (URIRef("http://example.org/concept/Spaceship"),), "rocket")
            ),
        )
    assert list(fixture_store.quads(SCHEMA)) == []


def test_patch_is_all_or_nothing(service: OntologyService, fixture_store: OxigraphStore) -> None:
    with pytest.raises(UnknownTerm):
        service.apply_delta(
            "alice",
            patch(
                DeclareClass("ClimbingGym", (C.Company,), "climbing gym"),
                DeclareProperty("belays", "belays", domain=C.Person, range=C.Spaceship),
            ),
        )
    assert list(fixture_store.quads(SCHEMA)) == []
    assert service.effective("alice").info(gym()).status is TermStatus.UNKNOWN


def test_a_term_that_duplicates_a_catalogue_term_is_refused(service: OntologyService) -> None:
    with pytest.raises(TermCollision, match="concept/Company"):
        service.apply_delta("alice", patch(DeclareClass("Firm", (T.Agents,), "Firm")))
    with pytest.raises(TermCollision):
        service.apply_delta("alice", patch(DeclareClass("Dogs", (T.Agents,), "hound")))


def test_cycles_are_refused(service: OntologyService) -> None:
    service.apply_delta(
        "alice",
        patch(
            DeclareClass("Crag", (C.Planet,), "crag"),
            DeclareClass("Boulder", (delta_term("alice", "Crag"),), "boulder"),
        ),
    )
    with pytest.raises(DeltaCycle) as info:
        service.apply_delta(
            "alice", patch(Align(delta_term("alice", "Crag"), delta_term("alice", "Boulder")))
        )
    assert info.value.path[0] == str(delta_term("alice", "Crag"))


def test_only_own_terms_can_be_changed(service: OntologyService) -> None:
    with pytest.raises(DeltaConflict, match="own delta terms"):
        service.apply_delta("alice", patch(Amend(C.Company, label="outfit")))
    with pytest.raises(DeltaConflict, match="own delta terms"):
        service.apply_delta("alice", patch(Restrict(P.knows, domain=C.Dog)))
    with pytest.raises(DeltaConflict, match="already declared"):
        service.apply_delta(
            "alice",
            patch(
                DeclareClass("ClimbingGym", (C.Company,), "climbing gym"),
                DeclareClass("ClimbingGym", (C.Company,), "another gym"),
            ),
        )


def test_property_declare_restrict_align_amend(service: OntologyService) -> None:
    belays = delta_term("alice", "belays")
    service.apply_delta(
        "alice",
        patch(
            DeclareProperty("belays", "belays", domain=C.Person, functional=True),
            Restrict(belays, range=C.Person),
            Align(belays, P.knows, AlignRelation.SUBPROPERTY),
            Amend(belays, label="belay partner of", definition="Holds the rope for."),
        ),
    )
    eff = service.effective("alice")
    assert eff.is_functional(belays)
    assert eff.domain(belays) == {C.Person} and eff.range(belays) == {C.Person}
    assert P.knows in eff.vocabulary.super_properties(belays)
    assert eff.info(belays).label == "belay partner of"


def test_merge_and_defer(service: OntologyService, fixture_store: OxigraphStore) -> None:
    crag, rock = delta_term("alice", "Crag"), delta_term("alice", "RockFace")
    service.apply_delta(
        "alice",
        patch(
            DeclareClass("Crag", (C.Planet,), "crag"),
            DeclareClass("RockFace", (C.Planet,), "rock face"),
        ),
    )
    service.apply_delta(
        "alice",
        patch(Merge(rock, crag), Defer("Pitch", "too vague yet"), by=Provenance("pass:p42", WHEN)),
    )
    eff = service.effective("alice")
    assert eff.is_subclass(rock, crag) and eff.is_subclass(crag, rock)
    stored = {(q.subject, q.predicate, q.object) for q in fixture_store.quads(SCHEMA)}
    assert (rock, KGM.replacedBy, crag) in stored
    assert (rock, OWL.equivalentClass, crag) in stored
    assert (delta_term("alice", "Pitch"), KGM.changeReason, Literal("too vague yet")) in stored
    proposers = {str(q.object) for q in fixture_store.quads(SCHEMA, predicate=KGM.proposedBy)}
    assert proposers == {"user:alice", "pass:p42"}
    with pytest.raises(DeltaConflict, match="itself"):
        service.apply_delta("alice", patch(Merge(crag, crag)))


def test_delta_survives_a_fresh_service(
    fixture_store: OxigraphStore, queries: QueryRegistry
) -> None:
    OntologyService(fixture_store, queries).apply_delta(
        "alice", patch(DeclareClass("ClimbingGym", (C.Company,), "climbing gym"))
    )
    fresh = OntologyService(fixture_store, queries)
    assert fresh.effective("alice").info(gym()).status is TermStatus.DELTA


def test_bad_names_are_refused() -> None:
    with pytest.raises(DeltaConflict):
        delta_term("alice", "has space")
    with pytest.raises(DeltaConflict):
        delta_term("alice", "1st")


def test_one_users_delta_reaches_neither_the_catalogue_nor_another_user(
    service: OntologyService, fixture_store: OxigraphStore, queries: QueryRegistry
) -> None:
    """Every user's vocabulary reads the one catalogue view; a delta that gives a catalogue
    class a new superclass (an equivalence) changes that user's answers only."""
    service.effective("bob")  # bob's layer exists before alice's delta
    crag = delta_term("alice", "Crag")
    service.apply_delta(
        "alice",
        patch(
            DeclareClass("Crag", (C.Planet,), "crag"),
            Align(crag, C.Company, AlignRelation.EQUIVALENT),
        ),
    )
    alice, bob = service.effective("alice"), service.effective("bob")
    assert alice.is_subclass(C.Company, crag) and alice.is_subclass(C.Company, C.Planet)
    assert alice.disjointness(C.Company, C.Musician) is not None
    assert not bob.is_subclass(C.Company, crag) and not bob.is_subclass(C.Company, C.Planet)
    assert bob.info(crag).known is False
    assert crag not in service.vocabulary().classes
    assert not service.vocabulary().is_subclass(C.Company, C.Planet)
    fresh = OntologyService(fixture_store, queries)  # alice's answers are the store's
    assert fresh.effective("alice").is_subclass(C.Company, C.Planet)
    assert fresh.effective("bob").ancestors(C.Company) == bob.ancestors(C.Company)
