"""Regression: with A's ``mcp-session-id``, B's calls succeeded (as B) and B's ``DELETE /mcp``
ended A's session. A session now answers only the key that opened it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from kgmem.api import create_app
from kgmem.config import Settings
from tests.conftest import serve_app
from tests.helpers import MCP_INIT

ACCEPT = "application/json, text/event-stream"
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[str, str, str]]:
    app = create_app(settings)
    alice, bob = (app.state.accounts.add(uid).token for uid in ("alice", "bob"))
    with serve_app(app, settings) as url:
        yield url, alice, bob


def _post(url: str, token: str, body: object, session: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Accept": ACCEPT}
    if session is not None:
        headers["mcp-session-id"] = session
    return httpx.post(f"{url}/mcp", json=body, headers=headers, timeout=10)


def test_another_keys_session_is_not_found(served: tuple[str, str, str]) -> None:
    url, alice, bob = served
    opened = _post(url, alice, MCP_INIT)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    _post(url, alice, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    stolen = _post(url, bob, LIST, session)
    assert stolen.status_code == 404 and stolen.json()["error"]["field"] == "mcp-session-id"
    ended = httpx.delete(
        f"{url}/mcp",
        headers={"Authorization": f"Bearer {bob}", "mcp-session-id": session},
        timeout=10,
    )
    assert ended.status_code == 404
    still = _post(url, alice, LIST, session)
    assert still.status_code == 200 and "memory_search" in still.text


def test_sessions_that_end_without_a_delete_are_forgotten(settings: Settings) -> None:
    """The owner map followed every session ever opened: one that timed out (or whose client
    vanished) stayed in it for the server's life. It now holds only live sessions."""
    app = create_app(settings)
    alice = app.state.accounts.add("alice").token
    (route,) = [r for r in app.routes if getattr(r, "path", None) == "/mcp"]
    owners = route.endpoint  # type: ignore[attr-defined]
    owners.app.session_manager.session_idle_timeout = 0.5  # the manager ends idle sessions
    with serve_app(app, settings) as url:
        for _ in range(3):
            assert _post(url, alice, MCP_INIT).status_code == 200
        assert len(owners.owners) == 3
        time.sleep(1.5)
        fresh = _post(url, alice, MCP_INIT).headers["mcp-session-id"]
        assert list(owners.owners) == [fresh]
        assert _post(url, alice, LIST, fresh).status_code == 200
