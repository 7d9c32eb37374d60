"""Regression (found by the hostile suite): a ``/graphql`` body that is JSON but not an
object (``null``, a string, a number, an array) answered 500: strawberry reads the body
with ``.get``. It is now a 400, and an object body still runs."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from kgmem.config import Settings


@pytest.mark.parametrize("body", [b"null", b'"{ me { id } }"', b"42", b"true", b"[]"])
def test_a_body_that_is_not_an_object_is_a_400(
    client: TestClient, settings: Settings, body: bytes
) -> None:
    key = (settings.home / "api-key").read_text().strip()
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    answer = client.post("/graphql", content=body, headers=headers)
    assert answer.status_code == 400, answer.text
    assert "JSON object" in answer.text
    good = client.post("/graphql", content=b'{"query": "{ me { id } }"}', headers=headers)
    assert good.json() == {"data": {"me": {"id": "me"}}}
