"""Term search: exact labels first, alternate labels, local names, stemming, limits."""

from __future__ import annotations

from kgmem.ontology.search import TermIndex
from kgmem.ontology.vocabulary import TermKind, Vocabulary
from tests.ontology.conftest import C, P, T


def test_exact_label_ranks_first(fixture_vocab: Vocabulary) -> None:
    hits = TermIndex.build(fixture_vocab).search("person")
    assert hits[0].term == C.Person
    assert hits[0].matched == "person"
    assert {h.term for h in hits} >= {C.Person, T.Persons}  # "persons" stems to "person"


def test_alternate_label_and_local_name_match(fixture_vocab: Vocabulary) -> None:
    index = TermIndex.build(fixture_vocab)
    assert index.search("firm")[0].term == C.Company
    assert index.search("chemical element")[0].term == C.ChemicalElement  # no label at all
    assert index.search("Chemical-Elements")[0].term == C.ChemicalElement
    assert index.search("human")[0].term == C.Human  # label "human being" starts with it


def test_kind_filter_limit_and_empty(fixture_vocab: Vocabulary) -> None:
    index = TermIndex.build(fixture_vocab)
    assert index.search("birth date")[0].term == P.birthDate
    assert all(h.kind is TermKind.PROPERTY for h in index.search("person", kind=TermKind.PROPERTY))
    assert len(index.search("a", limit=2)) <= 2
    assert index.search("   ") == []
    assert index.search("person", limit=0) == []
    assert index.search("zzzqqq") == []


def test_exact_lookup(fixture_vocab: Vocabulary) -> None:
    index = TermIndex.build(fixture_vocab)
    assert index.exact("Business") == [C.Company]
    assert index.exact("dogs") == [C.Dog]
    assert index.exact("astronomical") == []
