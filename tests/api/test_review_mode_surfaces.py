"""The user's review mode, readable and settable on every surface (REST, GraphQL, MCP) and
the CLI, against a real uvicorn: set on one surface, read the same on the others, and the
write gate follows it for the next draft; a bad mode names the field; each user has their
own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client

from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool
from tests.browser.world import DRAFT, INGEST, gql

MODE = "{ reviewMode }"
SET = """mutation($m: ReviewMode!) { setReviewMode(mode: $m) { __typename
  ... on ReviewModeSet { mode changed } ... on InputError { message field } } }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "review-mode") as s:
        yield s


def modes(server: ApiServer, uid: str) -> tuple[str, str, str]:
    """The mode as REST, GraphQL and MCP read it."""
    with server.client(uid) as c:
        over_rest = c.get("/api/review-mode").json()["mode"]
        over_graphql = gql(c, MODE)["reviewMode"]

    async def work(client: Client) -> dict[str, Any]:
        return await tool(client, "review_mode", {})

    over_mcp = over_http(server.base, server.app.state.accounts.issue(uid).token, work)["mode"]
    return over_rest, over_graphql.lower(), over_mcp


def drafted(c: httpx.Client, turn: int, text: str, quote: str) -> str:
    message = {"chat": "m", "turn": turn, "role": "user", "text": text}
    assert gql(c, INGEST, m=[message])["ingestMessages"]["__typename"] == "Ingested"
    draft = {
        "kind": "SEMANTIC",
        "title": quote,
        "confidence": 0.9,
        "evidence": [{"source": f"chat:m#{turn}", "quote": quote}],
    }
    [item] = gql(c, DRAFT, d=[draft])["draftMemories"]["items"]
    return str(item["outcome"])


def test_set_on_one_surface_read_on_all_and_the_gate_follows(server: ApiServer) -> None:
    assert modes(server, "rm-a") == ("autonomous",) * 3

    async def to_review(client: Client) -> dict[str, Any]:
        return await tool(client, "review_mode", {"mode": "review"})

    token = server.app.state.accounts.issue("rm-a").token
    assert over_http(server.base, token, to_review) == {"mode": "review", "changed": True}
    assert modes(server, "rm-a") == ("review",) * 3
    with server.client("rm-a") as c:
        assert drafted(c, 0, "I am vegetarian since 2019.", "I am vegetarian") == "pending"
        back = gql(c, SET, m="AUTONOMOUS")["setReviewMode"]
        assert back == {"__typename": "ReviewModeSet", "mode": "AUTONOMOUS", "changed": True}
        assert drafted(c, 1, "I play the cello on weekends.", "I play the cello") == "active"
        again = c.put("/api/review-mode", json={"mode": "autonomous"})
        assert again.status_code == 200 and again.json() == {"mode": "autonomous", "changed": False}
        assert c.put("/api/review-mode", json={"mode": "review"}).json()["changed"] is True
    assert modes(server, "rm-a") == ("review",) * 3
    assert modes(server, "rm-b") == ("autonomous",) * 3  # another user's is their own


@pytest.mark.parametrize("body", [{"mode": "sometimes"}, {}, {"mode": "review", "user": "x"}])
def test_a_bad_mode_is_an_error_naming_the_field(server: ApiServer, body: dict[str, Any]) -> None:
    field = "user" if "user" in body else "mode"
    with server.client("rm-bad") as c:
        answer = c.put("/api/review-mode", json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == field
        wrong = c.post("/graphql", json={"query": SET, "variables": {"m": "SOMETIMES"}}).json()
        assert "ReviewMode" in wrong["errors"][0]["message"]

    async def work(client: Client) -> Any:
        return await client.call_tool("review_mode", {"mode": "sometimes"})

    result = over_http(server.base, server.app.state.accounts.issue("rm-bad").token, work)
    assert result.is_error and result.structured_content["error"]["field"] == "mode"
    assert modes(server, "rm-bad") == ("autonomous",) * 3  # nothing changed
