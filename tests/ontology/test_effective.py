"""The effective ontology: closure of used terms, incremental extension, typed answers."""

from __future__ import annotations

from rdflib import URIRef

from kgmem.ontology.effective import EffectiveOntology, TermStatus
from kgmem.ontology.vocabulary import TermKind, Vocabulary
from kgmem.vocab import OWL, RDFS
from tests.ontology.conftest import FIXTURE_GRAPH, C, P, T


def test_closure_of_a_property_takes_domain_and_range(fixture_vocab: Vocabulary) -> None:
    eff = EffectiveOntology.build("u", fixture_vocab, [P.ownsPet])
    assert eff.properties == {P.ownsPet}
    assert eff.classes == {C.Person, C.Human, T.Persons, T.Agents, C.Cat}


def test_closure_of_classes_and_subproperties(fixture_vocab: Vocabulary) -> None:
    eff = EffectiveOntology.build("u", fixture_vocab, [C.Musician, P.husband])
    assert eff.properties == {P.husband, P.spouse, P.knows}
    assert eff.classes == {C.Musician, C.Human, C.Person, T.Persons, T.Agents}
    assert C.Planet not in eff.classes  # unused terms stay out


def test_extend_adds_only_the_new_closure(fixture_vocab: Vocabulary) -> None:
    eff = EffectiveOntology.build("u", fixture_vocab, [C.Musician])
    assert eff.extend([C.Human, T.Agents]) is eff  # nothing new: the same object
    grown = eff.extend([C.Planet])
    assert grown.classes == eff.classes | {C.Planet, C.AstronomicalBody, T.NaturalMatter}
    assert eff.classes == {C.Musician, C.Human, C.Person, T.Persons, T.Agents}


def test_graph_holds_only_axioms_between_closure_classes(fixture_vocab: Vocabulary) -> None:
    eff = EffectiveOntology.build("u", fixture_vocab, [C.Musician, C.Planet, P.spouse])
    g = eff.graph()
    # the typology union is expanded into a named pair among closure classes
    assert (T.NaturalMatter, OWL.disjointWith, T.Agents) in g
    assert (C.Musician, RDFS.subClassOf, C.Human) in g
    assert (P.spouse, RDFS.subPropertyOf, P.knows) in g
    assert not any(s == C.Cat or o == C.Cat for s, _, o in g)  # Cat is not in use
    assert (T.NaturalMatter, OWL.disjointWith, T.Organizations) not in g


def test_info_is_a_typed_answer(fixture_vocab: Vocabulary) -> None:
    eff = EffectiveOntology.build("u", fixture_vocab, [])
    known = eff.info(C.Company)
    assert known.status is TermStatus.CATALOGUE and known.kind is TermKind.CLASS
    assert known.origin == FIXTURE_GRAPH and known.known
    unknown = eff.info(URIRef("http://example.org/concept/Spaceship"))
    assert unknown.status is TermStatus.UNKNOWN and not unknown.known
    assert eff.is_functional(P.husband) and eff.domain(P.knows) == {C.Person}
    proof = eff.disjointness(C.Planet, C.Musician)
    assert proof is not None and proof.axiom.kind == "disjointWithUnion"
