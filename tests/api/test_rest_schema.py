"""schemathesis against ``/api/openapi.json`` on a real server: generated input (valid and
not) never makes a route answer 5xx, every answer has a status the document declares, and
the document describes every REST route."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error, status_code_conformance

from kgmem.api import create_app
from kgmem.api.rest_table import ENDPOINTS, Endpoint
from kgmem.config import load_settings
from tests.api.test_rest import Rest, allergy
from tests.conftest import free_port, serve_app


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rest]:
    home: Path = tmp_path_factory.mktemp("rest-schema")
    config = load_settings(env={"KGMEM_HOME": str(home)}, port=free_port())
    app = create_app(config)
    with serve_app(app, config) as base:
        yield Rest(app, base)


@pytest.fixture(scope="module")
def auth(rest: Rest) -> dict[str, str]:
    with rest.client("fuzz") as client:
        allergy(client, "f1", "peanuts")  # something for generated input to find or change
        return dict(client.headers)


@pytest.fixture(scope="module")
def document(rest: Rest, auth: dict[str, str]) -> dict[str, Any]:
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
    api: schemathesis.BaseSchema, rest: Rest, auth: dict[str, str], endpoint: Endpoint
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
