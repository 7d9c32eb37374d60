"""Regression: ``memories(first: -1)`` answered one node instead of an error naming the field."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from kgmem.config import Settings


@pytest.mark.parametrize(
    "query",
    [
        "{ memories(first: -1) { nodes { id } } }",
        "{ memories(first: 0) { nodes { id } } }",
        "{ entities(first: -5) { total } }",
        "{ reviewInbox(first: 0) { id } }",
        "{ decisions(first: -1) { id } }",
    ],
)
def test_a_page_below_one_is_an_error_naming_first(
    client: TestClient, settings: Settings, query: str
) -> None:
    key = (settings.home / "api-key").read_text().strip()
    body = client.post(
        "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {key}"}
    ).json()
    assert body.get("data") is None, body
    (error,) = body["errors"]
    assert "first must be at least 1" in error["message"]
    assert error["extensions"] == {"field": "first", "code": "BAD_USER_INPUT"}
