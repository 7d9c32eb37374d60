"""reflect_session on every surface against a real uvicorn: an agent's key keeps the chat it
hands over as agent-reported (its learnings wait for review), a host key keeps it first-hand
(its learnings activate), turns the host kept already are not kept twice, an invented quote is
refused, bad input names the field, and with a model the chat is consolidated at once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from mcp import Client

from kgmem.api.accounts import Role
from kgmem.pipeline import ModelSet, ModelSpec
from kgmem.pipeline.consolidation import Consolidation
from kgmem.pipeline.ports import PassPorts
from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool
from tests.browser.world import gql
from tests.pipeline.scripted import ScriptedEngine

CHAT = [
    {"turn": 0, "role": "user", "text": "Can you book the usual table at Taberna for Friday?"},
    {"turn": 1, "role": "assistant", "text": "Sure, the one by the window for two at 8pm?"},
    {
        "turn": 2,
        "role": "user",
        "text": "Yes. Rui always gets the window seat, he hates the draft.",
    },
    {
        "turn": 3,
        "role": "tool",
        "text": "Booking confirmed: Taberna, Friday 20:00, 2 people, window.",
        "tool_name": "bookings",
        "tool_outcome": "success",
    },
]


def learnings(chat: str) -> list[dict[str, Any]]:
    return [
        {
            "kind": "semantic",
            "title": "Rui prefers the window seat",
            "confidence": 0.9,
            "evidence": [{"source": f"chat:{chat}#2", "quote": "Rui always gets the window seat"}],
        },
        {
            "kind": "procedural",
            "title": "Booking the usual table at Taberna",
            "confidence": 0.9,
            "steps": ["Book the usual table at Taberna", "The one by the window, for two at 8pm"],
            "evidence": [
                {"source": f"chat:{chat}#0", "quote": "book the usual table at Taberna"},
                {"source": f"chat:{chat}#1", "quote": "the one by the window for two at 8pm"},
            ],
        },
        {  # invented: nobody said this
            "kind": "semantic",
            "title": "Rui is vegetarian",
            "confidence": 0.9,
            "evidence": [{"source": f"chat:{chat}#2", "quote": "Rui is vegetarian"}],
        },
    ]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "reflect", sweep_interval_seconds=3600) as s:
        yield s


def host_client(server: ApiServer, uid: str) -> httpx.Client:
    with server.client(uid):  # the account exists
        pass
    token = server.app.state.accounts.issue(uid, "the app", host=True).token
    return httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {token}"})


def test_an_agents_report_waits_and_a_hosts_is_first_hand(server: ApiServer) -> None:
    async def reflect(client: Client) -> dict[str, Any]:
        args = {
            "chat": "fri",
            "messages": CHAT,
            "learnings": learnings("fri"),
            "consolidate": False,
        }
        return await tool(client, "reflect_session", args)

    with server.client("rs-ana") as c:  # the account, and the agent's key
        token = str(c.headers["Authorization"]).removeprefix("Bearer ")
    agent = over_http(server.base, token, reflect)
    assert agent["first_hand"] is False and agent["already_kept"] == 0
    assert [m["status"] for m in agent["messages"]] == ["created"] * 4
    outcomes = [i["outcome"] for i in agent["learnings"]]
    assert outcomes == ["pending", "pending", "refused"]  # retold by the agent: it waits
    assert "its evidence cannot activate it alone" in agent["learnings"][0]["reasons"]
    with server.client("rs-ana") as c:
        memory = c.get(f"/api/memories/{agent['learnings'][0]['short_id']}").json()
        [evidence] = memory["evidence"]
        assert evidence["agent_reported"] is True
        assert evidence["source"] == agent["messages"][2]["id"]

    with host_client(server, "rs-ben") as c:
        body = {"chat": "fri", "messages": CHAT, "learnings": learnings("fri")}
        host = c.post("/api/sessions/reflect", json=body).json()
    assert host["first_hand"] is True and host["consolidation_pass"] is None  # no model
    assert [i["outcome"] for i in host["learnings"]] == ["active", "active", "refused"]
    with server.client("rs-ben") as c:
        found = c.get("/api/search", params={"q": "which seat does Rui like"}).json()["results"]
        assert found[0]["title"] == "Rui prefers the window seat"
        steps = c.get(f"/api/memories/{host['learnings'][1]['short_id']}").json()["steps"]
        assert steps == ["Book the usual table at Taberna", "The one by the window, for two at 8pm"]
    with server.client("rs-ana") as c:  # her pending drafts only, nothing of Ben's
        params = {"q": "Rui window seat", "status": "pending"}
        hits = c.get("/api/search", params=params).json()["results"]
        assert hits[0]["title"] == "Rui prefers the window seat"
        assert all("/rs-ana/" in h["id"] for h in hits)


def test_turns_the_host_kept_are_not_kept_twice(server: ApiServer) -> None:
    uid = "rs-cleo"
    with host_client(server, uid) as c:
        turns = [{"chat": "sat", **t} for t in CHAT]
        c.post("/api/messages", json={"messages": turns}).raise_for_status()
    with server.client(uid) as c:  # the agent's own key, retelling the same chat
        query = """mutation($l: [DraftInput!]) { reflectSession(chat: "sat", learnings: $l,
          messages: [{turn: 2, role: "user",
            text: "Yes. Rui always gets the window seat, he hates the draft."}]) {
          __typename ... on Reflected { firstHand alreadyKept messages { id }
            learnings { outcome } } ... on InputError { message field } } }"""
        drafts = [{**learnings("sat")[0], "kind": "SEMANTIC"}]
        out = gql(c, query, l=drafts)["reflectSession"]
    assert out == {
        "__typename": "Reflected",
        "firstHand": False,
        "alreadyKept": 1,
        "messages": [],
        "learnings": [{"outcome": "active"}],  # it cites the host's first-hand turn
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"chat": "x"}, "learnings"),
        (
            {"chat": "x", "messages": [{"turn": 0, "role": "user", "text": "hi", "chat": "y"}]},
            "messages[0].chat",
        ),
        (
            {"chat": "x", "messages": [{"turn": -1, "role": "user", "text": "hi"}]},
            "messages[0].turn",
        ),
        ({"chat": "x", "learnings": [{"kind": "semantic"}]}, "learnings[0].title"),
        ({"messages": CHAT}, "chat"),
    ],
)
def test_bad_input_names_the_field(server: ApiServer, body: dict[str, Any], field: str) -> None:
    with server.client("rs-bad") as c:
        answer = c.post("/api/sessions/reflect", json=body)
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"].startswith(field), answer.json()
        assert c.get("/api/memories").json()["memories"] == []


def test_with_a_model_the_chat_is_consolidated_now(server: ApiServer) -> None:
    s = server.app.state.services
    models = ModelSet(memory=ModelSpec("openai/scripted", engine=ScriptedEngine(), num_retries=0))
    ports = PassPorts(s.ontology, s.validation, s.sources, s.gate, models)
    before = s.consolidation
    s.consolidation = Consolidation(
        s.store, s.queries, s.clock, s.settings, ports, backoff=timedelta(0)
    )
    try:
        with host_client(server, "rs-dan") as c:
            body = {"chat": "sun", "messages": CHAT}
            out = c.post("/api/sessions/reflect", json=body).json()
        started = out["consolidation_pass"]
        assert started is not None
        taken = {str(i) for i in s.consolidation.checkpoints.contributions("rs-dan", started)}
        assert taken == {m["id"] for m in out["messages"]}  # the chat, not waiting to go idle
    finally:
        s.consolidation = before


def test_a_host_key_made_over_the_admin_api_keeps_turns_first_hand(server: ApiServer) -> None:
    root = server.app.state.accounts.add("rs-root", role=Role.ADMIN).token
    with httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {root}"}) as c:
        c.post("/api/admin/users", json={"user": "rs-eve"}).raise_for_status()
        made = c.post("/api/admin/users/rs-eve/keys", json={"label": "app", "host": True})
        assert made.status_code == 201, made.text
        plain = c.post("/api/admin/users/rs-eve/keys", json={"label": "agent"}).json()
    body = {"chat": "mon", "messages": CHAT[:1], "consolidate": False}
    for token, first_hand in ((made.json()["token"], True), (plain["token"], False)):
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=server.base, headers=headers) as c:
            out = c.post("/api/sessions/reflect", json={**body, "chat": f"mon-{first_hand}"})
            assert out.status_code == 200, out.text
            assert out.json()["first_hand"] is first_hand
    listed = server.app.state.accounts.keys("rs-eve")
    assert {k.label: k.host for k in listed} == {"first": False, "app": True, "agent": False}
