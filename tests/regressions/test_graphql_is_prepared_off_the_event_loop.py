"""Regression: strawberry parsed and validated every GraphQL document on the event loop, so a
large document (1 MiB of comment: ~0.3 s to lex) held every other request of every user,
``/health`` included. Both now run on a worker thread, and strawberry's own parse never runs.

Also: a document of two operations with no ``operationName`` ran the first; it is refused,
naming the field."""

from __future__ import annotations

import pytest
import strawberry.schema.schema
from starlette.testclient import TestClient

import kgmem.api.graphql.prepare as prepare
from kgmem.config import Settings
from tests.helpers import on_the_loop_when_called


def _key(settings: Settings) -> dict[str, str]:
    return {"Authorization": f"Bearer {(settings.home / 'api-key').read_text().strip()}"}


def test_parse_and_validation_run_on_a_worker_thread(
    client: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[bool] = []
    validated: list[bool] = []
    strawberry_parsed: list[bool] = []
    monkeypatch.setattr(prepare, "parse", on_the_loop_when_called(parsed, prepare.parse))
    monkeypatch.setattr(
        prepare, "validate_document", on_the_loop_when_called(validated, prepare.validate_document)
    )
    monkeypatch.setattr(
        strawberry.schema.schema,
        "parse",
        on_the_loop_when_called(strawberry_parsed, strawberry.schema.schema.parse),
    )
    answer = client.post("/graphql", json={"query": "{ me { id } }"}, headers=_key(settings))
    assert answer.json() == {"data": {"me": {"id": "me"}}}
    assert parsed == [False]
    assert validated == [False]
    assert strawberry_parsed == []  # the document it was handed is the one parsed off the loop


@pytest.mark.parametrize(
    ("query", "error"),
    [
        ("{ me { id", "Syntax Error"),
        ("{ me { nope } }", "Cannot query field 'nope'"),
        ("query A { me { id } } query B { me { id } }", "operationName must name one"),
        ("{ me { id } } { memories(first: 1) { nodes { id } } }", "operationName must name one"),
    ],
)
def test_a_refused_document_keeps_its_message(
    client: TestClient, settings: Settings, query: str, error: str
) -> None:
    body = client.post("/graphql", json={"query": query}, headers=_key(settings)).json()
    assert body.get("data") is None
    assert any(error in e["message"] for e in body["errors"]), body


def test_two_operations_run_the_one_named(client: TestClient, settings: Settings) -> None:
    query = "query A { me { id } } query B { memories(first: 1) { nodes { id } } }"
    payload = {"query": query, "operationName": "B"}
    body = client.post("/graphql", json=payload, headers=_key(settings)).json()
    assert body == {"data": {"memories": {"nodes": []}}}
    (error,) = client.post("/graphql", json={"query": query}, headers=_key(settings)).json()[
        "errors"
    ]
    assert error["extensions"] == {"field": "operationName", "code": "BAD_REQUEST"}
