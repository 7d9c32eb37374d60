"""A user's rows read a slice at a time (``kgmem.index.slices``): the same rows as the whole
read keeps, written into Kùzu slice by slice, with far less held at once; a store whose
rows do not come grouped by node is read whole instead."""

from __future__ import annotations

import logging
import tracemalloc
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import XSD

from kgmem.index import KuzuProjection
from kgmem.index.kuzu import connection as kuzu_connection
from kgmem.index.kuzu import graph as kuzu_graph
from kgmem.index.kuzu.graph import KuzuGraph
from kgmem.index.kuzu.opening import open_database
from kgmem.index.kuzu.params import closed
from kgmem.index.reader import StoreReader
from kgmem.index.rows import FingerprintSum, UserRows, fingerprint_of
from kgmem.index.slices import Ungrouped, UserSlices
from kgmem.store import Changeset, Quad, QueryRegistry, TripleStore, UserGraphs
from kgmem.vocab import KGM, RDF, SDO
from tests.index.scenes import ALICE_SELF, Scene
from tests.memory.world import World

# the entities one hop from an entity, by a key: a read the projection's users make per call
_ONE_HOP = """
MATCH (a:Entity {key: $key})-[r:RELATES|SHARES_MEMORY]-(b:Entity)
WHERE r.uid = $uid AND id(b) <> id(a)
RETURN DISTINCT b.id
ORDER BY b.id
LIMIT $limit
"""

ALICE = UserGraphs("alice")


def _entity(store: TripleStore, name: str) -> URIRef:
    [found] = {q.subject for q in store.quads(ALICE.kg, None, KGM.name, Literal(name))}
    assert isinstance(found, URIRef)
    return found


def _odd_corners(world: World, scene: Scene) -> None:
    """What a store gathers over years besides the gate's own writes: a page (and one whose
    entity is gone), a fact no memory asserts, the reverse of a symmetric fact written by
    hand, a memory both the kg and the quarantine graph hold (with an edge only the
    quarantine graph has), and a value that cannot be read."""
    store = world.store
    carol, bob = _entity(store, "Carol"), _entity(store, "Bob")
    me = next(q.object for q in store.quads(ALICE.kg, scene.spouse, KGM.about) if q.object != carol)
    page, lost = URIRef(f"{ALICE.node_base}page/carol"), URIRef(f"{ALICE.node_base}page/gone")
    quads = [
        Quad(page, RDF.type, KGM.Page, ALICE.kg),
        Quad(page, KGM.pageOf, carol, ALICE.kg),
        Quad(page, KGM.path, Literal("entities/carol.md"), ALICE.kg),
        Quad(lost, RDF.type, KGM.Playbook, ALICE.kg),
        Quad(lost, KGM.pageOf, URIRef(f"{ALICE.node_base}entity/gone"), ALICE.kg),
        Quad(carol, SDO.knows, bob, ALICE.kg),
        Quad(carol, SDO.spouse, me, ALICE.kg),
        Quad(scene.acme, KGM.about, carol, ALICE.quarantine),
        Quad(scene.pending, KGM.confidence, Literal("high", datatype=XSD.decimal), ALICE.kg),
    ]
    quads += [q._replace(graph=ALICE.quarantine) for q in store.quads(ALICE.kg, scene.acme)]
    store.commit(Changeset.of(quads))


def _joined(slices: list[UserRows]) -> dict[str, list[str]]:
    tables: dict[str, list[str]] = {}
    for rows in slices:
        for name, found in rows.tables().items():
            tables.setdefault(name, []).extend(repr(r) for r in found)
    return {name: sorted(found) for name, found in tables.items()}


@pytest.mark.parametrize("size", [1, 2, 5, 10_000])
def test_the_slices_hold_the_rows_of_the_whole_read_row_for_row(
    world: World, scene: Scene, queries: QueryRegistry, size: int
) -> None:
    _odd_corners(world, scene)
    reader = StoreReader(world.store, queries)
    whole = closed(reader.user("alice"))
    assert {"PAGE_OF", "RELATES", "EVIDENCE"} <= {n for n, r in whole.tables().items() if r}
    assert any(r.inferred for r in whole.relates) and any(r.memory is None for r in whole.relates)
    assert any(m.status == "quarantined" for m in whole.memories)
    slices = list(UserSlices(reader, "alice", size))
    assert all(sum(len(r) for r in s.tables().values()) <= size for s in slices)
    assert _joined(slices) == _joined([whole])
    total = FingerprintSum()
    for rows in slices:
        total.add(rows)
    assert total.fingerprint() == fingerprint_of(whole)


def test_kuzu_written_slice_by_slice_holds_the_whole_read(
    world: World, scene: Scene, queries: QueryRegistry, tmp_path: Path
) -> None:
    _odd_corners(world, scene)
    reader = StoreReader(world.store, queries)
    graph = KuzuGraph(open_database(tmp_path / "kuzu").database)
    try:
        graph.replace_user("alice", UserSlices(reader, "alice", 2))
        assert fingerprint_of(graph.rows("alice")) == fingerprint_of(closed(reader.user("alice")))
    finally:
        graph.close()


def test_rows_that_come_apart_are_read_whole(
    world: World,
    scene: Scene,
    queries: QueryRegistry,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A source of two source classes: the store gives its rows under each class, apart."""
    messages = {q.subject for q in world.store.quads(ALICE.sources, None, RDF.type, KGM.Message)}
    message = sorted(messages)[0]
    assert isinstance(message, URIRef)
    world.store.commit(Changeset.of([Quad(message, RDF.type, KGM.ShortNote, ALICE.sources)]))
    reader = StoreReader(world.store, queries)
    with pytest.raises(Ungrouped, match="Source"):
        deque(UserSlices(reader, "alice", 1), maxlen=0)
    with caplog.at_level(logging.WARNING, "kgmem.index"):
        projection = KuzuProjection(tmp_path / "kuzu", world.store, queries)
    try:
        assert "read whole" in caplog.text
        assert projection.fingerprint("alice") == fingerprint_of(closed(reader.user("alice")))
        assert projection.store_fingerprint("alice") == projection.fingerprint("alice")
    finally:
        projection.close()


def _memories(store: TripleStore, count: int) -> None:
    """``count`` memories, each about one of 50 entities, with a message as evidence."""
    base, quads = ALICE.node_base, list[Quad]()
    for n in range(50):
        entity = URIRef(f"{base}entity/e{n}")
        quads += [Quad(entity, RDF.type, KGM.Entity, ALICE.kg)]
        quads += [Quad(entity, KGM.name, Literal(f"Entity {n}"), ALICE.kg)]
    for n in range(count):
        memory, evidence = URIRef(f"{base}memory/m{n}"), URIRef(f"{base}evidence/m{n}")
        source = URIRef(f"{base}msg/c1/{n}")
        quads += [
            Quad(memory, RDF.type, KGM.Memory, ALICE.kg),
            Quad(memory, KGM.kind, KGM.semantic, ALICE.kg),
            Quad(memory, KGM.status, KGM.active, ALICE.kg),
            Quad(memory, KGM.title, Literal(f"memory number {n} of the year"), ALICE.kg),
            Quad(memory, KGM.confidence, Literal(0.9), ALICE.kg),
            Quad(memory, KGM.about, URIRef(f"{base}entity/e{n % 50}"), ALICE.kg),
            Quad(memory, KGM.evidence, evidence, ALICE.kg),
            Quad(evidence, KGM.source, source, ALICE.kg),
            Quad(source, RDF.type, KGM.Message, ALICE.sources),
            Quad(source, KGM.role, Literal("user"), ALICE.sources),
            Quad(source, KGM.chat, Literal("c1"), ALICE.sources),
        ]
    store.commit(Changeset.of(quads))


def _peak(read: Callable[[], Iterable[UserRows]]) -> int:
    """The most Python memory held while ``read()`` is read to its end."""
    tracemalloc.start()
    try:
        deque(read(), maxlen=0)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_sliced_read_holds_a_fraction_of_the_whole_read(
    world: World, queries: QueryRegistry
) -> None:
    """3,000 memories: the whole read holds every row at once; the slices hold the ids of the
    nodes (one dict of short keys) and one slice of 100 rows: 0.8 MB against 8.6 MB."""
    _memories(world.store, 3000)
    reader = StoreReader(world.store, queries)
    whole = _peak(lambda: [closed(reader.user("alice"))])
    sliced = _peak(lambda: UserSlices(reader, "alice", 100))
    assert sliced * 6 < whole, (sliced, whole)
    assert fingerprint_of(closed(reader.user("alice"))).counts["Memory"] == 3000


def test_the_connection_is_renewed_between_transactions_and_loses_nothing(
    world: World,
    scene: Scene,
    queries: QueryRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Kùzu's connection keeps every parameter it was given: it is closed and opened again
    once it has been given ``_RENEW_AFTER``, never inside a transaction (whose rows it would
    drop). Renewed after every few rows, a rebuild in transactions of 4 rows still writes
    the whole user."""
    _odd_corners(world, scene)
    monkeypatch.setattr(kuzu_connection, "_RENEW_AFTER", 3)
    monkeypatch.setattr(kuzu_graph, "_PER_TRANSACTION", 4)
    monkeypatch.setattr(kuzu_graph, "_MOST_PER_TRANSACTION", 4)
    opened: list[object] = []
    real = kuzu_connection.kuzu.Connection

    def connect(database: object) -> object:
        opened.append(real(database))
        return opened[-1]

    monkeypatch.setattr(kuzu_connection.kuzu, "Connection", connect)
    reader = StoreReader(world.store, queries)
    graph = KuzuGraph(open_database(tmp_path / "kuzu").database)
    try:
        graph.replace_user("alice", UserSlices(reader, "alice", 2))
        assert len(opened) > 5
        assert fingerprint_of(graph.rows("alice")) == fingerprint_of(closed(reader.user("alice")))
    finally:
        graph.close()


def test_a_read_is_planned_once_per_connection_and_answers_as_the_text_does(
    world: World,
    scene: Scene,
    queries: QueryRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A read by key is planned once on a connection (Kùzu plans a query given as text at
    every call) and again on the next one after a renewal, answering as the text does each
    time."""
    planned: list[str] = []
    real = kuzu_connection.kuzu.PreparedStatement

    def plan(connection: object, cypher: str) -> object:
        planned.append(cypher)
        return real(connection, cypher)  # type: ignore[arg-type]

    monkeypatch.setattr(kuzu_connection.kuzu, "PreparedStatement", plan)
    graph = KuzuGraph(open_database(tmp_path / "kuzu").database)
    try:
        graph.replace_user("alice", UserSlices(StoreReader(world.store, queries), "alice", 50))
        me = str(ALICE_SELF)
        params = {"key": kuzu_graph.node_key("alice", me), "uid": "alice", "limit": 50}
        as_text = [URIRef(row[0]) for row in graph.run(_ONE_HOP, params)]
        assert len(as_text) >= 2  # the scene links the user to people and employers
        for _ in range(5):
            assert [URIRef(r[0]) for r in graph.run(_ONE_HOP, params, prepared=True)] == as_text
        assert planned == [_ONE_HOP]  # once, though read five times
        monkeypatch.setattr(kuzu_connection, "_RENEW_AFTER", 3)  # renewed after each read
        for _ in range(3):
            assert [URIRef(r[0]) for r in graph.run(_ONE_HOP, params, prepared=True)] == as_text
        assert len(planned) == 3  # planned again on each new connection but the first
    finally:
        graph.close()
