"""Pages on every surface, against a real uvicorn: ``GET /api/pages`` and GraphQL's ``page``
read a page, playbook or note by the path a search hit gave or by its entity; MCP lists the
caller's pages as resources and reads the one a hit's path names. Nothing reads another
user's page, and no path reaches a file outside the caller's memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.api.support import ApiServer, api_server
from tests.api.test_rest import allergy


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "pages-home") as running:
        yield running


@pytest.fixture(scope="module")
def walnut_page(server: ApiServer) -> dict[str, Any]:
    """Pia is allergic to walnuts; the search hit of her walnut page."""
    with server.client("pia") as c:
        allergy(c, "p1", "walnuts")
        assert server.app.state.services.settle()
        hits = c.get("/api/search", params={"q": "walnuts"}).json()["results"]
    [page] = [h for h in hits if h["kind"] == "page" and h["title"] == "walnuts"]
    return dict(page)


def test_a_search_hits_path_reads_the_page_over_rest(
    server: ApiServer, walnut_page: dict[str, Any]
) -> None:
    assert walnut_page["path"].startswith("/") and walnut_page["path"].endswith("walnuts.md")
    with server.client("pia") as c:
        answer = c.get("/api/pages", params={"path": walnut_page["path"]})
        assert answer.status_code == 200, answer.text
        page = answer.json()
        assert page["kind"] == "page" and page["path"] == "Memory/entities/walnuts.md"
        assert page["file"] == walnut_page["path"] and page["id"] == walnut_page["id"]
        assert Path(page["file"]).read_text("utf-8") == page["markdown"]  # the file is it
        for other in ("Memory/entities/walnuts.md", "entities/walnuts.md"):
            assert c.get("/api/pages", params={"path": other}).json()["id"] == page["id"]
        by_entity = c.get("/api/pages/by-entity", params={"entity": "walnuts"}).json()
        assert by_entity["id"] == page["id"]


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({}, 422, "path"),
        ({"path": "entities/walnuts.md", "entity": "walnuts"}, 422, "entity"),
        ({"path": "../../../etc/passwd"}, 404, None),
        ({"path": "/etc/passwd"}, 404, None),
        ({"path": "entities/nothing.md"}, 404, None),
        ({"entity": "walnuts"}, 422, "entity"),
        ({"sneaky": "1"}, 422, "sneaky"),
    ],
)
def test_bad_page_reads_are_refused_with_the_field_named(
    server: ApiServer,
    walnut_page: dict[str, Any],
    params: dict[str, str],
    status: int,
    field: str | None,
) -> None:
    with server.client("pia") as c:
        answer = c.get("/api/pages", params=params)
    assert answer.status_code == status, answer.text
    if field is not None:
        assert answer.json()["error"]["field"] == field


def test_another_user_cannot_read_the_page_by_any_path(
    server: ApiServer, walnut_page: dict[str, Any]
) -> None:
    with server.client("quinn") as q:
        for given in (walnut_page["path"], "Memory/entities/walnuts.md", "entities/walnuts.md"):
            assert q.get("/api/pages", params={"path": given}).status_code == 404
        by_entity = q.get("/api/pages/by-entity", params={"entity": walnut_page["id"]})
        assert by_entity.status_code == 404
        assert q.get("/api/pages/by-entity", params={"entity": "walnuts"}).status_code == 404


def test_graphql_reads_the_page_or_answers_null(
    server: ApiServer, walnut_page: dict[str, Any]
) -> None:
    query = "query($p: String, $e: String) { page(path: $p, entity: $e) { id kind path markdown } }"
    with server.client("pia") as c:
        found = c.post("/graphql", json={"query": query, "variables": {"p": walnut_page["path"]}})
        page = found.json()["data"]["page"]
        assert page["id"] == walnut_page["id"] and "# walnuts" in page["markdown"]
        none = c.post("/graphql", json={"query": query, "variables": {"p": "/etc/passwd"}})
        assert none.json()["data"]["page"] is None
        both = c.post("/graphql", json={"query": query, "variables": {"p": "x", "e": "y"}})
        assert both.json()["errors"][0]["extensions"]["field"] == "path"
    with server.client("quinn") as q:
        other = q.post("/graphql", json={"query": query, "variables": {"e": "walnuts"}})
        assert other.json()["data"]["page"] is None


def _mcp(server: ApiServer, uid: str, work: Any) -> Any:
    with server.client(uid) as c:
        token = str(c.headers["Authorization"])

    async def run() -> Any:
        http = httpx2.AsyncClient(headers={"Authorization": token}, timeout=60)
        async with (
            http,
            Client(streamable_http_client(f"{server.base}/mcp", http_client=http)) as client,
        ):
            return await work(client)

    return anyio.run(run)


def test_mcp_lists_the_callers_pages_as_resources_and_reads_a_hits_path(
    server: ApiServer, walnut_page: dict[str, Any]
) -> None:
    uri = f"file://{walnut_page['path']}"

    async def work(client: Client) -> Any:
        listed = (await client.list_resources()).resources
        read = await client.read_resource(uri)
        return listed, read

    listed, read = _mcp(server, "pia", work)
    assert uri in {str(r.uri) for r in listed}
    assert all(r.mime_type == "text/markdown" for r in listed)
    [content] = read.contents
    assert content.text.startswith("---") and "# walnuts" in content.text

    async def stranger(client: Client) -> Any:
        listed = (await client.list_resources()).resources
        with pytest.raises(MCPError) as refused:
            await client.read_resource(uri)
        return listed, refused.value.code

    others, code = _mcp(server, "quinn", stranger)
    assert uri not in {str(r.uri) for r in others} and code == -32002


def test_the_read_page_tool_is_listed_for_agents(server: ApiServer) -> None:
    async def work(client: Client) -> Any:
        return {t.name: t for t in (await client.list_tools()).tools}

    tools = _mcp(server, "pia", work)
    assert "read_page" in tools and set(tools["read_page"].input_schema["properties"]) == {
        "path",
        "entity",
    }
