"""Regression: a REST body was decoded on the event loop, and checked there against its
schema once bodies were (a 1 MiB batch of small objects takes seconds to check), so one
request could hold every other, ``/health`` included. Both now run on the worker thread
that runs the tool."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from starlette.testclient import TestClient

import kgmem.api.rest as rest
from kgmem.api.schema_check import SchemaCheck
from kgmem.config import Settings


def _on_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _recording(calls: list[bool], wrapped: Callable[..., Any]) -> Callable[..., Any]:
    def record(*args: Any, **kwargs: Any) -> Any:
        calls.append(_on_loop())
        return wrapped(*args, **kwargs)

    return record


def test_a_body_is_decoded_and_checked_on_a_worker_thread(
    client: TestClient, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[bool] = []
    checked: list[bool] = []
    monkeypatch.setattr(rest, "decode_json", _recording(decoded, rest.decode_json))
    monkeypatch.setattr(SchemaCheck, "check", _recording(checked, SchemaCheck.check))
    key = (settings.home / "api-key").read_text().strip()
    answer = client.post(
        "/api/remember", json={"text": "tea"}, headers={"Authorization": f"Bearer {key}"}
    )
    assert answer.status_code == 200, answer.text
    assert decoded == [False]
    assert checked == [False]
