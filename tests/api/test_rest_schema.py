"""``/api/openapi.json`` describes every REST route, its parameters and the one error shape.
What the server does with generated input, valid and not, is ``tests/hostile``'s."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kgmem.api.rest.table import ENDPOINTS
from tests.api.support import ApiServer, api_server


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "rest-schema") as running:
        yield running


@pytest.fixture(scope="module")
def auth(rest: ApiServer) -> dict[str, str]:
    with rest.client("reader") as client:
        return dict(client.headers)


@pytest.fixture(scope="module")
def document(rest: ApiServer, auth: dict[str, str]) -> dict[str, Any]:
    answer = httpx.get(f"{rest.base}/api/openapi.json", headers=auth, timeout=10)
    assert answer.status_code == 200
    doc: dict[str, Any] = answer.json()
    return doc


def test_the_document_lists_every_route_and_the_error_shape(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    for endpoint in ENDPOINTS:
        operation = document["paths"][endpoint.path][endpoint.method.lower()]
        assert operation["responses"]["422"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"
        }
        assert ("requestBody" in operation) == endpoint.body
    assert document["components"]["schemas"]["Error"]["required"] == ["error"]
    search = document["paths"]["/api/search"]["get"]["parameters"]
    assert {p["name"] for p in search} >= {"q", "kind", "k"}
