"""The server skeleton: /health, start-up failures, shutdown closing the store."""

from __future__ import annotations

import gc
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from kgmem import __version__
from kgmem.api import create_app
from kgmem.config import Settings
from kgmem.errors import ResourceError, StoreLocked
from kgmem.store import OxigraphStore, catalogue_graph


def test_health_reports_status_version_and_store(client: TestClient, settings: Settings) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok"
    assert body["version"] == __version__
    assert body["store"] == {"backend": "OxigraphStore", "location": str(settings.store_dir)}
    assert body["uptime_seconds"] >= 0
    assert body["index"]["repairing"] == 0  # a fresh home: nothing to repair
    assert "repairs" not in body["index"]  # user names only for an admin


def _admin(settings: Settings) -> dict[str, str]:
    return {"Authorization": f"Bearer {(settings.home / 'api-key').read_text().strip()}"}


def test_health_detail_counts_graphs(client: TestClient, settings: Settings) -> None:
    body = client.get("/health", params={"detail": "1"}, headers=_admin(settings)).json()
    assert body["index"]["repairs"] == {"graph": [], "search": []}
    store = body["store"]
    vocabulary = str(catalogue_graph("kgmem"))
    assert store["graphs"][vocabulary] > 100
    assert store["triples"] == sum(store["graphs"].values())
    assert store["size_bytes"] > 0


def test_real_server_answers_over_loopback(server: str) -> None:
    response = httpx.get(f"{server}/health", timeout=5)
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_shutdown_closes_the_store(settings: Settings) -> None:
    with TestClient(create_app(settings)) as test_client:
        assert test_client.get("/health").status_code == 200
        with pytest.raises(StoreLocked):
            OxigraphStore(settings.store_dir)
    reopened = OxigraphStore(settings.store_dir)  # the lock was released at shutdown
    assert reopened.count(catalogue_graph("kgmem")) > 100
    reopened.close()


def test_what_start_up_built_is_kept_out_of_full_collections_while_serving(
    settings: Settings,
) -> None:
    with TestClient(create_app(settings)) as test_client:
        assert test_client.get("/health").status_code == 200
        assert test_client.app.state.services.warmed.wait(60)  # loaded in the background
        frozen = gc.get_freeze_count()
        assert frozen > 10_000  # the services and the search index, built at start-up
    assert gc.get_freeze_count() == 0  # given back to the collector at shutdown


def test_broken_shapes_file_fails_start_up_before_writing(
    settings: Settings, tmp_path: Path
) -> None:
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "bad.ttl").write_text("this is not turtle")
    with pytest.raises(ResourceError, match=r"bad\.ttl"):
        create_app(replace(settings, shapes_dir=shapes))
    assert not settings.store_dir.exists()


def test_authored_shapes_file_loads_at_start(settings: Settings, tmp_path: Path) -> None:
    shapes = tmp_path / "shapes"
    shapes.mkdir()
    (shapes / "mine.ttl").write_text(
        "@prefix sh: <http://www.w3.org/ns/shacl#> .\n"
        "<urn:x:MyShape> a sh:NodeShape ; sh:targetClass <urn:x:Thing> .\n"
    )
    with TestClient(create_app(replace(settings, shapes_dir=shapes))) as test_client:
        answer = test_client.get("/health?detail=1", headers=_admin(settings))
        graphs = answer.json()["store"]["graphs"]
    assert graphs["urn:kgmem:shapes:mine"] == 3  # two shape triples + its checksum
