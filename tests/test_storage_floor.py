"""``benchmarks/storage_floor.py``: what it records of a write is what the store was asked
for, its replay runs those operations again, and the data under it is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from kgmem.store import Changeset, Quad, QueryRegistry, UserGraphs, oxigraph
from kgmem.store.oxigraph import OxigraphStore
from kgmem.vocab import KGM, RDF
from tests.helpers import load_benchmark

floor = load_benchmark("storage_floor")
KG = UserGraphs("alice").kg


def _memory(n: int) -> list[Quad]:
    node = URIRef(f"urn:kgmem:user:alice:memory:m{n}")
    return [
        Quad(node, RDF.type, KGM.Memory, KG),
        Quad(node, KGM.title, Literal(f"memory {n}"), KG),
        Quad(node, KGM.confidence, Literal(0.5 + n / 100), KG),
    ]


def test_the_recorded_operations_are_the_ones_asked_for_and_replay_leaves_the_data(
    tmp_path: Path,
) -> None:
    store = OxigraphStore(tmp_path / "store")
    try:
        store.commit(Changeset.of([q for n in range(5) for q in _memory(n)]))
        before = sorted(store.quads(KG))
        recorder = floor.record(store)
        store.commit(Changeset.of(_memory(99)))  # not recording yet
        recorder.on = True
        first = URIRef("urn:kgmem:user:alice:memory:m1")
        assert len(list(store.quads(KG, first))) == 3
        assert len(list(store.quads(KG, None, RDF.type))) == 6
        assert any(store.quads(KG, None, RDF.type))  # stops at the first quad
        store.select(QueryRegistry.load()["store/graph_counts"])
        store.commit(Changeset.of(_memory(7)))
        recorder.on = False
        list(store.quads(KG))  # not recording any more

        found = floor.replay(recorder)

        assert (found.reads, found.read_quads) == (3, 3 + 6 + 1)
        assert found.queries == 1
        assert (found.commits, found.written) == (1, 3)
        assert found.updates == 0
        assert found.total_ms == found.read_ms + found.query_ms + found.write_ms > 0
        assert "storage floor" in found.lines()[-1]
        # the user's graph holds what it held; the replayed writes went to graphs of their
        # own, gone afterwards (a kept store must start again: kgmem does not name them)
        assert sorted(store.quads(KG)) == sorted(before + _memory(99) + _memory(7))
        assert [g for g in store.graphs() if str(g).startswith(f"{KG}-floor")] == []
    finally:
        store.close()


def test_a_commit_that_removes_is_replayed_as_the_same_update(tmp_path: Path) -> None:
    store = OxigraphStore(tmp_path / "store")
    try:
        store.commit(Changeset.of([q for n in range(3) for q in _memory(n)]))
        recorder = floor.record(store)
        recorder.on = True
        old = _memory(1)[1]
        new = Quad(old.subject, old.predicate, Literal("memory 1, retitled"), KG)
        store.commit(Changeset.of([new], [old]))  # a removal: one SPARQL update
        found = floor.replay(recorder, keep=True)

        assert (found.commits, found.written, found.updates) == (1, 2, 0)
        assert found.write_ms > 0
        # each round added the new title and removed the old one, in a graph of its own
        for n in range(floor._ROUNDS):
            graph = URIRef(f"{KG}-floor{n}")
            assert sorted(q.object for q in store.quads(graph)) == [new.object]
        assert new in set(store.quads(KG)) and old not in set(store.quads(KG))
        # the adapter writes through its own function again
        assert oxigraph.changeset_update is floor.changeset_update
    finally:
        store.close()


def test_the_floor_is_measured_on_disk_only() -> None:
    store = OxigraphStore()
    try:
        with pytest.raises(TypeError, match="on-disk"):
            floor.record(store)
    finally:
        store.close()
