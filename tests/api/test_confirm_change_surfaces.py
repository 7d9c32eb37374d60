"""A user's bare confirmation and a change of the world, end to end on every surface: REST
(httpx), GraphQL over HTTP and MCP (the official client, streamable HTTP), all against one
real uvicorn on loopback.

- "Yes, that's right." answering the assistant's "So you'll be a UX researcher at Maison
  Vert?" grounds that claim with both provenances: the user's reply (``confirms`` the
  assistant message) and the assistant message itself. A claim the assistant did not state,
  cited to the same yes, is refused with a reason; a yes to an either-or question confirms
  neither alternative.
- "Since February I run with Harbour Harriers." closes "I run with Riverside Striders." as
  of when it was said, and the valid-time read (``valid_at``) answers which club held then.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.api.support import ApiServer, api_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "confirm-change-home") as running:
        yield running


# -- what each surface is asked -----------------------------------------------------------

Message = dict[str, Any]


def turns(chat: str, *said: tuple[str, str], at: tuple[str, ...] = ()) -> list[Message]:
    """``said`` as (role, text) turns of ``chat``; ``at``: their timestamps, in order."""
    out = [
        {"chat": chat, "turn": i, "role": role, "text": text} for i, (role, text) in enumerate(said)
    ]
    for message, when in zip(out, at, strict=False):
        message["timestamp"] = when
    return out


def claim_draft(
    title: str, predicate: str, chat: str, turn: int, quote: str, **target: str
) -> dict[str, Any]:
    """A semantic draft that the user (I) ``predicate`` ``target`` (object= or value=),
    citing only ``quote`` of ``chat:<chat>#<turn>``."""
    return {
        "kind": "semantic",
        "title": title,
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": predicate, **target}],
        "evidence": [{"source": f"chat:{chat}#{turn}", "quote": quote}],
    }


CONFIRMED = (
    ("user", "I'm a UX researcher at Maison Vert."),
    ("assistant", "So you'll be a UX researcher at Maison Vert?"),
    ("user", "Yes, that's right."),
)
YES = "Yes, that's right."


@dataclass(frozen=True)
class Item:
    """What the write gate did with one draft, as every surface says it."""

    outcome: str
    memory: str | None
    reasons: list[str]
    superseded: list[str]


@dataclass(frozen=True)
class Shown:
    """A memory read back: its status, valid time and evidence (source, type, quote,
    confirms), as every surface says it."""

    status: str
    valid_from: str | None
    valid_until: str | None
    evidence: list[tuple[str, str, str | None, str | None]]


class Surface(Protocol):
    name: str

    def ingest(self, messages: list[Message]) -> list[str]: ...

    def draft(self, draft: dict[str, Any]) -> Item: ...

    def read(self, memory: str) -> Shown: ...

    def valid_at(self, when: str, **filters: str) -> list[str]: ...

    def refused(self, when: str, **filters: str) -> str:
        """The field a bad valid-time read is refused as (as the surface spells it)."""
        ...


# -- REST ---------------------------------------------------------------------------------


class Rest:
    name = "rest"

    def __init__(self, client: httpx.Client) -> None:
        self.c = client

    def _ok(self, answer: httpx.Response) -> dict[str, Any]:
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def ingest(self, messages: list[Message]) -> list[str]:
        done = self._ok(self.c.post("/api/messages", json={"messages": messages}))
        return [m["id"] for m in done["messages"]]

    def draft(self, draft: dict[str, Any]) -> Item:
        done = self._ok(self.c.post("/api/memories/batch-draft", json={"drafts": [draft]}))
        [i] = done["items"]
        return Item(i["outcome"], i["memory"], i["reasons"], i["superseded"])

    def read(self, memory: str) -> Shown:
        m = self._ok(self.c.get("/api/memories/" + memory.rsplit("/", 1)[1]))
        evidence = [
            (e["source"], e["source_type"], e["quote"], e["confirms"]) for e in m["evidence"]
        ]
        return Shown(m["status"], m["valid_from"], m["valid_until"], evidence)

    def valid_at(self, when: str, **filters: str) -> list[str]:
        found = self._ok(self.c.get("/api/memories", params={"valid_at": when, **filters}))
        return [m["id"] for m in found["memories"]]

    def refused(self, when: str, **filters: str) -> str:
        answer = self.c.get("/api/memories", params={"valid_at": when, **filters})
        assert answer.status_code == 422, answer.text
        error = answer.json()["error"]
        assert error["code"] == "invalid" and error["message"]
        field: str = error["field"]
        return field


# -- GraphQL ------------------------------------------------------------------------------

INGEST = """
mutation($messages: [MessageInput!]!) {
  ingestMessages(messages: $messages) {
    __typename ... on Ingested { messages { id } } ... on InputError { message field }
  }
}"""
DRAFT = """
mutation($drafts: [DraftInput!]!) {
  draftMemories(drafts: $drafts) {
    __typename
    ... on DraftSuccess { items { outcome memoryId reasons superseded } }
    ... on InputError { message field }
  }
}"""
MEMORY = """
query($id: ID!) {
  memory(id: $id) {
    status validFrom validUntil
    evidence { sourceId sourceType quote confirms }
  }
}"""
VALID_AT = """
query($at: DateTime, $entity: String, $predicate: String) {
  memories(validAt: $at, entity: $entity, predicate: $predicate) { nodes { id } }
}"""


class GraphQL:
    name = "graphql"

    def __init__(self, client: httpx.Client) -> None:
        self.c = client

    def _post(self, query: str, **variables: Any) -> dict[str, Any]:
        answer = self.c.post("/graphql", json={"query": query, "variables": variables})
        assert answer.status_code == 200, answer.text
        body: dict[str, Any] = answer.json()
        return body

    def _data(self, query: str, **variables: Any) -> dict[str, Any]:
        body = self._post(query, **variables)
        assert "errors" not in body, body["errors"]
        data: dict[str, Any] = body["data"]
        return data

    def ingest(self, messages: list[Message]) -> list[str]:
        done = self._data(INGEST, messages=messages)["ingestMessages"]
        assert done["__typename"] == "Ingested", done
        return [m["id"] for m in done["messages"]]

    def draft(self, draft: dict[str, Any]) -> Item:
        given = {**draft, "kind": draft["kind"].upper()}  # a GraphQL enum value
        done = self._data(DRAFT, drafts=[given])["draftMemories"]
        assert done["__typename"] == "DraftSuccess", done
        [i] = done["items"]
        return Item(i["outcome"], i["memoryId"], i["reasons"], i["superseded"])

    def read(self, memory: str) -> Shown:
        m = self._data(MEMORY, id=memory)["memory"]
        evidence = [
            (e["sourceId"], e["sourceType"], e["quote"], e["confirms"]) for e in m["evidence"]
        ]
        return Shown(m["status"].lower(), _iso(m["validFrom"]), _iso(m["validUntil"]), evidence)

    def valid_at(self, when: str, **filters: str) -> list[str]:
        found = self._data(VALID_AT, at=when, **filters)["memories"]
        return [m["id"] for m in found["nodes"]]

    def refused(self, when: str, **filters: str) -> str:
        body = self._post(VALID_AT, at=when, **filters)
        assert body.get("data") is None and body["errors"], body
        [error] = body["errors"]
        assert "Unexpected error" not in error["message"], error
        # a time the DateTime scalar cannot read is refused naming the variable; one it
        # reads but kgmem does not keep, naming the argument
        field: str = error.get("extensions", {}).get("field") or error["message"]
        return field


def _iso(value: str | None) -> str | None:
    """GraphQL's DateTime as REST and MCP write it (``+00:00``, not ``Z``)."""
    return None if value is None else value.replace("Z", "+00:00")


# -- MCP ----------------------------------------------------------------------------------


class Mcp:
    name = "mcp"

    def __init__(self, base: str, token: str) -> None:
        self.url, self.token = f"{base}/mcp", token

    def _call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
        async def run() -> tuple[bool, dict[str, Any]]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.token}"}, timeout=60)
            async with http, Client(streamable_http_client(self.url, http_client=http)) as client:
                result = await client.call_tool(tool, arguments)
                assert isinstance(result.structured_content, dict), result.content
                return bool(result.is_error), result.structured_content

        return anyio.run(run)

    def _ok(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        failed, content = self._call(tool, arguments)
        assert not failed, content
        return content

    def ingest(self, messages: list[Message]) -> list[str]:
        done = self._ok("ingest_messages", {"messages": messages})
        return [m["id"] for m in done["messages"]]

    def draft(self, draft: dict[str, Any]) -> Item:
        [i] = self._ok("draft_memory", {"drafts": [draft]})["items"]
        return Item(i["outcome"], i["memory"], i["reasons"], i["superseded"])

    def read(self, memory: str) -> Shown:
        m = self._ok("get_memory", {"id": memory})
        evidence = [
            (e["source"], e["source_type"], e["quote"], e["confirms"]) for e in m["evidence"]
        ]
        return Shown(m["status"], m["valid_from"], m["valid_until"], evidence)

    def valid_at(self, when: str, **filters: str) -> list[str]:
        found = self._ok("list_memories", {"valid_at": when, **filters})
        return [m["id"] for m in found["memories"]]

    def refused(self, when: str, **filters: str) -> str:
        failed, content = self._call("list_memories", {"valid_at": when, **filters})
        assert failed and content["error"]["status"] == 422, content
        field: str = content["error"]["field"]
        return field


SURFACES = ("rest", "graphql", "mcp")


@pytest.fixture(params=SURFACES)
def surface(request: pytest.FixtureRequest, server: ApiServer) -> Iterator[Surface]:
    """One surface, as a user of its own (the test's name keeps users apart)."""
    uid = f"{request.param}-{request.node.originalname}".replace("_", "-")[:60]
    if request.param == "mcp":
        accounts = server.app.state.accounts
        known = {a.uid for a in accounts.all()}
        yield Mcp(server.base, (accounts.issue(uid) if uid in known else accounts.add(uid)).token)
        return
    with server.client(uid) as client:
        yield Rest(client) if request.param == "rest" else GraphQL(client)


# -- confirmation -------------------------------------------------------------------------


def test_a_bare_yes_grounds_the_agent_claim_with_both_provenances(surface: Surface) -> None:
    user_said, agent_said, yes = surface.ingest(turns("ux", *CONFIRMED))
    item = surface.draft(
        claim_draft("UX researcher", "schema:jobTitle", "ux", 2, YES, value="UX researcher")
    )
    assert item.outcome == "active", item
    assert item.memory is not None
    shown = surface.read(item.memory)
    assert shown.status == "active"
    by_source = {
        source: (kind, quote, confirms) for source, kind, quote, confirms in shown.evidence
    }
    assert len(shown.evidence) == 2, shown.evidence
    assert by_source[yes] == ("userMessage", YES, agent_said)  # the user's yes confirms it
    kind, quote, confirms = by_source[agent_said]  # and the agent's words are kept as said
    assert kind == "agentMessage" and confirms is None
    assert quote is not None and "UX researcher at Maison Vert" in quote
    assert user_said not in by_source  # the draft cited only the yes


def test_a_claim_the_agent_did_not_state_is_refused_for_the_same_yes(surface: Surface) -> None:
    surface.ingest(turns("ux", *CONFIRMED))
    lie = surface.draft(
        claim_draft("UX designer", "schema:jobTitle", "ux", 2, YES, value="UX designer")
    )
    assert lie.outcome == "refused" and lie.memory is None
    assert lie.reasons and all(r.strip() for r in lie.reasons), lie
    assert surface.valid_at("2030-01-01T00:00:00Z") == []  # nothing was kept


def test_a_yes_to_an_either_or_question_confirms_neither(surface: Surface) -> None:
    surface.ingest(
        turns("where", ("assistant", "So you'll be based in Lyon or Geneva?"), ("user", "Yes."))
    )
    surface.ingest(turns("lyon", ("assistant", "So you'll be based in Lyon?"), ("user", "Yes.")))
    for city in ("Lyon", "Geneva"):
        item = surface.draft(
            claim_draft(city, "schema:homeLocation", "where", 1, "Yes.", object=city)
        )
        assert item.outcome == "refused" and item.memory is None, item
        assert item.reasons
    # the same yes to a question that names one place does confirm it
    control = surface.draft(
        claim_draft("Lyon", "schema:homeLocation", "lyon", 1, "Yes.", object="Lyon")
    )
    assert control.outcome == "active", control


# -- change and the valid-time read -------------------------------------------------------

RIVERSIDE = "I run with Riverside Striders."
HARBOUR = "Since February I run with Harbour Harriers."
FIRST_SAID, THEN_SAID = "2026-01-10T09:00:00+00:00", "2026-03-01T09:00:00+00:00"
CLUB = {"entity": "I", "predicate": "schema:memberOf"}


def test_a_change_closes_the_old_value_and_valid_at_reads_what_held(surface: Surface) -> None:
    surface.ingest(turns("run", ("user", RIVERSIDE), at=(FIRST_SAID,)))
    old = surface.draft(
        claim_draft(
            "Riverside Striders",
            "schema:memberOf",
            "run",
            0,
            RIVERSIDE,
            object="Riverside Striders",
        )
    )
    assert old.outcome == "active" and old.memory is not None, old
    assert surface.read(old.memory).valid_until is None  # nothing said it ended yet
    surface.ingest(turns("run", ("user", RIVERSIDE), ("user", HARBOUR), at=(FIRST_SAID, THEN_SAID)))
    new = surface.draft(
        claim_draft(
            "Harbour Harriers", "schema:memberOf", "run", 1, HARBOUR, object="Harbour Harriers"
        )
    )
    assert new.outcome == "active" and new.memory is not None, new
    assert new.superseded == [old.memory]

    closed, opened = surface.read(old.memory), surface.read(new.memory)
    assert closed.status == "superseded" and closed.valid_until == THEN_SAID
    assert opened.status == "active" and opened.valid_from == THEN_SAID

    assert surface.valid_at("2026-02-01T00:00:00Z", **CLUB) == [old.memory]
    assert surface.valid_at("2026-04-01T00:00:00Z", **CLUB) == [new.memory]
    assert surface.valid_at(THEN_SAID, **CLUB) == [new.memory]  # the old one ends as it opens
    assert surface.valid_at("2026-02-01T00:00:00Z") == [old.memory]  # no filter: the same
    assert surface.valid_at("2026-04-01T00:00:00Z", entity="Riverside Striders") == []
    assert surface.valid_at("2026-04-01T00:00:00Z", predicate="schema:worksFor") == []


@pytest.mark.parametrize("when", ["last tuesday", "2026-13-01T00:00:00Z", "0999-01-01T00:00:00"])
def test_a_time_that_is_no_time_is_refused_naming_the_field(surface: Surface, when: str) -> None:
    field = surface.refused(when)
    # GraphQL's DateTime scalar refuses what it cannot read naming the variable ($at)
    assert field in ("valid_at", "validAt") or "'$at'" in field, field


@pytest.mark.parametrize("predicate", ["memberOf", "http://a b", "http://x/%zz", "\x1b"])
def test_a_predicate_that_is_no_iri_names_nothing(surface: Surface, predicate: str) -> None:
    """Any text the schema admits is read (never a 5xx): one that is no IRI, as a name no
    entity has, matches no memory."""
    surface.ingest(turns("run", ("user", RIVERSIDE)))
    item = surface.draft(
        claim_draft("Riverside", "schema:memberOf", "run", 0, RIVERSIDE, object="Riverside")
    )
    assert surface.valid_at("2030-01-01", predicate="schema:memberOf") == [item.memory]
    assert surface.valid_at("2030-01-01", predicate=predicate) == []
