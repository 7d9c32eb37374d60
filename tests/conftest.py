"""Shared fixtures: real stores on disk and in memory, a test client, a real uvicorn server."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient

from kgmem.api import create_app
from kgmem.config import Settings, load_settings
from kgmem.store import OxigraphStore, QueryRegistry

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked `shared` need ../shared. Absent: a loud skip locally, a failure in CI."""
    if "shared" not in item.keywords or SHARED.is_dir():
        return
    reason = f"NOT RUN: {SHARED} is absent (ontology mirror / benchmark data)"
    if os.environ.get("KGMEM_REQUIRE_SHARED") == "1":
        pytest.fail(reason + " and KGMEM_REQUIRE_SHARED=1", pytrace=False)
    pytest.skip(reason)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not SHARED.is_dir():
        terminalreporter.write_line(
            f"WARNING: {SHARED} is absent: every test marked `shared` did not run.", red=True
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty KGMEM_HOME."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def settings(home: Path) -> Settings:
    """Settings for `home`, isolated from the developer's environment."""
    return load_settings(env={"KGMEM_HOME": str(home)}, port=free_port())


@pytest.fixture(scope="session")
def queries() -> QueryRegistry:
    return QueryRegistry.load()


@pytest.fixture(params=["memory", "disk"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OxigraphStore]:
    """Every store test runs on an in-memory and an on-disk Oxigraph store."""
    opened = OxigraphStore(None if request.param == "memory" else tmp_path / "store")
    yield opened
    opened.close()


@pytest.fixture
def client(settings: Settings) -> Iterator[TestClient]:
    with TestClient(create_app(settings)) as test_client:
        yield test_client


@contextmanager
def serve_app(app: Starlette, settings: Settings) -> Iterator[str]:
    """Run ``app`` in a real uvicorn on ``settings``' loopback port; yields its base URL."""
    config = uvicorn.Config(
        app, host=settings.host, port=settings.port, log_level="warning", lifespan="on"
    )
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not instance.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield settings.base_url
    finally:
        instance.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def server(settings: Settings) -> Iterator[str]:
    """A real uvicorn on a free loopback port; yields its base URL."""
    with serve_app(create_app(settings), settings) as url:
        yield url
