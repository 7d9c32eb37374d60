"""Regression (#22, item 10): right after a crash, ``kgmem index check`` reported drift for
every change the dead process had committed but not yet drained into the projection,
although the next start applies them. It now applies what the outbox holds first (as any
start does), says how many, and compares what is left."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgmem.clock import SystemClock
from kgmem.config import load_settings
from kgmem.index import ChangeFeed
from kgmem.memory import MessageIn, SourceStore
from kgmem.store import OxigraphStore, QueryRegistry
from tests.index.scenes import build_scene
from tests.memory.world import World
from tests.test_cli import kgmem

pytestmark = pytest.mark.integration


def test_changes_waiting_in_the_outbox_are_applied_not_reported_as_drift(
    home: Path, queries: QueryRegistry
) -> None:
    store = OxigraphStore(home / "store")
    world = World(store, queries, load_settings(env={"KGMEM_HOME": str(home)}))
    build_scene(world)
    store.close()
    assert kgmem(home, "index", "rebuild").returncode == 0

    # a process that commits with the feed attached, then dies before any drain
    store = OxigraphStore(home / "store")
    feed = ChangeFeed(store, queries, [])
    feed.attach()
    sources = SourceStore(store, queries, SystemClock())
    for turn, text in enumerate(["I work at Initech now.", "And I moved to Lisbon."]):
        sources.ingest_message("alice", MessageIn(chat="c9", turn=turn, role="user", text=text))
    assert feed.pending("alice") > 0
    store.close()

    checked = kgmem(home, "index", "check", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)["users"]["alice"]
    assert report["matches"] and report["applied"] > 0
    assert report["store"]["Source"] == report["projection"]["Source"]
    again = kgmem(home, "index", "check")
    assert again.returncode == 0 and "applied" not in again.stdout  # nothing waits now
    assert "alice: projection matches the store" in again.stdout
