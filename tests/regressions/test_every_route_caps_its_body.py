"""Regression: ``/graphql`` read and parsed a body of any size (100 MiB: RSS +300 MB). Every
route that takes a body answers 413 naming the field once the body is over
``max_body_bytes``, whether the client declares its length or streams it in chunks."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from starlette.routing import Route

from tests.api.test_sparql import World, running_world

CAP = 4096
PLACEHOLDERS = {"action": "pin", "verdict": "approve", "user": "alice", "name": "house"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("home"), max_body_bytes=CAP) as running:
        yield running


def _writes(world: World) -> list[tuple[str, str]]:
    """(method, path) of every route that takes a body, path parameters filled in."""
    found = []
    for route in world.app.routes:
        assert isinstance(route, Route)
        for method in sorted((route.methods or set()) & {"POST", "PUT", "PATCH", "DELETE"}):
            path = re.sub(
                r"{(\w+)(:\w+)?}", lambda m: PLACEHOLDERS.get(m.group(1), "x"), route.path
            )
            found.append((method, path))
    return found


def test_the_routes_that_take_a_body_are_all_here(world: World) -> None:
    paths = {path for _, path in _writes(world)}
    assert {"/graphql", "/sparql", "/mcp", "/api/memories/batch-draft"} <= paths
    assert len(paths) >= 15


@pytest.mark.parametrize("streamed", [False, True])
def test_every_route_refuses_a_body_over_the_cap(world: World, streamed: bool) -> None:
    big = b'{"query": "' + b"x" * (CAP + 1) + b'"}'
    headers = {"Authorization": f"Bearer {world.admin}", "Content-Type": "application/json"}
    refused = {}
    for method, path in _writes(world):
        content = iter([big[:100], big[100:]]) if streamed else big
        answer = httpx.request(
            method, world.url + path, content=content, headers=headers, timeout=30
        )
        refused[(method, path)] = answer.status_code
        if answer.status_code == 413:
            assert answer.json()["error"]["field"] == "body", (method, path, answer.text)
    if streamed:  # counted as a route reads it: one that refuses first never holds it
        assert all(400 <= status < 500 for status in refused.values()), refused
        assert refused[("POST", "/graphql")] == refused[("POST", "/mcp")] == 413
    else:
        assert {route for route, status in refused.items() if status != 413} == set()
