"""#22: a note written by ``remember`` could not be read back by the id it answered (no route
read a note; the memory route said "no such memory") and search did not find it (the search
index held memories, pages and external notes, never short notes). Now the id reads back at
``GET /api/notes/{id}`` (the ``get_note`` tool on MCP), and ``memory_search`` finds the note
right after it was written, on every surface; another user can do neither."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from mcp import Client

from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "notes") as running:
        yield running


def _hits(client: httpx.Client, q: str) -> list[dict[str, Any]]:
    answer = client.get("/api/search", params={"q": q})
    assert answer.status_code == 200, answer.text
    results: list[dict[str, Any]] = answer.json()["results"]
    return results


def test_over_rest_the_note_reads_back_by_its_ids_and_is_found(rest: ApiServer) -> None:
    with rest.client("nora") as nora, rest.client("otto") as otto:
        kept = nora.post("/api/remember", json={"text": "prefers jasmine tea", "chat": "c9"})
        assert kept.status_code == 200, kept.text
        note = kept.json()
        for ref in (note["short_id"], quote(note["id"], safe="")):
            read = nora.get(f"/api/notes/{ref}")
            assert read.status_code == 200, read.text
            assert read.json() == note
        hits = _hits(nora, "jasmine")
        assert [(h["id"], h["kind"], h["short_id"]) for h in hits] == [
            (note["id"], "note", note["short_id"])
        ]
        assert otto.get(f"/api/notes/{note['short_id']}").status_code == 404
        assert _hits(otto, "jasmine") == []


def test_over_mcp_the_note_reads_back_and_is_found(rest: ApiServer) -> None:
    token = rest.app.state.accounts.add("mona").token

    async def work(client: Client) -> tuple[dict[str, Any], ...]:
        kept = await tool(client, "memory_remember", {"text": "allergic to cashews, mildly"})
        read = await tool(client, "get_note", {"id": kept["id"]})
        found = await tool(client, "memory_search", {"query": "cashews"})
        return kept, read, found

    kept, read, found = over_http(rest.base, token, work)
    assert read == kept
    assert [h["id"] for h in found["results"]] == [kept["id"]]


def test_over_graphql_the_note_is_found(rest: ApiServer) -> None:
    with rest.client("gale") as gale:

        def graphql(query: str) -> dict[str, Any]:
            answer = gale.post("/graphql", json={"query": query})
            assert answer.status_code == 200 and "errors" not in answer.json(), answer.text
            data: dict[str, Any] = answer.json()["data"]
            return data

        kept = graphql(
            'mutation { remember(text: "walks the dog at seven") { ... on Remembered { id } } }'
        )
        found = graphql(
            '{ search(query: "dog walks") { ... on SearchResults { hits { id kind } } } }'
        )
    assert found["search"]["hits"] == [{"id": kept["remember"]["id"], "kind": "note"}]
