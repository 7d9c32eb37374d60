"""list_memories known_at (record time) on REST, GraphQL and MCP against a real uvicorn: the
same memories with the statuses they had then, later ones left out; a bad time names the
field."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from mcp import Client

from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool
from tests.browser.world import gql

MEMORIES = """query($k: DateTime) { memories(knownAt: $k, first: 10) {
  nodes { id title status pinned } } }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "known-at") as s:
        yield s


def _draft(c: Any, turn: int, text: str, quote: str) -> str:
    message = {"chat": "k", "turn": turn, "role": "user", "text": text}
    c.post("/api/messages", json={"messages": [message]}).raise_for_status()
    draft = {
        "kind": "semantic",
        "title": quote,
        "evidence": [{"source": f"chat:k#{turn}", "quote": quote}],
    }
    [item] = c.post("/api/memories/batch-draft", json={"drafts": [draft]}).json()["items"]
    assert item["outcome"] == "active", item
    return str(item["memory"])


def test_known_at_alike_on_every_surface(server: ApiServer) -> None:
    uid = "ka-maya"
    with server.client(uid) as c:
        tea = _draft(c, 0, "I drink green tea every morning.", "I drink green tea")
        time.sleep(0.05)
        then = datetime.now(UTC).isoformat()
        time.sleep(0.05)
        c.post(f"/api/memories/{tea}/archive").raise_for_status()
        c.post(f"/api/memories/{tea}/pin").raise_for_status()
        oats = _draft(c, 1, "I switched to oat milk last week.", "I switched to oat milk")
        rest = c.get("/api/memories", params={"known_at": then}).json()["memories"]
        now = c.get("/api/memories").json()["memories"]
        graphql = gql(c, MEMORIES, k=then)["memories"]["nodes"]
        bad = c.get("/api/memories", params={"known_at": "last tuesday"})

    async def work(client: Client) -> dict[str, Any]:
        return await tool(client, "list_memories", {"known_at": then})

    over_mcp = over_http(server.base, server.app.state.accounts.issue(uid).token, work)
    assert [(m["id"], m["status"], m["pinned"]) for m in rest] == [(tea, "active", False)]
    assert over_mcp["memories"] == rest
    assert [(m["id"], m["status"], m["pinned"]) for m in graphql] == [(tea, "ACTIVE", False)]
    assert {m["id"]: m["status"] for m in now} == {tea: "archived", oats: "active"}
    assert bad.status_code == 422 and bad.json()["error"]["field"] == "known_at"
