"""The in-memory ontology view, checked against the hand-written fixture."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import URIRef

from kgmem.ontology.vocabulary import TermKind, Vocabulary, local_name_words
from tests.ontology.conftest import FIXTURE_GRAPH, C, P, T


def test_ancestors_follow_subclass_and_equivalence(fixture_vocab: Vocabulary) -> None:
    assert fixture_vocab.ancestors(C.Musician) == {
        C.Musician,
        C.Human,
        C.Person,
        T.Persons,
        T.Agents,
    }
    assert fixture_vocab.ancestors(C.Person) == {C.Person, C.Human, T.Persons, T.Agents}
    assert fixture_vocab.is_subclass(C.Company, T.Agents)
    assert not fixture_vocab.is_subclass(T.Agents, C.Company)
    assert fixture_vocab.path_up(C.Musician, T.Agents) == (C.Musician, C.Human, T.Persons, T.Agents)


def test_distinct_ancestors_are_one_per_label_nearest_first(fixture_vocab: Vocabulary) -> None:
    # c:Person (by the equivalence) and t:Persons are both two steps up: one idea, shown once
    assert fixture_vocab.distinct_ancestors([C.Musician]) == (C.Human, C.Person, T.Agents)
    # neither repeats the type's own label
    assert fixture_vocab.distinct_ancestors([C.Person]) == (C.Human, T.Agents)
    assert fixture_vocab.distinct_ancestors([C.Person, C.Company]) == (
        C.Human,
        T.Organizations,
        T.Agents,
    )


def test_disjointness_through_a_typology_union(fixture_vocab: Vocabulary) -> None:
    proof = fixture_vocab.disjointness(C.Planet, C.Company)
    assert proof is not None
    assert proof.axiom.kind == "disjointWithUnion"
    assert proof.axiom.graph == FIXTURE_GRAPH
    assert proof.a_path == (C.Planet, C.AstronomicalBody, T.NaturalMatter)
    assert proof.b_path == (C.Company, T.Organizations)  # the shorter of the two routes
    assert "owl:disjointWith a union" in proof.explain()
    reverse = fixture_vocab.disjointness(C.Musician, C.ChemicalElement)
    assert reverse is not None and reverse.a_path[-1] == T.Agents


def test_disjointness_by_member_list_and_by_pair(fixture_vocab: Vocabulary) -> None:
    by_list = fixture_vocab.disjointness(C.Dog, C.Fish)
    assert by_list is not None and by_list.axiom.kind == "AllDisjointClasses"
    by_pair = fixture_vocab.disjointness(C.Cat, C.Planet)
    assert by_pair is not None and by_pair.axiom.kind == "disjointWith"


def test_no_disjointness_without_an_axiom(fixture_vocab: Vocabulary) -> None:
    assert fixture_vocab.disjointness(C.Planet, C.ChemicalElement) is None
    assert fixture_vocab.disjointness(C.Dog, C.Planet) is None
    assert fixture_vocab.disjointness(C.Human, C.Person) is None


def test_properties(fixture_vocab: Vocabulary) -> None:
    assert fixture_vocab.kind_of(P.knows) is TermKind.PROPERTY
    assert fixture_vocab.kind_of(C.Dog) is TermKind.CLASS
    assert fixture_vocab.kind_of(URIRef("http://example.org/nope")) is None
    assert fixture_vocab.is_functional(P.spouse)
    assert fixture_vocab.is_functional(P.husband)  # through its functional superproperty
    assert not fixture_vocab.is_functional(P.knows)
    assert fixture_vocab.super_properties(P.husband) == {P.husband, P.spouse, P.knows}
    assert fixture_vocab.properties[P.birthDate].domains == {C.Person}


def test_labels_fall_back_to_local_name_words(fixture_vocab: Vocabulary) -> None:
    assert fixture_vocab.label(C.Person) == "person"
    assert fixture_vocab.label(C.ChemicalElement) == "chemical element"
    assert "firm" in fixture_vocab.alt_labels[C.Company]
    assert local_name_words(URIRef("http://x/HTMLParser")) == "html parser"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=40))
def test_memoized_ancestors_equal_breadth_first_walk(edges: list[tuple[int, int]]) -> None:
    vocab = Vocabulary()
    node = [URIRef(f"urn:n:{i}") for i in range(13)]
    for child, parent in edges:
        if child != parent:
            vocab.add_subclass(node[child], node[parent])
    for start in node:
        seen = {start}
        queue = deque([start])
        while queue:
            for parent in vocab.parents.get(queue.popleft(), ()):
                if parent not in seen:
                    seen.add(parent)
                    queue.append(parent)
        assert vocab.ancestors(start) == seen
