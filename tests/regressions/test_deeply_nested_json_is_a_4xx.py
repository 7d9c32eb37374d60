"""Regression (#22, hostile input): a GraphQL body whose variables nest arrays past Python's
recursion limit (``[[[[...]]]]``, 1,000 deep: 2 KB) answered 500 (a RecursionError in
strawberry's JSON decoding). Every surface now answers such a body with a 4xx, and the
server goes on answering."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from kgmem.api import create_app
from kgmem.config import Settings
from tests.conftest import serve_app
from tests.helpers import MCP_INIT

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture
def served(settings: Settings) -> Iterator[tuple[str, dict[str, str]]]:
    app = create_app(settings)
    key = (settings.home / "api-key").read_text().strip()
    with serve_app(app, settings) as url:
        yield url, {**JSON, "Authorization": f"Bearer {key}"}


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _mcp_session(url: str, headers: dict[str, str]) -> str:
    opened = httpx.post(f"{url}/mcp", json=MCP_INIT, headers=headers, timeout=10)
    assert opened.status_code == 200, opened.text
    return opened.headers["mcp-session-id"]


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_nested_arrays_past_the_recursion_limit_are_refused(
    served: tuple[str, dict[str, str]], depth: int
) -> None:
    url, headers = served
    deep = _deep(depth)
    bodies = {
        "/graphql": '{"query": "{ me { id } }", "variables": {"a": ' + deep + "}}",
        "/api/remember": '{"text": "x", "tags": ' + deep + "}",
        "/api/memories/batch-draft": '{"drafts": ' + deep + "}",
        "/api/messages": '{"messages": ' + deep + "}",
    }
    for path, body in bodies.items():
        answer = httpx.post(url + path, content=body, headers=headers, timeout=30)
        assert 400 <= answer.status_code < 500, (path, answer.status_code, answer.text[:200])
    session = _mcp_session(url, headers)
    call = '{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": '
    call += '"memory_remember", "arguments": {"text": "x", "tags": ' + deep + "}}}"
    answer = httpx.post(
        f"{url}/mcp", content=call, headers={**headers, "mcp-session-id": session}, timeout=30
    )
    assert 400 <= answer.status_code < 500, answer.text[:200]
    assert httpx.get(f"{url}/health", timeout=5).status_code == 200


def test_nesting_within_the_limit_is_judged_by_the_schema(
    served: tuple[str, dict[str, str]],
) -> None:
    url, headers = served
    answer = httpx.post(
        f"{url}/api/remember", content='{"text": "x", "tags": ' + _deep(50) + "}", headers=headers
    )
    assert answer.status_code == 422 and answer.json()["error"]["field"].startswith("tags")
