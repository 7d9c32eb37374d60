"""Regression: a REST body was decoded on the event loop, and checked there against its
schema once bodies were (a 1 MiB batch of small objects takes seconds to check), so one
request could hold every other, ``/health`` included. Both now run on the worker thread
that runs the tool."""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

import kgmem.api.rest.routes as rest
from kgmem.api.rest.schema_check import SchemaCheck
from kgmem.config import Settings
from tests.helpers import on_the_loop_when_called


def test_a_body_is_decoded_and_checked_on_a_worker_thread(
    client: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[bool] = []
    checked: list[bool] = []
    monkeypatch.setattr(rest, "decode_json", on_the_loop_when_called(decoded, rest.decode_json))
    monkeypatch.setattr(SchemaCheck, "check", on_the_loop_when_called(checked, SchemaCheck.check))
    key = (settings.home / "api-key").read_text().strip()
    answer = client.post(
        "/api/remember", json={"text": "tea"}, headers={"Authorization": f"Bearer {key}"}
    )
    assert answer.status_code == 200, answer.text
    assert decoded == [False]
    assert checked == [False]
