"""schemathesis against ``/api/openapi.json`` on a real server: generated input (valid and
not) never makes a route answer 5xx, every answer has a status the document declares, and
the document describes every REST route."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error, status_code_conformance

from kgmem.api.rest_table import ENDPOINTS, Endpoint
from tests.api.support import ApiServer, api_server
from tests.api.test_rest import allergy


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "rest-schema") as running:
        yield running


@pytest.fixture(scope="module")
def auth(rest: ApiServer) -> dict[str, str]:
    with rest.client("fuzz") as client:
        allergy(client, "f1", "peanuts")  # something for generated input to find or change
        return dict(client.headers)


@pytest.fixture(scope="module")
def document(rest: ApiServer, auth: dict[str, str]) -> dict[str, Any]:
    answer = httpx.get(f"{rest.base}/api/openapi.json", headers=auth, timeout=10)
    assert answer.status_code == 200
    doc: dict[str, Any] = answer.json()
    return doc


@pytest.fixture(scope="module")
def api(document: dict[str, Any]) -> schemathesis.BaseSchema:
    return schemathesis.openapi.from_dict(document)


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


# schemathesis' own pytest plugin does not run under pytest 9 (it reads a private field
# pytest removed), so each operation's strategy is drawn with hypothesis directly.
@pytest.mark.integration
@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=lambda e: f"{e.method} {e.path}")
def test_generated_input_never_gets_a_5xx(
    api: schemathesis.BaseSchema, rest: ApiServer, auth: dict[str, str], endpoint: Endpoint
) -> None:
    operation = api[endpoint.path][endpoint.method]
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=12,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
            database=None,
        )
        def call(case: schemathesis.Case) -> None:
            case.call_and_validate(
                base_url=rest.base,
                headers=auth,
                checks=[not_a_server_error, status_code_conformance],
                timeout=30,
            )

        call()
