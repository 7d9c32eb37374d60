"""The graph projection in a bounded buffer pool: Kùzu holds a transaction's pages in its
pool, so a rebuild writes a large user in several transactions, and a rebuild stopped
halfway leaves the user unlevel (no stamp) rather than looking whole."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kgmem.errors import StoreOperationFailed
from kgmem.index import KuzuProjection
from kgmem.index.kuzu import graph as kuzu_graph
from kgmem.index.kuzu.connection import Connection
from kgmem.index.kuzu.graph import KuzuGraph
from kgmem.index.kuzu.opening import open_database
from kgmem.index.rows import AboutRow, EntityRow, MemoryRow, UserRows
from kgmem.store import QueryRegistry
from tests.index.scenes import Scene
from tests.memory.world import World

WHEN = datetime(2026, 1, 1, tzinfo=UTC)
POOL_MB = 32  # Kùzu's smallest pool that opens the schema and writes in chunks


def _rows(n: int) -> UserRows:
    """``n`` people, a memory about each: ~3n rows, as a 25k-memory user's rows run."""
    return UserRows(
        entities=tuple(
            EntityRow(f"urn:e:{i}", f"person {i}", (f"nick {i}",), ("http://schema.org/Person",))
            for i in range(n)
        ),
        memories=tuple(
            MemoryRow(
                f"urn:m:{i}", "semantic", "active", f"title {i}", 0.9, 1.0, WHEN, None, None, False
            )
            for i in range(n)
        ),
        about=tuple(AboutRow(f"urn:m:{i}", f"urn:e:{i}") for i in range(n)),
    )


def test_a_large_rebuild_fits_a_small_pool_in_several_transactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _rows(25_000)
    graph = KuzuGraph(open_database(tmp_path / "kuzu", POOL_MB).database, POOL_MB)
    try:
        graph.set_stamp("alice", 7)
        graph.replace_user("alice", [rows])
        assert graph.user_counts("alice") == {
            "Entity": 25_000,
            "Memory": 25_000,
            "Page": 0,
            "Source": 0,
            "RELATES": 0,
            "ABOUT": 25_000,
            "EVIDENCE": 0,
            "PAGE_OF": 0,
            "SHARES_MEMORY": 0,
        }
        assert "alice" not in graph.stamps()  # the caller records the new one
        # what the same rebuild does in one transaction: the pool cannot hold it
        monkeypatch.setattr(kuzu_graph, "_PER_TRANSACTION", 10**9)
        with pytest.raises(StoreOperationFailed, match="buffer pool is full"):
            graph.replace_user("bob", [rows])
    finally:
        graph.close()


def test_a_rebuild_stopped_halfway_leaves_the_user_unlevel(
    scene: Scene,
    world: World,
    queries: QueryRegistry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    projection = KuzuProjection(tmp_path / "kuzu", world.store, queries, buffer_megabytes=64)
    try:
        assert projection.unlevel() == []
        monkeypatch.setattr(kuzu_graph, "_PER_TRANSACTION", 1)  # commit after every batch
        monkeypatch.setattr(kuzu_graph, "_MOST_PER_TRANSACTION", 1)
        commits = 0
        real_run = Connection.run

        def stop_after_two_commits(
            self: Connection, cypher: str, params: object = None, prepared: bool = False
        ) -> object:
            nonlocal commits
            if cypher == "COMMIT":
                commits += 1
                if commits == 3:  # the drop, one chunk of rows, then the process "dies"
                    raise StoreOperationFailed("graph projection", "stopped")
            return real_run(self, cypher, params, prepared=prepared)  # type: ignore[arg-type]

        monkeypatch.setattr(Connection, "run", stop_after_two_commits)
        with pytest.raises(StoreOperationFailed):
            projection.rebuild("alice")
        monkeypatch.setattr(Connection, "run", real_run)
        assert projection.unlevel() == ["alice"]  # found for a whole compare, not trusted
        report = projection.reconcile("alice")
        assert report.repaired and report.drift  # rows were missing
        assert projection.reconcile("alice").drift == ()
        assert projection.unlevel() == []
    finally:
        projection.close()
