"""MCP with the official client: streamable HTTP at /mcp (Bearer keys) and stdio (kgmem mcp)."""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from rdflib import URIRef
from starlette.applications import Starlette

from kgmem.config import Settings
from kgmem.store import UserGraphs
from tests.conftest import REPO

AGENT_TOOLS = {
    "memory_remember",
    "memory_search",
    "memory_cite",
    "draft_memory",
    "retrieve_memory",
    "record_outcome",
    "manage_memory",
    "ingest_messages",
}
SAID = "I moved to Lisbon in March and I work at Acme as a nurse"


Session = Callable[[Client], Awaitable[Any]]


def over_http(url: str, token: str, work: Session) -> Any:
    async def run() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client:
            return await work(client)

    return anyio.run(run)


async def tool(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def remember_lisbon(client: Client) -> str:
    message = {"chat": "c1", "turn": 0, "role": "user", "text": SAID}
    await tool(client, "ingest_messages", {"messages": [message]})
    drafted = await tool(
        client,
        "draft_memory",
        {
            "drafts": [
                {
                    "kind": "semantic",
                    "title": "Lives in Lisbon",
                    "confidence": 0.9,
                    "evidence": [{"source": "chat:c1#0", "quote": "I moved to Lisbon in March"}],
                }
            ]
        },
    )
    [item] = drafted["items"]
    assert item["outcome"] == "active", item
    return str(item["memory"])


def test_every_agent_tool_is_listed_with_a_description_and_a_schema(
    base: str, settings: Settings
) -> None:
    token = (settings.home / "api-key").read_text().strip()

    async def work(client: Client) -> Any:
        return (await client.list_tools()).tools

    tools = {t.name: t for t in over_http(base, token, work)}
    assert set(tools) >= AGENT_TOOLS
    for name in AGENT_TOOLS:
        assert len(tools[name].description or "") > 40
        assert tools[name].input_schema["type"] == "object"


def test_the_tools_write_find_cite_and_manage_over_http(app: Starlette, base: str) -> None:
    token = app.state.accounts.add("alice").token

    async def work(client: Client) -> dict[str, Any]:
        memory = await remember_lisbon(client)
        found = await tool(client, "memory_search", {"query": "where does she live Lisbon"})
        cited = await tool(client, "memory_cite", {"id": memory})
        packet = await tool(client, "retrieve_memory", {"task": "Lisbon", "intent": "answer"})
        pinned = await tool(client, "manage_memory", {"id": memory, "action": "pin"})
        note = await tool(client, "memory_remember", {"text": "prefers tea in the morning"})
        return {
            "memory": memory,
            "found": found,
            "cited": cited,
            "packet": packet,
            "pinned": pinned,
            "note": note,
        }

    done = over_http(base, token, work)
    hits = done["found"]["results"]
    assert hits and hits[0]["id"] == done["memory"]
    assert done["cited"]["use_count"] == 1
    assert done["memory"] in str(done["packet"])
    services = app.state.services
    record = services.lifecycle.get("alice", URIRef(done["memory"]))
    assert record.pinned and record.use_count == 1
    stored = services.sources.get("alice", [done["note"]["id"]])
    assert [r.text for r in stored.values()] == ["prefers tea in the morning"]


def test_a_refused_draft_is_a_decision_in_the_feed_tool(app: Starlette, base: str) -> None:
    token = app.state.accounts.add("alice").token

    async def work(client: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        message = {"chat": "c1", "turn": 0, "role": "user", "text": SAID}
        await tool(client, "ingest_messages", {"messages": [message]})
        invented = {
            "kind": "semantic",
            "title": "Lives in Porto",
            "confidence": 0.9,
            "evidence": [{"source": "chat:c1#0", "quote": "I moved to Porto in March"}],
        }
        drafted = await tool(client, "draft_memory", {"drafts": [invented]})
        return drafted, await tool(client, "decisions_feed", {"limit": 1000})

    drafted, feed = over_http(base, token, work)
    [item] = drafted["items"]
    assert item["outcome"] == "refused" and item["memory"] is None
    [decision] = feed["decisions"]
    assert decision["id"] == item["decision"] and decision["action"] == "refuse"
    assert decision["target"] is None and decision["draft"]["title"] == "Lives in Porto"
    assert decision["reason"] == "; ".join(item["reasons"]) and decision["reason"]
    assert app.state.services.store.count(UserGraphs("alice").kg) == 0


def test_bad_arguments_are_tool_errors_that_name_the_field(app: Starlette, base: str) -> None:
    token = app.state.accounts.add("alice").token

    async def work(client: Client) -> list[Any]:
        return [
            await client.call_tool("memory_search", {"query": ""}),
            await client.call_tool("memory_search", {"query": "x", "k": 0}),
            await client.call_tool("memory_search", {"query": "x", "colour": "red"}),
            await client.call_tool("draft_memory", {"drafts": []}),
            await client.call_tool("no_such_tool", {}),
        ]

    for result in over_http(base, token, work):
        assert result.is_error
        error = result.structured_content["error"]
        assert error["status"] in (400, 404, 422) and error["message"]
    assert not app.state.services.store.count(UserGraphs("alice").kg)  # nothing written


def test_one_users_key_never_reaches_another_users_memories(app: Starlette, base: str) -> None:
    alice, bob = app.state.accounts.add("alice").token, app.state.accounts.add("bob").token
    memory = over_http(base, alice, remember_lisbon)

    async def snoop(client: Client) -> list[Any]:
        return [
            await client.call_tool("memory_search", {"query": "Lisbon"}),
            await client.call_tool("memory_cite", {"id": memory}),
            await client.call_tool("manage_memory", {"id": memory, "action": "forget"}),
            await client.call_tool("record_outcome", {"items": [memory], "verdict": "misleading"}),
        ]

    search, *refused = over_http(base, bob, snoop)
    assert not search.is_error and search.structured_content["results"] == []
    for result in refused:
        assert result.is_error and result.structured_content["error"]["status"] in (404, 422)
    record = app.state.services.lifecycle.get("alice", URIRef(memory))
    assert record.status.value == "active" and record.use_count == 0


def test_mcp_over_http_needs_a_key(base: str) -> None:
    answer = httpx.post(f"{base}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 401
    assert answer.json()["error"]["code"] == "unauthenticated"


@pytest.mark.integration
def test_kgmem_mcp_serves_the_tools_over_stdio(home: Any) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "kgmem.cli", "mcp", "--user", "alice"],
        env={**os.environ, "KGMEM_HOME": str(home)},
        cwd=REPO,
    )

    async def run() -> tuple[set[str], str, dict[str, Any]]:
        async with Client(params) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            memory = await remember_lisbon(client)
            found = await tool(client, "memory_search", {"query": "Lisbon"})
            return names, memory, found

    names, memory, found = anyio.run(run)
    assert names >= AGENT_TOOLS
    assert [h["id"] for h in found["results"]] == [memory]
    assert memory.startswith("https://w3id.org/kgmem/user/alice/")
