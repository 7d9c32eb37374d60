"""Short notes on every surface (REST, GraphQL, MCP with the official client), against a real
uvicorn: notes an agent keeps mid-conversation are listed the same everywhere (newest first,
unconsolidated), found by search and in context packets as notes (not memories), forgotten on
each surface, refused while a memory quotes one, and never another user's."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client

from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool
from tests.browser.world import gql

NOTES = (
    "User's sister Lena lands at OPO on Fri 18:40 - offered to pick her up",
    "she wants the flat viewing in Bonfim moved to Tuesday morning",
    "Bob from her team is allergic to peanuts, so not the Thai place for the offsite",
)
LIST = """query($c: Boolean) { notes(consolidated: $c) { __typename
  ... on NoteList { total notes { id shortId text consolidated chat } } } }"""
SEARCH = """query($q: String!) { search(query: $q) { __typename
  ... on SearchResults { hits { id kind consolidated why } } } }"""
PACKET = """query($t: String!) { context(task: $t, intent: EXECUTE) { __typename
  ... on ContextPacket { notes { id text why } facts { id } } } }"""
FORGET = """mutation($id: ID!) { forgetNote(id: $id) { __typename
  ... on Managed { id action decision } ... on NotFound { message }
  ... on Conflict { message } ... on InputError { message field } } }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "short-notes") as s:
        yield s


def mcp(server: ApiServer, uid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    async def work(client: Client) -> dict[str, Any]:
        return await tool(client, name, args)

    out: dict[str, Any] = over_http(server.base, server.app.state.accounts.issue(uid).token, work)
    return out


def test_notes_are_listed_found_and_packed_alike_on_every_surface(server: ApiServer) -> None:
    with server.client("sn-maya") as c:
        first = c.post("/api/remember", json={"text": NOTES[0], "chat": "trip"}).json()
        second = gql(c, "mutation($t: String!) { remember(text: $t) { __typename } }", t=NOTES[1])
        assert second["remember"]["__typename"] == "Remembered"
    third = mcp(server, "sn-maya", "memory_remember", {"text": NOTES[2]})

    with server.client("sn-maya") as c:
        rest = c.get("/api/notes").json()
        graphql = gql(c, LIST)["notes"]
    over_mcp = mcp(server, "sn-maya", "list_notes", {})
    assert rest["total"] == graphql["total"] == over_mcp["total"] == 3
    ids = [n["id"] for n in rest["notes"]]
    assert ids == [third["id"], ids[1], first["id"]]  # newest first
    assert [n["id"] for n in graphql["notes"]] == [n["id"] for n in over_mcp["notes"]] == ids
    assert [n["text"] for n in rest["notes"]] == list(reversed(NOTES))
    assert {n["consolidated"] for n in rest["notes"] + graphql["notes"]} == {False}
    assert rest["notes"][2]["chat"] == "trip"

    with server.client("sn-maya") as c:
        assert c.get("/api/notes", params={"consolidated": "true"}).json() == {
            "notes": [],
            "total": 0,
        }
        assert gql(c, LIST, c=False)["notes"]["total"] == 3
        paged = c.get("/api/notes", params={"limit": 1, "offset": 1}).json()
        assert [n["id"] for n in paged["notes"]] == [ids[1]] and paged["total"] == 3

        [hit] = c.get("/api/search", params={"q": "when does Lena land"}).json()["results"]
        assert hit["id"] == first["id"] and hit["kind"] == "note"
        assert hit["consolidated"] is False and "a short note, not yet consolidated" in hit["why"]
        [ghit] = gql(c, SEARCH, q="when does Lena land")["search"]["hits"]
        assert (ghit["id"], ghit["consolidated"]) == (first["id"], False)

        task = "pick Lena up at the airport on Friday"
        packet = c.post("/api/context", json={"task": task, "intent": "execute"}).json()
        assert [n["id"] for n in packet["notes"]] == [first["id"]]
        assert packet["notes"][0]["text"] == NOTES[0] and packet["facts"] == []
        gpacket = gql(c, PACKET, t=task)["context"]
        assert [n["id"] for n in gpacket["notes"]] == [first["id"]]
    mpacket = mcp(server, "sn-maya", "retrieve_memory", {"task": task, "intent": "execute"})
    assert [n["id"] for n in mpacket["notes"]] == [first["id"]]

    # another user sees none of them, on any surface
    with server.client("sn-bob") as c:
        assert c.get("/api/notes").json() == {"notes": [], "total": 0}
        assert c.get("/api/search", params={"q": "Lena lands"}).json()["results"] == []
        assert c.post(f"/api/notes/{first['short_id']}/forget").status_code == 404
        assert gql(c, FORGET, id=first["id"])["forgetNote"]["__typename"] == "NotFound"


def test_forgetting_a_note_on_each_surface_and_a_quoted_one_is_refused(server: ApiServer) -> None:
    uid = "sn-eve"
    with server.client(uid) as c:
        kept = [c.post("/api/remember", json={"text": t}).json() for t in NOTES]
        draft = {
            "kind": "episodic",
            "title": "Lena arrives on Friday evening",
            "occurred_at": "2026-12-11T18:40:00Z",
            "evidence": [{"source": kept[0]["id"], "quote": "Lena lands at OPO on Fri 18:40"}],
        }
        [item] = c.post("/api/memories/batch-draft", json={"drafts": [draft]}).json()["items"]
        assert item["memory"] is not None, item

        refused = c.post(f"/api/notes/{kept[0]['short_id']}/forget")
        assert refused.status_code == 409 and item["memory"] in refused.text
        assert "forget those memories first" in refused.json()["error"]["message"]
        conflict = gql(c, FORGET, id=kept[0]["id"])["forgetNote"]
        assert conflict["__typename"] == "Conflict" and item["memory"] in conflict["message"]

        done = c.post(f"/api/notes/{kept[1]['short_id']}/forget")
        assert done.status_code == 200 and done.json()["action"] == "forget"
        gone = gql(c, FORGET, id=kept[2]["id"])["forgetNote"]
        assert gone["__typename"] == "Managed" and gone["decision"].startswith("urn:kgmem:")
        assert c.get(f"/api/notes/{kept[1]['short_id']}").status_code == 404
        assert c.get("/api/search", params={"q": "peanuts Thai offsite"}).json()["results"] == []
        assert c.get("/api/search", params={"q": "Bonfim viewing"}).json()["results"] == []
        feed = c.get("/api/decisions").json()["decisions"]
        assert [d["reason"] for d in feed[:2]] == ["forgotten: a short note purged on request"] * 2
        assert NOTES[1] not in str(feed) and NOTES[2] not in str(feed)

        c.post(f"/api/memories/{item['short_id']}/forget").raise_for_status()
        assert c.post(f"/api/notes/{kept[0]['id']}/forget").status_code == 200
        assert c.get("/api/notes").json() == {"notes": [], "total": 0}
    kept_again = mcp(server, uid, "memory_remember", {"text": "call the plumber on Monday"})
    assert mcp(server, uid, "forget_note", {"id": kept_again["short_id"]})["action"] == "forget"
    assert mcp(server, uid, "list_notes", {}) == {"notes": [], "total": 0}
    eves = [q for q in server.snapshot() if f":{uid}:" in str(q.graph)]
    assert eves  # her accounts' own graphs are there, and none holds a word of the notes
    assert not [q for q in eves if any(t[:30] in str(q.object) for t in NOTES)]
    assert not [q for q in eves if "plumber" in str(q.object)]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/notes?consolidated=maybe", "consolidated"),
        ("/api/notes?limit=0", "limit"),
        ("/api/notes?offset=-1", "offset"),
        ("/api/notes?colour=red", "colour"),
    ],
)
def test_bad_list_arguments_name_the_field(server: ApiServer, path: str, field: str) -> None:
    with server.client("sn-bad") as c:
        answer = c.get(path)
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field


def test_an_external_note_or_a_memory_is_not_forgotten_as_a_note(server: ApiServer) -> None:
    with server.client("sn-ext") as c:
        message = {"chat": "c", "turn": 0, "role": "user", "text": "I run on Sundays."}
        c.post("/api/messages", json={"messages": [message]}).raise_for_status()
        draft = {
            "kind": "semantic",
            "title": "Runs on Sundays",
            "evidence": [{"source": "chat:c#0", "quote": "I run on Sundays"}],
        }
        [item] = c.post("/api/memories/batch-draft", json={"drafts": [draft]}).json()["items"]
        answer = c.post("/api/notes/forget", json={})
        assert answer.status_code in (404, 405)
        not_a_note = c.post(f"/api/notes/{item['memory']}/forget")
        assert not_a_note.status_code == 404
        assert c.get(f"/api/memories/{item['short_id']}").status_code == 200  # untouched
        vault_id = "https://w3id.org/kgmem/user/sn-ext/note/abc"
        external = c.post(f"/api/notes/{vault_id}/forget")
        assert external.status_code == 404 and "vault" in external.json()["error"]["message"]
