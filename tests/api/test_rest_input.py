"""Bad input on the REST surface: 4xx in the one error shape, naming the problem, and
nothing stored changes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.support import ApiServer, api_server
from tests.api.test_rest import allergy

CAP = 4096


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "rest-input", max_body_bytes=CAP) as running:
        yield running


@pytest.fixture(scope="module")
def memory(rest: ApiServer) -> str:
    with rest.client("eve") as c:
        return allergy(c, "e1", "peanuts").rsplit("/", 1)[1]


BODY_ROUTES = [
    "/api/memories/batch-draft",
    "/api/cite",
    "/api/remember",
    "/api/messages",
    "/api/context",
    "/api/outcomes",
    "/api/memories/{memory}/rate",
]


def error_of(answer: httpx.Response, status: int) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    error: dict[str, Any] = answer.json()["error"]
    assert set(error) == {"code", "message", "field"}
    return error


@pytest.mark.parametrize("route", BODY_ROUTES)
def test_a_malformed_body_is_refused_and_changes_nothing(
    rest: ApiServer, memory: str, route: str
) -> None:
    url = route.format(memory=memory)
    json_type = {"Content-Type": "application/json"}
    with rest.client("eve") as c:
        before = rest.snapshot()
        bad = error_of(c.post(url, content=b'{"text": ', headers=json_type), 400)
        assert bad["code"] == "malformed" and "JSON" in bad["message"]
        assert error_of(c.post(url, content=b"\xff\xfe{}", headers=json_type), 400)["field"]
        assert error_of(c.post(url, content=b"NaN", headers=json_type), 400)
        typed = error_of(c.post(url, content=b"{}", headers={"Content-Type": "text/plain"}), 415)
        assert typed["field"] == "Content-Type" and "text/plain" in typed["message"]
        big = json.dumps({"text": "x" * CAP}).encode()
        assert error_of(c.post(url, content=big, headers=json_type), 413)["field"] == "body"
        assert error_of(c.post(url, json=["a list"]), 422)["code"] == "invalid"
        assert (
            error_of(c.post(url, json={"zzz_unknown": 1, **_valid(route, memory)}), 422)["field"]
            == "zzz_unknown"
        )
        assert rest.snapshot() == before


def _valid(route: str, memory: str) -> dict[str, Any]:
    return {
        "/api/memories/batch-draft": {"drafts": [{"kind": "semantic", "title": "t"}]},
        "/api/cite": {"id": memory},
        "/api/remember": {"text": "a note"},
        "/api/messages": {"messages": [{"chat": "z", "turn": 0, "role": "user", "text": "hi"}]},
        "/api/context": {"task": "peanuts"},
        "/api/outcomes": {"items": [memory], "verdict": "helpful"},
        "/api/memories/{memory}/rate": {"delta": 1},
    }[route]


@pytest.mark.parametrize(
    ("route", "body", "field"),
    [
        ("/api/memories/batch-draft", {"drafts": []}, "drafts"),
        (
            "/api/memories/batch-draft",
            {"drafts": [{"kind": "semantic", "title": "t"}] * 26},
            "drafts",
        ),
        (
            "/api/memories/batch-draft",
            {"drafts": [{"kind": "semantic", "title": "ok"}, {"kind": "semantic", "title": ""}]},
            "drafts[1].title",
        ),
        (
            "/api/memories/batch-draft",
            {"drafts": [{"kind": "mood", "title": "t"}]},
            "drafts[0].kind",
        ),
        ("/api/memories/batch-draft", {"drafts": ["not an object"]}, "drafts[0]"),
        ("/api/remember", {"text": "   "}, "text"),
        ("/api/remember", {"text": 3}, "text"),
        ("/api/remember", {}, "text"),
        (
            "/api/messages",
            {"messages": [{"chat": "c", "turn": -1, "role": "user", "text": "x"}]},
            "messages[0].turn",
        ),
        (
            "/api/messages",
            {"messages": [{"chat": "c", "turn": 0, "role": "boss", "text": "x"}]},
            "messages[0].role",
        ),
        (
            "/api/messages",
            {
                "messages": [
                    {"chat": "c", "turn": 0, "role": "user", "text": "x", "agent_reported": True}
                ]
            },
            "messages[0].agent_reported",
        ),
        ("/api/context", {"task": "x", "intent": "dream"}, "intent"),
        ("/api/context", {"task": "x", "k": 0}, "k"),
        ("/api/outcomes", {"items": [], "verdict": "helpful"}, "items"),
        ("/api/outcomes", {"items": ["{memory}"], "verdict": "great"}, "verdict"),
        ("/api/cite", {"id": ""}, "id"),
        ("/api/memories/{memory}/rate", {"delta": 2}, "delta"),
        ("/api/memories/{memory}/rate", {}, "delta"),
        ("/api/memories/{memory}/pin", {"delta": 1}, "delta"),
        ("/api/memories/{memory}/pin", {"id": "other"}, "id"),
    ],
)
def test_a_bad_argument_is_a_422_naming_the_field(
    rest: ApiServer, memory: str, route: str, body: Any, field: str
) -> None:
    text = json.dumps(body).replace("{memory}", memory) if body is not None else None
    with rest.client("eve") as c:
        before = rest.snapshot()
        answer = c.post(
            route.format(memory=memory),
            content=text,
            headers={"Content-Type": "application/json"} if text else {},
        )
        assert error_of(answer, 422)["field"] == field
        assert rest.snapshot() == before


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/search?q=", "q"),
        ("/api/search", "q"),
        ("/api/search?q=x&k=0", "k"),
        ("/api/search?q=x&k=many", "k"),
        ("/api/search?q=x&kind=mood", "kind"),
        ("/api/search?q=x&status=happy", "status"),
        ("/api/search?q=x&since=yesterday", "since"),
        ("/api/search?q=x&q=y", "q"),
        ("/api/search?q=x&user=bob", "user"),
        ("/api/memories?kind=mood", "kind"),
        ("/api/memories?limit=0", "limit"),
        ("/api/review?limit=100000", "limit"),
        ("/api/decisions?user=bob", "user"),
    ],
)
def test_a_bad_query_parameter_is_a_422_naming_it(rest: ApiServer, url: str, field: str) -> None:
    with rest.client("eve") as c:
        assert error_of(c.get(url), 422)["field"] == field


def test_an_unknown_action_is_no_route(rest: ApiServer, memory: str) -> None:
    with rest.client("eve") as c:
        before = rest.snapshot()
        assert error_of(c.post(f"/api/memories/{memory}/explode"), 404)["field"] == "path"
        assert rest.snapshot() == before


def test_a_get_with_a_body_and_a_request_without_a_key_are_refused(rest: ApiServer) -> None:
    with rest.client("eve") as c:
        assert error_of(c.request("GET", "/api/decisions", content=b"{}"), 400)
    before = rest.snapshot()
    anonymous = httpx.post(f"{rest.base}/api/remember", json={"text": "hello"}, timeout=10)
    assert error_of(anonymous, 401)["field"] == "Authorization"
    assert rest.snapshot() == before
