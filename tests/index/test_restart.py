"""Start-up levels the projections with the store: drift repaired, a damaged database rebuilt.

Each test writes through the services the server builds, closes them, damages the Kùzu
projection behind the process's back, and builds the services again on the same home.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from kgmem.api import Services, create_app
from kgmem.api.services import build_services, index_dir
from kgmem.cli.index import index_dir as cli_index_dir
from kgmem.config import Settings
from kgmem.index.kuzu.opening import DB_FILE
from kgmem.memory.entities import self_entity
from tests.index.wired import cypher, in_sync, memory_ids, remember, settled, wired


def seed(settings: Settings) -> tuple[str, str]:
    """Two memories of alice and one of bob, projected; the services closed again."""
    services = wired(settings)
    try:
        acme, globex = remember(services, 0), remember(services, 1, "Globex")
        remember(services, 0, uid="bob")
        settled(services)
        settled(services, "bob")
        assert in_sync(services.projection) and in_sync(services.projection, "bob")
    finally:
        services.close()
    return str(acme), str(globex)


def test_the_server_and_the_cli_share_one_projection(settings: Settings) -> None:
    assert index_dir(settings) == cli_index_dir(settings) == settings.home / "index" / "kuzu"


def test_a_clean_restart_finds_nothing_to_repair_and_compares_no_one(settings: Settings) -> None:
    """Every user's stamp in the projection is the store's and its row counts are as
    recorded: start-up trusts it without reading the store."""
    acme, _ = seed(settings)
    services = wired(settings)
    try:
        startup = services.index
        assert not startup.opened.created and startup.drained == 0
        assert startup.reconciled == () and startup.repaired == ()
        assert services.projection.unlevel() == []
        assert memory_ids(services.projection)[acme] == "active"
        assert in_sync(services.projection) and in_sync(services.projection, "bob")
    finally:
        services.close()


def test_rows_deleted_behind_the_projection_are_restored_at_start_up(
    settings: Settings,
) -> None:
    acme, globex = seed(settings)
    cypher(
        index_dir(settings),
        f"MATCH (m:Memory {{id: '{acme}'}}) DETACH DELETE m",
        "MATCH (a:Entity)-[r:RELATES]->(b:Entity) WHERE r.uid = 'alice' DELETE r",
    )
    services = wired(settings)
    try:
        startup = services.index
        assert not startup.opened.created  # the database was fine: only its rows drifted
        assert startup.repaired == ("alice",)
        [report] = [r for r in startup.reconciled if r.uid == "alice"]
        assert {"Memory", "RELATES", "ABOUT", "EVIDENCE"} <= set(report.drift)
        assert report.projection.counts["Memory"] == report.store.counts["Memory"] - 1
        assert memory_ids(services.projection) == {acme: "active", globex: "active"}
        assert in_sync(services.projection) and in_sync(services.projection, "bob")
        me = self_entity("alice")
        near = {n.name for n in services.projection.neighbourhood("alice", me)}
        assert {"Acme", "Globex"} <= near
    finally:
        services.close()


def test_a_corrupt_projection_is_moved_aside_and_rebuilt_and_search_works(
    settings: Settings,
) -> None:
    acme, globex = seed(settings)
    directory = index_dir(settings)
    with (directory / DB_FILE).open("r+b") as db:
        db.seek(0)
        db.write(os.urandom(256 * 1024))
    services = wired(settings)
    try:
        opened = services.index.opened
        assert opened.recovered and opened.created and opened.reason
        assert opened.moved_to == directory.with_name("kuzu.broken-1")
        assert opened.rebuilt == ("alice", "bob")
        assert services.index.repaired == ()  # rebuilt while opening: level by reconcile
        assert memory_ids(services.projection) == {acme: "active", globex: "active"}
        assert in_sync(services.projection) and in_sync(services.projection, "bob")
        hits = services.search.memory_search("alice", "Globex")
        assert hits and hits[0].id == globex
        me = self_entity("alice")
        assert "Globex" in {n.name for n in services.projection.neighbourhood("alice", me)}
        # and the rebuilt projection is fed like any other
        later = remember(services, 2, "Initech")
        settled(services)
        assert memory_ids(services.projection)[str(later)] == "active"
    finally:
        services.close()


def test_in_memory_services_keep_the_projection_in_a_scratch_directory(
    settings: Settings,
) -> None:
    services = build_services(settings, in_memory=True)
    scratch = services.scratch
    try:
        assert scratch is not None and services.index.opened.path.is_relative_to(scratch)
        memory = remember(services, 0)
        settled(services)
        assert memory_ids(services.projection)[str(memory)] == "active"
    finally:
        services.close()
    assert not scratch.exists()
    assert not Path(settings.home / "index").exists()


def test_the_server_repairs_drift_in_the_background_and_stops_the_feed_on_shutdown(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    acme, _ = seed(settings)
    cypher(index_dir(settings), f"MATCH (m:Memory {{id: '{acme}'}}) DETACH DELETE m")
    app = create_app(settings)
    services: Services = app.state.services
    assert services.index.pending == ("alice",)  # found at start-up, left to the background
    assert services.index.reconciled == ()
    with caplog.at_level(logging.INFO, logger="kgmem.api"), TestClient(app) as client:
        assert client.get("/health").status_code == 200  # it answers meanwhile
        assert services.feed.running
        assert services.warmed.wait(60)
        assert [r.uid for r in services.repairs if r.repaired] == ["alice"]
        assert in_sync(services.projection) and in_sync(services.projection, "bob")
    assert "search index of 2 users ready" in caplog.text  # loaded in the background
    assert not services.feed.running
