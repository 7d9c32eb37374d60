"""Drift and damage: reconcile repairs what differs; an unusable database is replaced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kgmem.errors import StoreLocked
from kgmem.index import KuzuProjection
from kgmem.index.kuzu import projection as kuzu_module
from kgmem.index.kuzu.graph import KuzuGraph
from kgmem.index.kuzu.opening import CLEAN, DB_FILE
from kgmem.index.reader import StoreReader
from kgmem.index.rows import differing
from kgmem.store import QueryRegistry
from tests.index.scenes import Scene
from tests.index.wired import cypher
from tests.memory.world import World


def reopen(directory: Path, world: World, queries: QueryRegistry) -> KuzuProjection:
    return KuzuProjection(directory, world.store, queries)


def test_reconcile_detects_and_repairs_deleted_and_stray_rows(
    projection: KuzuProjection, world: World, queries: QueryRegistry, scene: Scene
) -> None:
    directory = projection.opened.path
    projection.close()
    cypher(
        directory,
        f"MATCH (m:Memory {{id: '{scene.acme}'}}) DETACH DELETE m",
        "MATCH (a:Entity)-[r:SHARES_MEMORY]->(b:Entity) WHERE a.uid = 'alice' DELETE r",
        "CREATE (:Entity {key: 'carol|urn:x:e', id: 'urn:x:e', uid: 'carol', name: 'Ghost'})",
    )
    with reopen(directory, world, queries) as again:
        assert not again.opened.created
        report = again.reconcile("alice")
        assert report.repaired and not report.matched
        assert set(report.drift) == {"Memory", "ABOUT", "EVIDENCE", "SHARES_MEMORY"}
        assert report.projection.counts["Memory"] == report.store.counts["Memory"] - 1
        assert again.fingerprint("alice") == again.store_fingerprint("alice")
        assert again.reconcile("alice").matched
        reports = {r.uid: r for r in again.reconcile_all()}
        assert set(reports) == {"alice", "bob", "carol"}
        assert reports["carol"].repaired and reports["carol"].store.total == 0
        assert not reports["alice"].repaired and not reports["bob"].repaired
        assert again.users() == ["alice", "bob"]


def test_reconcile_detects_a_changed_value(
    projection: KuzuProjection, world: World, queries: QueryRegistry, scene: Scene
) -> None:
    directory = projection.opened.path
    projection.close()
    cypher(directory, f"MATCH (m:Memory {{id: '{scene.acme}'}}) SET m.status = 'archived'")
    with reopen(directory, world, queries) as again:
        report = again.reconcile("alice")
        assert report.drift == ("Memory",)
        assert report.projection.counts == report.store.counts  # same counts, other rows
        assert again.reconcile("alice").matched


def test_reconcile_rewrites_only_what_differs_unless_most_does(
    projection: KuzuProjection, world: World, queries: QueryRegistry, scene: Scene
) -> None:
    """A drift of a few nodes is repaired as a refresh repairs them; a projection that lost
    most of a user's rows gets every row again. Either way it ends as the store's."""
    directory = projection.opened.path
    expected = projection.store_fingerprint("alice")
    held = projection.rows("alice")
    projection.close()
    cypher(directory, f"MATCH (m:Memory {{id: '{scene.acme}'}}) SET m.title = 'Initech'")
    with reopen(directory, world, queries) as again:
        drifted = again.rows("alice")
        assert differing(held, drifted) == {str(scene.acme)}  # one node row, no edge
        assert again.reconcile("alice").repaired
        assert again.fingerprint("alice") == expected
    cypher(directory, "MATCH (m:Memory) WHERE m.uid = 'alice' DETACH DELETE m")
    with reopen(directory, world, queries) as again:
        lost = differing(held, again.rows("alice"))
        assert {str(scene.acme)} < lost  # the memories and the ends of their edges
        assert again.reconcile("alice").repaired
        assert again.fingerprint("alice") == expected


def _damage(directory: Path, offset: int) -> None:
    with (directory / DB_FILE).open("r+b") as db:
        db.seek(offset)
        db.write(os.urandom(256 * 1024))


def test_a_damaged_database_header_is_moved_aside_and_rebuilt(
    projection: KuzuProjection, world: World, queries: QueryRegistry
) -> None:
    directory = projection.opened.path
    expected = projection.fingerprint("alice")
    projection.close()
    _damage(directory, 0)
    with reopen(directory, world, queries) as again:
        opened = again.opened
        assert opened.recovered and opened.created and opened.reason
        assert opened.moved_to == directory.with_name("kuzu.broken-1")
        assert (opened.moved_to / DB_FILE).exists()
        assert opened.rebuilt == ("alice", "bob")
        assert again.fingerprint("alice") == expected == again.store_fingerprint("alice")


@pytest.mark.parametrize("offset", [4096, 65536, 262144])
def test_damaged_pages_are_repaired_at_start_up(
    projection: KuzuProjection, world: World, queries: QueryRegistry, offset: int
) -> None:
    """Kùzu reads some damaged pages as missing rows, without an error: the probe cannot
    see that, the start-up reconciliation does."""
    directory = projection.opened.path
    expected = projection.fingerprint("alice")
    projection.close()
    _damage(directory, offset)
    with reopen(directory, world, queries) as again:
        reports = {r.uid: r for r in again.reconcile_all(fresh=True)}
        assert again.opened.recovered or reports["alice"].repaired
        assert again.fingerprint("alice") == expected == again.store_fingerprint("alice")
        assert again.reconcile("alice").matched


def test_a_file_where_the_directory_should_be_is_replaced(
    world: World, queries: QueryRegistry, scene: Scene, tmp_path: Path
) -> None:
    directory = tmp_path / "kuzu"
    directory.write_text("not a database")
    with reopen(directory, world, queries) as projection:
        assert projection.opened.reason == "not a directory"
        assert projection.opened.moved_to is not None
        assert projection.opened.moved_to.read_text() == "not a database"
        assert projection.reconcile("alice").matched


def test_another_schema_version_is_replaced(
    projection: KuzuProjection, world: World, queries: QueryRegistry
) -> None:
    directory = projection.opened.path
    projection.close()
    cypher(directory, "MATCH (m:Meta {key: 'schema'}) SET m.value = '0'")
    with reopen(directory, world, queries) as again:
        assert again.opened.reason is not None and "schema version is 0" in again.opened.reason
        assert again.reconcile("alice").matched


def test_a_database_in_use_is_never_moved(
    projection: KuzuProjection, world: World, queries: QueryRegistry
) -> None:
    directory = projection.opened.path
    with pytest.raises(StoreLocked):
        reopen(directory, world, queries)
    assert not directory.with_name("kuzu.broken-1").exists()
    assert projection.reconcile("alice").matched


def test_a_clean_reopen_keeps_the_rows(
    projection: KuzuProjection, world: World, queries: QueryRegistry
) -> None:
    directory, expected = projection.opened.path, projection.fingerprint("alice")
    projection.close()
    with reopen(directory, world, queries) as again:
        assert not again.opened.created and not again.opened.recovered
        assert again.opened.rebuilt == ()
        assert again.fingerprint("alice") == expected


def test_a_cleanly_closed_database_is_opened_without_the_probe(
    projection: KuzuProjection,
    world: World,
    queries: QueryRegistry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The probe is a process of its own (~0.25 s a command); a database whose files are
    as its last clean close left them need not be probed. One changed since is (the damage
    tests above close cleanly too, then damage the file)."""
    directory, expected = projection.opened.path, projection.fingerprint("alice")
    projection.close()
    assert (directory / CLEAN).is_file()

    def no_probe(*args: object, **kwargs: object) -> None:
        raise AssertionError("the probe ran for a cleanly closed database")

    with monkeypatch.context() as patch:
        patch.setattr("kgmem.index.kuzu.opening.subprocess.run", no_probe)
        again = reopen(directory, world, queries)
    assert not (directory / CLEAN).exists()  # open: a crash now must leave no record
    with again:
        assert not again.opened.recovered and again.fingerprint("alice") == expected
    assert (directory / CLEAN).is_file()
    _damage(directory, 0)
    with reopen(directory, world, queries) as damaged:
        assert damaged.opened.recovered and damaged.opened.moved_to is not None


def test_a_large_user_is_compared_a_slice_at_a_time_and_rewritten_when_it_differs(
    projection: KuzuProjection,
    world: World,
    queries: QueryRegistry,
    scene: Scene,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past ``_PARTIAL_ROWS`` rows a user is never read whole (its rows are held nowhere at
    once): both sides are fingerprinted as they are read, and a drift rewrites the user
    from the store slice by slice."""
    directory = projection.opened.path
    expected = projection.store_fingerprint("alice")
    projection.close()
    cypher(
        directory,
        f"MATCH (m:Memory {{id: '{scene.acme}'}}) SET m.title = 'Initech'",
        "MATCH (a:Entity)-[r:SHARES_MEMORY]->(b:Entity) WHERE a.uid = 'alice' DELETE r",
    )
    monkeypatch.setattr(kuzu_module, "_PARTIAL_ROWS", 5)

    def whole(*args: object, **kwargs: object) -> None:
        raise AssertionError("a large user was read whole")

    monkeypatch.setattr(StoreReader, "user", whole)
    monkeypatch.setattr(KuzuGraph, "rows", whole)
    with reopen(directory, world, queries) as again:
        report = again.reconcile("alice")
        assert report.repaired and set(report.drift) == {"Memory", "SHARES_MEMORY"}
        assert report.store == expected
        assert again.fingerprint("alice") == expected
        assert again.reconcile("alice").matched
