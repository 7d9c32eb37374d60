"""Task records as first-hand sources on every surface (REST ``POST /api/tasks``, GraphQL
``ingestTask``, the MCP tool ``ingest_task``), against a real uvicorn: a host reports a task
as it runs (created, started, then completed with its output), a draft quotes the output
and becomes memory, a re-sent state changes nothing, a rewritten one is refused, bad input
names its field, and another user's task record proves nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool
from tests.browser.world import DRAFT, gql

INGEST_TASK = """mutation($t: TaskInput!) { ingestTask(task: $t) { __typename
  ... on TaskIngested { records { id type status } }
  ... on InputError { message field } ... on Conflict { message } } }"""
SOURCE = """query($id: ID!) { memory(id: $id) { status evidence { quote sourceType
  source { type text link taskId } } } }"""

OUTPUT = "Booked: flight LH1234 Berlin to Lisbon, 12 March, seat 14C, confirmation QX7Y2K"
STARTED = [
    {"state": "created", "at": "2026-03-01T09:00:00Z"},
    {"state": "started", "at": "2026-03-01T09:00:05Z"},
]
DONE = [*STARTED, {"state": "completed", "at": "2026-03-01T09:01:40Z"}]


def task(task_id: str, states: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
    return {"task_id": task_id, "text": "Book Maya's flight to Lisbon", "states": states, **extra}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "tasks") as s:
        yield s


def draft_from(record: str, quote: str) -> dict[str, Any]:
    return {
        "kind": "EPISODIC",
        "title": "Flight to Lisbon booked",
        "confidence": 0.9,
        "occurredAt": "2026-03-01T09:01:40Z",
        "evidence": [{"source": record, "quote": quote}],
    }


def test_a_task_reported_as_it_runs_is_evidence_a_draft_can_quote(server: ApiServer) -> None:
    with server.client("t-rest") as c:
        first = c.post("/api/tasks", json=task("book-1", STARTED))
        assert first.status_code == 200, first.text
        assert [r["status"] for r in first.json()["records"]] == ["created", "created"]
        done = c.post("/api/tasks", json=task("book-1", DONE, result=OUTPUT)).json()["records"]
        assert [r["status"] for r in done] == ["unchanged", "unchanged", "created"]
        assert {r["type"] for r in done} == {"taskRecord"}
        again = c.post("/api/tasks", json=task("book-1", DONE, result=OUTPUT)).json()["records"]
        assert [r["status"] for r in again] == ["unchanged"] * 3
        completed = done[-1]["id"]

        out = gql(c, DRAFT, d=[draft_from(completed, "flight LH1234 Berlin to Lisbon")])
        [item] = out["draftMemories"]["items"]
        assert item["outcome"] == "active", item
        memory = gql(c, SOURCE, id=item["memoryId"])["memory"]
        [evidence] = memory["evidence"]
        assert evidence["sourceType"] == "taskRecord"
        assert evidence["source"]["taskId"] == "book-1"
        assert evidence["source"]["link"] == "task:book-1"
        assert OUTPUT in evidence["source"]["text"]

        invented = gql(c, DRAFT, d=[draft_from(completed, "flight LH9999 to Porto")])
        assert invented["draftMemories"]["items"][0]["outcome"] == "refused"


def test_a_result_reported_later_completes_its_record_once(server: ApiServer) -> None:
    with server.client("t-late") as c:
        sent = c.post("/api/tasks", json=task("book-2", DONE)).json()["records"]
        assert [r["status"] for r in sent] == ["created"] * 3
        late = c.post("/api/tasks", json=task("book-2", DONE, result=OUTPUT)).json()["records"]
        assert [r["status"] for r in late] == ["unchanged", "unchanged", "updated"]
        changed = c.post("/api/tasks", json=task("book-2", DONE, result="Booked: another flight"))
        assert changed.status_code == 409, changed.text
        rewritten = [{"state": "created", "at": "2026-03-02T09:00:00Z"}]
        assert c.post("/api/tasks", json=task("book-2", rewritten)).status_code == 409


def test_states_sent_out_of_order_are_the_same_records(server: ApiServer) -> None:
    with server.client("t-order") as c:
        first = c.post("/api/tasks", json=task("book-5", [DONE[1], DONE[0]])).json()["records"]
        later = c.post("/api/tasks", json=task("book-5", DONE, result=OUTPUT)).json()["records"]
    assert [r["status"] for r in later] == ["unchanged", "unchanged", "created"]
    assert [r["id"] for r in first] == [r["id"] for r in later[:2]]


def test_every_surface_keeps_the_same_records(server: ApiServer) -> None:
    sent = task("book-3", DONE, result=OUTPUT, chat="travel")
    with server.client("t-a") as c:
        over_rest = c.post("/api/tasks", json=sent).json()["records"]
    with server.client("t-b") as c:
        answer = gql(
            c,
            INGEST_TASK,
            t={
                "taskId": "book-3",
                "text": sent["text"],
                "states": DONE,
                "result": OUTPUT,
                "chat": "travel",
            },
        )
        assert answer["ingestTask"]["__typename"] == "TaskIngested", answer
        over_graphql = answer["ingestTask"]["records"]

    async def work(client: Client) -> dict[str, Any]:
        return await tool(client, "ingest_task", sent)

    token = server.app.state.accounts.add("t-c").token
    over_mcp = over_http(server.base, token, work)["records"]

    def shape(records: list[dict[str, Any]], uid: str) -> list[tuple[str, str, str]]:
        assert all(f"/user/{uid}/" in r["id"] for r in records)
        return [(r["id"].split("/")[-1], r["type"], r["status"]) for r in records]

    assert shape(over_rest, "t-a") == shape(over_graphql, "t-b") == shape(over_mcp, "t-c")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (task("x", [{"state": "paused", "at": "2026-03-01T09:00:00Z"}]), "states[0].state"),
        (task("x", [{"state": "created", "at": "yesterday"}]), "states[0].at"),
        (task("x", STARTED, result="done"), "states"),  # a result needs completed or failed
        (task("x", []), "states"),
        ({"task_id": "x", "states": STARTED}, "text"),
        (task("x", STARTED, owner="bob"), "owner"),
    ],
)
def test_bad_input_is_an_error_naming_the_field_on_every_surface(
    server: ApiServer, body: dict[str, Any], field: str
) -> None:
    with server.client("t-bad") as c:
        answer = c.post("/api/tasks", json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == field, answer.json()

    async def work(client: Client) -> Any:
        return await client.call_tool("ingest_task", body)

    result = over_http(server.base, server.app.state.accounts.issue("t-bad").token, work)
    assert result.is_error and result.structured_content["error"]["field"] == field


def test_another_users_task_record_proves_nothing(server: ApiServer) -> None:
    with server.client("t-owner") as c:
        records = c.post("/api/tasks", json=task("book-4", DONE, result=OUTPUT)).json()["records"]
    with server.client("t-other") as c:
        out = gql(c, DRAFT, d=[draft_from(records[-1]["id"], "flight LH1234 Berlin to Lisbon")])
    [item] = out["draftMemories"]["items"]
    assert item["outcome"] == "refused" and item["memoryId"] is None
