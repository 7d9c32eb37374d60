"""Consolidation history and retry on every surface (REST, GraphQL, MCP), against a real
uvicorn whose pipeline runs on a scripted model that is down, then back: the abandoned pass
says why on each surface alike, a retry queues one pass over what it held, and the surfaces
refuse what the pipeline refuses with the same typed errors."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from mcp import Client

from kgmem.errors import ModelCallError
from kgmem.pipeline import ModelSet, ModelSpec
from kgmem.pipeline.consolidation import Consolidation, PassStatus
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.signatures import ExtractClaims
from tests.api.support import ApiServer, api_server
from tests.api.test_mcp import over_http, tool
from tests.browser.world import gql
from tests.pipeline.scripted import ScriptedEngine, claim, claims_reply, quote

UID = "cs-maya"
HISTORY = """{ consolidation { passes { id state abandonReason retriedAs } } }"""
RETRY = """mutation($p: [String!]) { retryConsolidation(passes: $p) { __typename
  ... on Retried { passId retried contributions } ... on Conflict { message }
  ... on NotFound { message } ... on InputError { message field } } }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "consolidation", sweep_interval_seconds=3600) as s:
        yield s


def mcp(server: ApiServer, name: str, args: dict[str, Any]) -> dict[str, Any]:
    async def work(client: Client) -> dict[str, Any]:
        return await tool(client, name, args)

    out: dict[str, Any] = over_http(server.base, server.app.state.accounts.issue(UID).token, work)
    return out


def scripted(server: ApiServer, engine: ScriptedEngine) -> Consolidation:
    """The server's pipeline, on ``engine`` and with no backoff between attempts."""
    s = server.app.state.services
    models = ModelSet(memory=ModelSpec("openai/scripted", engine=engine, num_retries=0))
    ports = PassPorts(s.ontology, s.validation, s.sources, s.gate, models)
    pipeline = Consolidation(s.store, s.queries, s.clock, s.settings, ports, backoff=timedelta(0))
    s.consolidation = pipeline
    return pipeline


def test_history_and_retry_alike_on_every_surface(server: ApiServer) -> None:
    down = ModelCallError("openai/scripted", "the model server answered 503")
    engine = ScriptedEngine().add(ExtractClaims, *[down] * 6)
    pipeline = scripted(server, engine)
    said = "I moved to Porto in March, I work remotely for Lumen Labs."
    with server.client(UID) as c:
        message = {"chat": "c1", "turn": 0, "role": "user", "text": said}
        c.post("/api/messages", json={"messages": [message]}).raise_for_status()
    statuses = [r.status for _ in range(8) for r in pipeline.consolidate(UID, now=True)]
    assert statuses[-1] is PassStatus.ABANDONED, statuses

    with server.client(UID) as c:
        rest = c.get("/api/consolidation").json()
        graphql = gql(c, HISTORY)["consolidation"]["passes"]
    over_mcp = mcp(server, "consolidation_status", {})
    assert rest == over_mcp
    [abandoned] = rest["passes"]
    assert abandoned["state"] == "abandoned" and rest["waiting_sources"] == 0
    reason = abandoned["abandon_reason"]
    assert reason.startswith("stage extract failed 3 times, after 1 rebuild")
    assert "answered 503" in reason
    assert graphql == [
        {"id": abandoned["id"], "state": "abandoned", "abandonReason": reason, "retriedAs": None}
    ]

    engine.add(
        ExtractClaims,
        claims_reply(
            claim(
                "user",
                "schema:homeLocation",
                quote("S1", "I moved to Porto"),
                object="Porto",
                statement="Maya lives in Porto",
            )
        ),
    )
    with server.client(UID) as c:
        bad = c.post("/api/consolidation/retry", json={"passes": ["not-a-pass"]})
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "passes[0]"
        unknown = c.post("/api/consolidation/retry", json={"passes": ["a" * 32]})
        assert unknown.status_code == 404
        retried = gql(c, RETRY, p=[abandoned["id"]])["retryConsolidation"]
        assert retried["__typename"] == "Retried" and retried["retried"] == [abandoned["id"]]
        assert retried["contributions"] == 1
        busy = c.post("/api/consolidation/retry", json={})
        assert busy.status_code == 409 and "under way" in busy.json()["error"]["message"]
    [done] = pipeline.consolidate(UID, now=True)
    assert done.pass_id == retried["passId"] and done.status is PassStatus.COMMITTED, done.error
    passes = mcp(server, "consolidation_status", {"limit": 5})["passes"]
    assert [(p["id"], p["state"]) for p in passes] == [
        (retried["passId"], "committed"),
        (abandoned["id"], "abandoned"),
    ]
    assert passes[1]["retried_as"] == retried["passId"]
    # #28: the committed pass ran once (history said "attempts 0"); extract was tried 3 times
    tries = [(retried["passId"], 1), (abandoned["id"], 3)]
    assert [(p["id"], p["attempts"]) for p in passes] == tries
    with server.client(UID) as c:
        rest_passes = c.get("/api/consolidation", params={"limit": 5}).json()["passes"]
        graphql = gql(c, "{ consolidation { passes { id attempts } } }")["consolidation"]
    assert [(p["id"], p["attempts"]) for p in rest_passes] == tries
    assert [(p["id"], p["attempts"]) for p in graphql["passes"]] == tries
    assert mcp(server, "retry_consolidation", {}) == {
        "pass": None,
        "retried": [],
        "contributions": 0,
    }
    with server.client(UID) as c:
        again = gql(c, RETRY, p=[abandoned["id"]])["retryConsolidation"]
        assert again["__typename"] == "Conflict" and "retried already" in again["message"]
        found = c.get("/api/search", params={"q": "where does Maya live"}).json()["results"]
        assert found and found[0]["title"] == "Maya lives in Porto"
    with server.client("cs-bob") as c:  # another user has no passes, and retries nothing
        assert c.get("/api/consolidation").json()["passes"] == []
        assert (
            c.post("/api/consolidation/retry", json={"passes": [abandoned["id"]]}).status_code
            == 404
        )
