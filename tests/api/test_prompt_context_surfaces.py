"""The pushed context (prompt_context) on every surface, against a real uvicorn: REST
``GET /api/prompt-context``, GraphQL ``promptContext``, the MCP tool, the MCP prompt
``memory_context`` and the resource ``kgmem://prompt-context`` (official ``mcp`` client).
Each gives the same Markdown for the same user; caps and the budget say what they cut; a bad
argument is an error naming it; a user sees only their own."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool
from tests.browser.world import DRAFT, INGEST, gql

PROMPT_CONTEXT = """query($a: String, $t: String, $b: Int) {
  promptContext(accountName: $a, timezone: $t, budgetTokens: $b) {
    __typename
    ... on PromptContext { markdown tokens budgetTokens truncated packet }
    ... on InputError { message field } } }"""
REMEMBER = """mutation($t: String!) { remember(text: $t) { __typename } }"""

SAID = "Hi, I'm Maya Lindqvist. I work at Lumen Labs and I'm allergic to peanuts."


def seed(client: httpx.Client, notes: int) -> None:
    """Maya's chat, a fact about her, a procedure, and ``notes`` short notes."""
    turns = [
        {"chat": "pc", "turn": 0, "role": "user", "text": SAID},
        {"chat": "pc", "turn": 1, "role": "user", "text": "To deploy: run the tests, tag, push."},
    ]
    assert gql(client, INGEST, m=turns)["ingestMessages"]["__typename"] == "Ingested"
    drafts = [
        {
            "kind": "SEMANTIC",
            "title": "Maya works at Lumen Labs",
            "confidence": 0.9,
            "entities": [{"name": "Lumen Labs", "types": ["schema:Organization"]}],
            "claims": [{"subject": "I", "predicate": "schema:worksFor", "object": "Lumen Labs"}],
            "evidence": [{"source": "chat:pc#0", "quote": "I work at Lumen Labs"}],
        },
        {
            "kind": "PROCEDURAL",
            "title": "Deploying",
            "confidence": 0.9,
            "steps": ["run the tests", "tag", "push"],
            "triggers": ["deploy"],
            "evidence": [{"source": "chat:pc#1", "quote": "To deploy: run the tests, tag, push."}],
        },
    ]
    out = gql(client, DRAFT, d=drafts)["draftMemories"]
    assert [i["outcome"] for i in out["items"]] == ["active", "active"], out
    for n in range(notes):
        text = f"Maya's standup moved to 9:{n:02d} on Tuesdays"
        assert gql(client, REMEMBER, t=text)["remember"]["__typename"] == "Remembered"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "prompt-context") as s:
        with s.client("maya") as c:
            seed(c, notes=3)
        with s.client("busy") as c:
            seed(c, notes=40)
        assert s.app.state.services.settle()
        yield s


def rest(server: ApiServer, uid: str, **params: Any) -> httpx.Response:
    with server.client(uid) as c:
        return c.get("/api/prompt-context", params=params)


def graphql(server: ApiServer, uid: str, **variables: Any) -> dict[str, Any]:
    with server.client(uid) as c:
        found: dict[str, Any] = gql(c, PROMPT_CONTEXT, **variables)["promptContext"]
    return found


def token(server: ApiServer, uid: str) -> str:
    return str(server.app.state.accounts.issue(uid).token)


def test_every_surface_gives_the_same_context(server: ApiServer) -> None:
    answer = rest(server, "maya", account_name="Maya L.")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    markdown = body["markdown"]
    assert "Maya L." in markdown and "Lumen Labs" in markdown  # who, and what is known
    assert "standup moved to 9:02" in markdown  # a short note
    assert "Deploying" in markdown  # the playbook index
    assert body["truncated"]["total"] == 0 and body["tokens"] <= body["budget_tokens"]
    assert body["budget_tokens"] == server.app.state.services.settings.context_budget_tokens

    over_graphql = graphql(server, "maya", a="Maya L.")
    assert over_graphql["__typename"] == "PromptContext"
    assert over_graphql["markdown"] == markdown and over_graphql["truncated"] == 0

    async def work(client: Client) -> tuple[Any, ...]:
        called = await tool(client, "prompt_context", {"account_name": "Maya L."})
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("memory_context", {"account_name": "Maya L."})
        resources = await client.list_resources()
        resource = await client.read_resource("kgmem://prompt-context")
        return called, prompts, prompt, resources, resource

    called, prompts, prompt, resources, resource = over_http(
        server.base, token(server, "maya"), work
    )
    assert called["markdown"] == markdown
    assert [p.name for p in prompts.prompts] == ["memory_context"]
    [message] = prompt.messages
    assert message.role == "user" and message.content.text == markdown
    assert "kgmem://prompt-context" in [str(r.uri) for r in resources.resources]
    [content] = resource.contents
    # the resource takes no arguments: the account name is the user's own entity's
    assert "Lumen Labs" in content.text and "standup moved to 9:02" in content.text
    assert content.text == rest(server, "maya").json()["markdown"]


def test_caps_and_the_budget_say_what_they_left_out(server: ApiServer) -> None:
    roomy = rest(server, "busy").json()
    assert roomy["truncated"]["short_memory"] > 0  # 40 notes: the short-memory cap cuts
    tight = rest(server, "busy", budget_tokens=200).json()
    assert tight["tokens"] <= 200 and tight["budget_tokens"] == 200
    assert tight["truncated"]["total"] > roomy["truncated"]["total"]
    assert "more" in tight["markdown"].lower()  # an explicit marker line, not a silent cut
    assert graphql(server, "busy", b=200)["truncated"] == tight["truncated"]["total"]


def test_a_known_timezone_shows_local_time_and_an_unknown_one_none(server: ApiServer) -> None:
    known = rest(server, "maya", timezone="Europe/Stockholm").json()["markdown"]
    assert "- Timezone: Europe/Stockholm (local time " in known
    unknown = rest(server, "maya", timezone="Mars/Olympus_Mons").json()["markdown"]
    assert "- Timezone: Mars/Olympus_Mons\n" in unknown


@pytest.mark.parametrize(
    ("field", "value"),
    [("budget_tokens", 10), ("budget_tokens", "lots"), ("account_name", ""), ("timezone", " ")],
)
def test_a_bad_argument_is_an_error_naming_it_on_every_surface(
    server: ApiServer, field: str, value: Any
) -> None:
    answer = rest(server, "maya", **{field: value})
    assert answer.status_code == 422, answer.text
    assert answer.json()["error"]["field"] == field
    camel = {"timezone": "t", "budget_tokens": "b", "account_name": "a"}[field]
    if value == "lots":  # GraphQL's own types refuse it, naming the variable
        with server.client("maya") as c:
            body = c.post("/graphql", json={"query": PROMPT_CONTEXT, "variables": {"b": value}})
        assert "$b" in body.json()["errors"][0]["message"]
    else:
        refused = graphql(server, "maya", **{camel: value})
        assert refused["__typename"] == "InputError" and refused["field"] == field

    async def work(client: Client) -> tuple[Any, str]:
        called = await client.call_tool("prompt_context", {field: value})
        try:
            await client.get_prompt("memory_context", {field: str(value)})
        except MCPError as exc:
            return called, str(exc)
        return called, ""

    called, prompt_error = over_http(server.base, token(server, "maya"), work)
    assert called.is_error and called.structured_content["error"]["field"] == field
    assert field in prompt_error


def test_a_user_sees_only_their_own_context(server: ApiServer) -> None:
    with server.client("nobody") as c:
        markdown = c.get("/api/prompt-context").json()["markdown"]
    assert (
        "Lumen Labs" not in markdown and "standup" not in markdown and "Deploying" not in markdown
    )
