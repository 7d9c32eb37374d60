"""A user's vocabulary is a layer over the shared catalogue view: it answers as a full copy
would, it never writes the view, and the view is not copied per user."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import URIRef

from kgmem.ontology.vocabulary import DisjointAxiom, Vocabulary
from kgmem.ontology.vocabulary.layered import LayeredMap, LayeredSet
from kgmem.vocab import OWL
from tests.ontology.conftest import C, P

G = URIRef("urn:graph:catalogue")
D = URIRef("urn:graph:delta")
NODES = [URIRef(f"urn:n:{i}") for i in range(14)]  # 0-9 in the catalogue, 10-13 delta terms

Op = Callable[[Vocabulary], None]


def _edge(child: int, parent: int) -> Op:
    return lambda v: v.add_subclass(NODES[child], NODES[parent])


def _disjoint(a: int, b: int, graph: URIRef) -> Op:
    return lambda v: v.add_disjoint(DisjointAxiom(NODES[a], NODES[b], "disjointWith", graph))


def _declare(n: int, graph: URIRef) -> Op:
    return lambda v: v.declare(NODES[n], OWL.Class, graph)


def _ops(nodes: range, declared: range, graph: URIRef, most: int) -> st.SearchStrategy[list[Op]]:
    node = st.integers(nodes.start, nodes.stop - 1)
    return st.lists(
        st.one_of(
            st.builds(_edge, node, node),
            st.builds(_disjoint, node, node, st.just(graph)),
            st.builds(_declare, st.integers(declared.start, declared.stop - 1), st.just(graph)),
        ),
        max_size=most,
    )


catalogue_ops = _ops(range(10), range(10), G, 30)
# a delta reaches into the catalogue: equivalence gives a catalogue class a delta parent
delta_ops = _ops(range(14), range(10, 14), D, 12)


def _apply(vocab: Vocabulary, ops: list[Op]) -> Vocabulary:
    for op in ops:
        op(vocab)
    return vocab


@settings(max_examples=120, deadline=None)
@given(catalogue_ops, delta_ops, st.booleans())
def test_a_layer_answers_as_a_full_copy_would(
    base_ops: list[Op], user_ops: list[Op], warm: bool
) -> None:
    base = _apply(Vocabulary(), base_ops)
    if warm:  # the shared view's memos are filled before the layer exists
        for n in NODES:
            base.ancestors(n)
            for m in NODES:
                base.disjointness(n, m)
    before = {n: base.ancestors(n) for n in NODES}
    layer = _apply(base.copy(), user_ops)
    full = _apply(_apply(Vocabulary(), base_ops), user_ops)
    for n in NODES:
        assert layer.ancestors(n) == full.ancestors(n), n
        assert layer.kind_of(n) == full.kind_of(n)
        assert layer.origin.get(n) == full.origin.get(n)
        for m in NODES:
            assert len(layer.path_up(n, m)) == len(full.path_up(n, m))
            ours, theirs = layer.disjointness(n, m), full.disjointness(n, m)
            assert (ours is None) == (theirs is None), (n, m)
            if ours is not None and theirs is not None:
                assert len(ours.a_path) + len(ours.b_path) == len(theirs.a_path) + len(
                    theirs.b_path
                )
    assert layer.declared_in((D,)) == full.declared_in((D,))
    assert sorted(layer.classes) == sorted(full.classes)
    assert {n: base.ancestors(n) for n in NODES} == before  # the view did not change
    again = layer.copy()  # a copy of a layer is a layer over the same view, not a stack
    assert again._base is base
    assert all(again.ancestors(n) == layer.ancestors(n) for n in NODES)


def test_writes_through_a_layer_leave_the_view_alone(fixture_vocab: Vocabulary) -> None:
    view = fixture_vocab.copy()._base
    assert view is fixture_vocab
    layer = fixture_vocab.copy()
    layer.labels[C.Person].append("human being")
    layer.property(P.knows).parents.add(P.spouse)
    layer.disjoint[C.Person][C.Dog] = DisjointAxiom(C.Person, C.Dog, "delta", D)
    layer.classes.add(URIRef("urn:new"))
    assert "human being" in layer.labels[C.Person]
    assert "human being" not in fixture_vocab.labels[C.Person]
    assert P.spouse in layer.super_properties(P.knows)
    assert P.spouse not in fixture_vocab.super_properties(P.knows)
    assert layer.disjointness(C.Musician, C.Dog) is not None
    assert fixture_vocab.disjointness(C.Musician, C.Dog) is None
    assert URIRef("urn:new") in layer.classes and URIRef("urn:new") not in fixture_vocab.classes
    # a second user's layer sees none of the first one's changes
    other = fixture_vocab.copy()
    assert "human being" not in other.labels.get(C.Person, [])
    assert other.disjointness(C.Musician, C.Dog) is None


def test_the_shared_view_refuses_changes(fixture_vocab: Vocabulary) -> None:
    fixture_vocab.copy()
    with pytest.raises(TypeError, match="shared catalogue view"):
        fixture_vocab.add_subclass(C.Dog, C.Person)
    with pytest.raises(TypeError, match="shared catalogue view"):
        fixture_vocab.declare(URIRef("urn:x"), OWL.Class, G)


def test_layered_map_reads_without_copying_and_copies_to_write() -> None:
    base: dict[str, set[int]] = {"a": {1}, "b": {2}}
    layer: LayeredMap[str, set[int]] = LayeredMap(base, set, set)
    assert layer.get("a") is base["a"]
    assert len(layer) == 2 and "a" in layer and "z" not in layer
    layer["a"].add(9)
    layer["c"].add(3)  # a missing key is made, as a defaultdict would
    assert base == {"a": {1}, "b": {2}}
    assert dict(layer.items()) == {"a": {1, 9}, "b": {2}, "c": {3}}
    assert sorted(layer) == ["a", "b", "c"] and len(layer) == 3
    del layer["c"]
    assert len(layer) == 2
    with pytest.raises(TypeError):
        del layer["a"]
    plain: LayeredMap[str, int] = LayeredMap({"x": 1})
    with pytest.raises(KeyError):
        plain["y"]
    members = LayeredSet({1, 2}, (2, 3))
    members.add(4)
    assert sorted(members) == [1, 2, 3, 4] and len(members) == 4
