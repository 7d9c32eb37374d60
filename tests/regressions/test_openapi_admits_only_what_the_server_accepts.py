"""#22: schemathesis found six inputs the OpenAPI document admits and the server refused
(``since == until``, ``k: 14.0``, an episode with no ``occurred_at``, a tool message with no
``tool_outcome``, ``task: ""``, ``decision`` with ``pin``), and ``k: null`` accepted although
no schema admits a null. Each case now gets the same answer from the document and from the
server: admitted and accepted, or refused by both with a 422 naming the field."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from tests.api.support import ApiServer, api_server
from tests.api.test_rest import allergy

WHEN = "2026-03-14T10:00:00Z"


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str  # as the document writes it; {id} is a memory of the caller
    query: dict[str, Any] | None = None
    body: dict[str, Any] | None = None
    field: str | None = None  # None: admitted and accepted; else refused naming it


CASES = (
    Case(
        "since equals until", "GET", "/api/search", {"q": "peanuts", "since": WHEN, "until": WHEN}
    ),
    Case("k an integral number", "POST", "/api/context", body={"task": "lunch", "k": 14.0}),
    Case(
        "an episode with no occurred_at",
        "POST",
        "/api/memories/batch-draft",
        body={"drafts": [{"kind": "episodic", "title": "Trip to Rome"}]},
        field="drafts[0].occurred_at",
    ),
    Case(
        "a tool message with no tool_outcome",
        "POST",
        "/api/messages",
        body={"messages": [{"chat": "c", "turn": 0, "role": "tool", "text": "200 OK"}]},
        field="messages[0].tool_outcome",
    ),
    Case(
        "an empty task",
        "POST",
        "/api/outcomes",
        body={"items": ["{id}"], "verdict": "helpful", "task": ""},
    ),
    Case(
        "decision with pin",
        "POST",
        "/api/memories/{id}/pin",
        body={"decision": "d"},
        field="decision",
    ),
    Case("k null", "POST", "/api/context", body={"task": "lunch", "k": None}, field="k"),
)


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "admits") as running:
        yield running


@pytest.fixture(scope="module")
def client(rest: ApiServer) -> Iterator[httpx.Client]:
    with rest.client("ada") as c:
        yield c


@pytest.fixture(scope="module")
def memory(client: httpx.Client) -> str:
    return allergy(client, "a1", "peanuts").rsplit("/", 1)[-1]


@pytest.fixture(scope="module")
def document(client: httpx.Client) -> dict[str, Any]:
    answer = client.get("/api/openapi.json")
    assert answer.status_code == 200, answer.text
    doc: dict[str, Any] = answer.json()
    return doc


def _schema(document: dict[str, Any], case: Case) -> dict[str, Any]:
    """What the document says the case's body (or its query string) may be."""
    operation = document["paths"][case.path][case.method.lower()]
    if case.body is not None:
        schema: dict[str, Any] = operation["requestBody"]["content"]["application/json"]["schema"]
        return schema
    params = [p for p in operation["parameters"] if p["in"] == "query"]
    return {
        "type": "object",
        "properties": {p["name"]: p["schema"] for p in params},
        "required": [p["name"] for p in params if p["required"]],
        "additionalProperties": False,
    }


def _fill(value: Any, memory: str) -> Any:
    if isinstance(value, str):
        return value.replace("{id}", memory)
    if isinstance(value, list):
        return [_fill(v, memory) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, memory) for k, v in value.items()}
    return value


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_document_and_the_server_agree(
    document: dict[str, Any], client: httpx.Client, memory: str, case: Case
) -> None:
    instance = case.body if case.body is not None else case.query
    admitted = Draft202012Validator(_schema(document, case)).is_valid(instance)
    assert admitted is (case.field is None), f"the document {'admits' if admitted else 'refuses'}"
    answer = client.request(
        case.method,
        _fill(case.path, memory),
        params=case.query,
        json=_fill(case.body, memory),
    )
    if case.field is None:
        assert answer.status_code == 200, answer.text
    else:
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == case.field
