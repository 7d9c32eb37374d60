"""One tool, one answer, on every surface (issue #27), against a real uvicorn.

Each reading agent tool is called with the same arguments over REST (the route
:data:`~kgmem.api.rest.table.ENDPOINTS` gives it), over MCP (the official client) and
through its GraphQL field. REST and MCP both return the tool's JSON, so they must be equal
exactly. GraphQL returns typed fields, so its answer is mapped back (camelCase to
snake_case, enum names to values, ``spanStart``/``spanEnd`` to ``span``) and compared, every
field it returns, with the same JSON; what one side has and the other lacks is listed here
by name, so a field the tool's JSON gains fails the test until GraphQL shows it too (or it
is listed). The writing tools get a lighter check: the same bad argument is refused naming
the same field on every surface, and changes nothing.

A guard keeps the coverage honest: a tool added to ``TOOLS`` fails here until it is compared
(or listed as write-only, with a reason, and given a refusal case), and every tool must be
reachable over REST and named in GraphQL (or say why not).

The user is Priya, a sound designer, seeded as her agent would: a chat of a few turns,
drafts quoting them (where she works, a dinner with her brother, how she exports a mix for
a client), a short note, a pin, a cite, an outcome, review mode, and one consolidation pass
her model server let down. The server's clock stands still while surfaces are compared, so
scores that decay with time and ``generated_at`` are the same instant on each.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from mcp import Client
from mcp_types import CallToolResult

from kgmem.api import create_app
from kgmem.api.graphql.endpoint import build_schema
from kgmem.api.rest.table import ENDPOINTS, Endpoint
from kgmem.api.tools.registry import TOOLS
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.errors import ModelCallError
from kgmem.memory import MemoryKind, MemoryStatus, WriteMode
from kgmem.pipeline import ModelSet, ModelSpec, PassStatus
from kgmem.pipeline.consolidation import Consolidation
from kgmem.pipeline.ports import PassPorts
from kgmem.pipeline.signatures import ExtractClaims
from tests.api.support import ApiServer
from tests.api.test_mcp import over_http
from tests.browser.world import gql
from tests.conftest import free_port, serve_app
from tests.pipeline.scripted import ScriptedEngine

UID = "tp-priya"
CHAT = "porto-week"
START = datetime(2026, 11, 9, 9, 30, tzinfo=UTC)
TURNS = (
    ("user", "Hi, I'm Priya. I work at Northwind Studio as a sound designer."),
    ("assistant", "Nice to meet you, Priya! What are you mixing this week?"),
    (
        "user",
        "My brother Arjun was in Porto last weekend; we had dinner at Tasca do Rio on "
        "Saturday and he loved the grilled octopus.",
    ),
    (
        "user",
        "When I export a mix for a client, I bounce it at 48 kHz, normalise it to -14 LUFS "
        "and upload the WAV to the shared drive.",
    ),
    ("user", "Also, I'm vegetarian, so the octopus was all his."),
)
NOTE = "Arjun lands at OPO on Thursday 21:15; Priya offered to pick him up"
WORK = "Priya works at Northwind Studio"
DINNER = "Dinner with Arjun at Tasca do Rio"
EXPORT = "Exporting a mix for a client"
LANDING = "Arjun lands at OPO on Thursday night"
VEGETARIAN = "Priya is vegetarian"


# -- which tool is covered how ---------------------------------------------------------

#: tool -> the test that compares its answer on REST, MCP and GraphQL (see @reads)
READS: dict[str, str] = {}

#: Tools that only write: a call changes the store, so instead of a compared answer they
#: get the lighter parity of REFUSALS (each needs a case there).
WRITE_ONLY = {
    "memory_remember": "writes a short note",
    "memory_cite": "raises a memory's use count",
    "draft_memory": "writes memories through the gate",
    "record_outcome": "changes confidence and strength",
    "manage_memory": "a lifecycle action",
    "ingest_messages": "writes sources",
    "ingest_task": "writes sources",
    "retry_consolidation": "queues a pass",
    "forget_note": "purges a note",
    "review_decide": "approves or rejects a pending memory",
    "reflect_session": "writes sources and memories (tests/api/test_reflect_session.py)",
}

#: Tools with no REST route, and why. None: a tool unreachable over REST is a bug.
NO_REST: dict[str, str] = {}

#: Each tool's GraphQL field (``Query.x`` or ``Mutation.x``)...
GRAPHQL_FIELDS = {
    "memory_remember": "Mutation.remember",
    "memory_search": "Query.search",
    "memory_cite": "Mutation.cite",
    "draft_memory": "Mutation.draftMemories",
    "retrieve_memory": "Query.context",
    "record_outcome": "Mutation.recordOutcome",
    "manage_memory": "Mutation.manageMemory",
    "ingest_messages": "Mutation.ingestMessages",
    "ingest_task": "Mutation.ingestTask",
    "list_memories": "Query.memories",
    "get_memory": "Query.memory",
    "consolidation_status": "Query.consolidation",
    "retry_consolidation": "Mutation.retryConsolidation",
    "list_notes": "Query.notes",
    "forget_note": "Mutation.forgetNote",
    "read_page": "Query.page",
    "review_inbox": "Query.reviewInbox",
    "review_decide": "Mutation.approveMemory",
    "prompt_context": "Query.promptContext",
    "review_mode": "Query.reviewMode",
    "decisions_feed": "Query.decisions",
    "reflect_session": "Mutation.reflectSession",
    "get_note": "Query.note",
}
#: ...or why it has none.
NO_GRAPHQL_FIELD: dict[str, str] = {}


def reads(tool: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Mark the test that compares ``tool``'s answer on every surface."""

    def mark(test: Callable[..., None]) -> Callable[..., None]:
        READS[tool] = test.__name__
        return test

    return mark


# -- Priya's week, written as her agent writes it --------------------------------------


@dataclass
class World:
    server: ApiServer
    http: httpx.Client
    token: str
    memories: dict[str, str]  # title -> memory IRI
    note: dict[str, Any]  # what memory_remember answered
    abandoned: str  # the pass the model server let down
    before_pin: datetime  # drafted, not yet pinned, cited or rated
    page_path: str  # the Northwind Studio page, as a search hit gives it


def _drafts(note_id: str) -> list[dict[str, Any]]:
    return [
        {
            "kind": "semantic",
            "title": WORK,
            "confidence": 0.9,
            "tags": ["work"],
            "entities": [{"name": "Northwind Studio", "types": ["schema:Organization"]}],
            "claims": [
                {"subject": "I", "predicate": "schema:worksFor", "object": "Northwind Studio"}
            ],
            "evidence": [{"source": f"chat:{CHAT}#0", "quote": "I work at Northwind Studio"}],
        },
        {
            "kind": "episodic",
            "title": DINNER,
            "confidence": 0.9,
            "occurred_at": "2026-11-07T20:00:00Z",
            "evidence": [
                {"source": f"chat:{CHAT}#2", "quote": "we had dinner at Tasca do Rio on Saturday"}
            ],
        },
        {
            "kind": "procedural",
            "title": EXPORT,
            "confidence": 0.85,
            "steps": [
                "bounce it at 48 kHz",
                "normalise it to -14 LUFS",
                "upload the WAV to the shared drive",
            ],
            "triggers": ["export a mix for a client"],
            "evidence": [
                {
                    "source": f"chat:{CHAT}#3",
                    "quote": "I bounce it at 48 kHz, normalise it to -14 LUFS and upload "
                    "the WAV to the shared drive",
                }
            ],
        },
        {  # quotes the short note: the agent's own words cannot activate it alone
            "kind": "episodic",
            "title": LANDING,
            "confidence": 0.8,
            "occurred_at": "2026-11-12T21:15:00Z",
            "evidence": [{"source": note_id, "quote": "Arjun lands at OPO on Thursday 21:15"}],
        },
        {  # an invention: refused, and a decision in the feed
            "kind": "semantic",
            "title": "Priya was born in Delhi",
            "confidence": 0.9,
            "evidence": [{"source": f"chat:{CHAT}#0", "quote": "I was born in Delhi"}],
        },
    ]


async def _call(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _abandon_a_pass(server: ApiServer) -> str:
    """Consolidation of the chat on a model server that answers 503 until the pass is given
    up (run as the scheduler runs it, with no backoff)."""
    s = server.app.state.services
    down = ModelCallError("openai/scripted", "the model server answered 503")
    engine = ScriptedEngine().add(ExtractClaims, *[down] * 6)
    models = ModelSet(memory=ModelSpec("openai/scripted", engine=engine, num_retries=0))
    ports = PassPorts(s.ontology, s.validation, s.sources, s.gate, models)
    pipeline = Consolidation(s.store, s.queries, s.clock, s.settings, ports, backoff=timedelta(0))
    s.consolidation = pipeline
    reports = [r for _ in range(8) for r in pipeline.consolidate(UID, now=True)]
    assert reports[-1].status is PassStatus.ABANDONED, reports
    return str(reports[-1].pass_id)


def _seed(server: ApiServer, clock: FixedClock, token: str) -> World:
    def tick() -> None:
        clock.advance(timedelta(minutes=3))

    messages = [
        {
            "chat": CHAT,
            "turn": i,
            "role": role,
            "text": text,
            "timestamp": (START + timedelta(minutes=i)).isoformat(),
        }
        for i, (role, text) in enumerate(TURNS)
    ]

    async def chat(client: Client) -> None:
        await _call(client, "ingest_messages", {"messages": messages})

    over_http(server.base, token, chat)
    tick()
    abandoned = _abandon_a_pass(server)
    tick()

    async def agent(client: Client) -> tuple[dict[str, str], dict[str, Any], datetime]:
        note = await _call(client, "memory_remember", {"text": NOTE, "chat": CHAT})
        tick()
        drafts = _drafts(note["id"])
        out = await _call(client, "draft_memory", {"drafts": drafts})
        outcomes = [i["outcome"] for i in out["items"]]
        assert outcomes == ["active", "active", "active", "pending", "refused"], out
        memories = {d["title"]: i["memory"] for d, i in zip(drafts, out["items"], strict=True)}
        tick()
        before_pin = clock.now()
        tick()
        await _call(client, "manage_memory", {"id": memories[WORK], "action": "pin"})
        tick()
        await _call(client, "memory_cite", {"id": memories[WORK]})
        tick()
        outcome = {"items": [memories[EXPORT]], "verdict": "helpful", "task": "the ad mix"}
        await _call(client, "record_outcome", outcome)
        tick()
        await _call(client, "review_mode", {"mode": "review"})
        tick()
        held = {
            "kind": "semantic",
            "title": VEGETARIAN,
            "confidence": 0.9,
            "evidence": [{"source": f"chat:{CHAT}#4", "quote": "I'm vegetarian"}],
        }
        [item] = (await _call(client, "draft_memory", {"drafts": [held]}))["items"]
        assert item["outcome"] == "pending", item
        memories[VEGETARIAN] = item["memory"]
        return memories, note, before_pin

    memories, note, before_pin = over_http(server.base, token, agent)
    tick()
    assert server.app.state.services.settle()
    http = httpx.Client(
        base_url=server.base, headers={"Authorization": f"Bearer {token}"}, timeout=60
    )
    hits = http.get("/api/search", params={"q": "Northwind Studio"}).json()["results"]
    [page] = [h for h in hits if h["kind"] == "page" and h["title"] == "Northwind Studio"]
    return World(server, http, token, memories, note, abandoned, before_pin, page["path"])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = tmp_path_factory.mktemp("tool-parity")
    settings = load_settings(
        env={"KGMEM_HOME": str(home)}, port=free_port(), sweep_interval_seconds=3600
    )
    clock = FixedClock(START + timedelta(hours=1))
    app = create_app(settings, clock=clock)
    with serve_app(app, settings) as base:
        server = ApiServer(app, base)
        seeded = _seed(server, clock, app.state.accounts.add(UID).token)
        try:
            yield seeded
        finally:
            seeded.http.close()


# -- calling a tool on each surface ----------------------------------------------------


def _fit(e: Endpoint, args: dict[str, Any], lenient: bool) -> tuple[str, Any, Any] | None:
    """The request route ``e`` makes of ``args`` (path, query, body), or None when it
    cannot take them. ``lenient``: arguments no parameter takes go in the query string (so
    that the route refuses them, naming them)."""
    left = dict(args)
    for name, value in e.fixed.items():
        if left.pop(name, None) != value:
            return None
    path = e.path
    for name in e.path_params:
        if name not in left:
            return None
        path = path.replace(f"{{{name}}}", quote(str(left.pop(name)), safe=""))
    params: dict[str, Any] = {}
    for p in e.query:
        if p.arg in left:
            params[p.name] = left.pop(p.arg)
        elif p.required:
            return None
    if e.body:
        return path, params, left
    if left and not lenient:
        return None
    return path, params | left, None


def rest_call(http: httpx.Client, tool: str, args: dict[str, Any]) -> httpx.Response:
    """``tool`` called with ``args`` on the REST route the table gives it (GET first)."""
    routes = sorted((e for e in ENDPOINTS if e.tool == tool), key=lambda e: e.method != "GET")
    for lenient in (False, True):
        for e in routes:
            fitted = _fit(e, args, lenient)
            if fitted is not None:
                path, params, body = fitted
                return http.request(e.method, path, params=params, json=body)
    raise AssertionError(f"no REST route of {tool} takes {sorted(args)}")


def mcp_call(world: World, tool: str, args: dict[str, Any]) -> CallToolResult:
    async def work(client: Client) -> CallToolResult:
        return await client.call_tool(tool, args)

    result: CallToolResult = over_http(world.server.base, world.token, work)
    return result


def same_answer(world: World, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The tool's JSON answer, once REST and MCP are seen to give it alike."""
    assert tool in READS, f"mark the test of {tool} with @reads({tool!r})"
    answer = rest_call(world.http, tool, args)
    assert answer.status_code == 200, answer.text
    result = mcp_call(world, tool, args)
    assert not result.is_error, result.content
    over_rest: dict[str, Any] = answer.json()
    assert result.structured_content == over_rest, f"{tool}{args}: REST and MCP differ"
    return over_rest


def graphql(world: World, query: str, **variables: Any) -> dict[str, Any]:
    return gql(world.http, query, **variables)


# -- GraphQL's answer as the tool's JSON -----------------------------------------------


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def snaked(value: Any) -> Any:
    """GraphQL's answer with snake_case keys (values untouched: a JSON scalar stays JSON)."""
    if isinstance(value, dict):
        return {snake(k): snaked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [snaked(v) for v in value]
    return value


def leaves(value: Any) -> int:
    """How many scalar values an answer holds (is what was compared more than ids?)."""
    if isinstance(value, dict):
        return sum(leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(leaves(v) for v in value)
    return 1


DECISION = "id shortId action target reason actor at revertedBy draft { title kind hash }"
SOURCE = (
    "id type text authority timestamp chat turn role speaker toolName notePath taskId "
    "agentReported link"
)
SUMMARY = "id shortId kind status title recordedAt confidence pinned validFrom validUntil"
MEMORY = f"""{SUMMARY} excerpt body tags strength domain occurredAt expiresAt retiredAt
  lastUsedAt ttl useCount rating sourceRefs about supersedes contradicts supports derivedFrom
  needsTerms steps triggers claims {{ id subject predicate object value negated }}
  evidence {{ id sourceId sourceType support authority quote spanStart spanEnd agentReported
    confirms source {{ {SOURCE} }} }}
  history {{ {DECISION} }}"""

#: What a memory summary (list_memories, review_inbox) says that GraphQL's Memory does not
#: (it shows a quarantined memory by its status).
SUMMARY_ONLY = {"quarantined"}
#: What get_note says of a note that GraphQL's Source does not, and the other way round.
NOTE_ONLY = {"short_id", "tool_succeeded", "recall_tool"}
SOURCE_ONLY = {"link"}


def decision_json(d: dict[str, Any]) -> dict[str, Any]:
    """A GraphQL Decision as decisions_feed (and get_memory) gives it."""
    out: dict[str, Any] = snaked(d)
    if out["draft"] is not None:
        out["draft"]["kind"] = MemoryKind[out["draft"]["kind"]].value
    return out


def summary_json(m: dict[str, Any]) -> dict[str, Any]:
    """A GraphQL Memory's summary fields as list_memories gives them."""
    out: dict[str, Any] = snaked(m)
    out["kind"] = MemoryKind[out["kind"]].value
    out["status"] = MemoryStatus[out["status"]].value
    return out


def memory_json(m: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A GraphQL Memory as get_memory gives it, and its evidence's sources."""
    out = summary_json({k: v for k, v in m.items() if k != "history"})
    out["claims"] = [{"iri": c.pop("id"), **c} for c in out["claims"]]
    sources, evidence = [], []
    for e in out["evidence"]:
        sources.append(e.pop("source"))
        start, end = e.pop("span_start"), e.pop("span_end")
        span = None if start is None else [start, end]
        evidence.append({"iri": e.pop("id"), "source": e.pop("source_id"), "span": span, **e})
    out["evidence"] = evidence
    out["decisions"] = [decision_json(d) for d in m["history"]]
    return out, sources


def without(item: dict[str, Any], keys: set[str]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in keys}


# -- the guard -------------------------------------------------------------------------


def test_every_tool_is_covered_reachable_over_rest_and_named_in_graphql() -> None:
    tools = set(TOOLS)
    assert not set(READS) & set(WRITE_ONLY), "a tool is compared or write-only, not both"
    uncovered = tools - set(READS) - set(WRITE_ONLY)
    assert not uncovered, f"give these a parity test (@reads) or a WRITE_ONLY reason: {uncovered}"
    assert not (set(READS) | set(WRITE_ONLY)) - tools, "a covered tool is gone from TOOLS"
    refused = {r.tool for r in REFUSALS}
    assert set(WRITE_ONLY) <= refused, f"no refusal case for {set(WRITE_ONLY) - refused}"

    routed = {e.tool for e in ENDPOINTS}
    assert routed <= tools, f"a route calls no tool: {routed - tools}"
    assert tools - routed == set(NO_REST), f"no REST route: {tools - routed - set(NO_REST)}"

    assert set(GRAPHQL_FIELDS) | set(NO_GRAPHQL_FIELD) == tools
    assert not set(GRAPHQL_FIELDS) & set(NO_GRAPHQL_FIELD)
    schema = build_schema()
    for tool, where in GRAPHQL_FIELDS.items():
        kind, name = where.split(".")
        parent = schema.get_type_by_name(kind)
        names = {f.graphql_name or camel(f.python_name) for f in getattr(parent, "fields", [])}
        assert name in names, f"{tool}: no GraphQL field {where}"


def test_mcp_lists_exactly_the_tools(world: World) -> None:
    async def work(client: Client) -> list[str]:
        return [t.name for t in (await client.list_tools()).tools]

    assert sorted(over_http(world.server.base, world.token, work)) == sorted(TOOLS)


# -- reads: one answer on REST, MCP and GraphQL ----------------------------------------

SEARCH = """query($q: String!, $k: Int, $f: SearchFilters) {
  search(query: $q, k: $k, filters: $f) { __typename ... on SearchResults { query
    hits { id shortId kind title excerpt score why path memoryKind status consolidated } } } }"""


@reads("memory_search")
@pytest.mark.parametrize(
    ("args", "kinds"),
    [
        ({"query": "where does Priya work, Northwind Studio", "k": 6}, {"memory", "page"}),
        (
            {"query": "Arjun in Porto", "kinds": ["episodic", "note"], "statuses": ["active"]},
            {"memory", "note"},
        ),
    ],
)
def test_memory_search(world: World, args: dict[str, Any], kinds: set[str]) -> None:
    found = same_answer(world, "memory_search", args)
    hits = found["results"]
    assert kinds <= {h["kind"] for h in hits}, hits
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0

    filters = {k: args[k] for k in ("kinds", "statuses") if k in args} or None
    data = graphql(world, SEARCH, q=args["query"], k=args.get("k"), f=filters)["search"]
    assert data["__typename"] == "SearchResults"
    assert data["query"] == found["query"]
    assert snaked(data["hits"]) == hits  # every field of every hit, in order
    assert set(snaked(data["hits"][0])) == set(hits[0])


MEMORIES = f"""query($kind: MemoryKind, $status: MemoryStatus, $first: Int!, $after: String,
  $knownAt: DateTime) {{ memories(kind: $kind, status: $status, first: $first, after: $after,
  knownAt: $knownAt) {{ nodes {{ {SUMMARY} }} pageInfo {{ hasNextPage endCursor }} }} }}"""


@reads("list_memories")
@pytest.mark.parametrize("case", ["newest first", "a page", "pending", "as known then"])
def test_list_memories(world: World, case: str) -> None:
    cases: dict[str, dict[str, Any]] = {
        "newest first": {"limit": 10},
        "a page": {"limit": 2, "offset": 1},
        "pending": {"status": "pending", "limit": 10},
        "as known then": {"known_at": world.before_pin.isoformat(), "limit": 10},
    }
    args = cases[case]
    found = same_answer(world, "list_memories", args)["memories"]
    titles = [m["title"] for m in found]
    if case == "newest first":
        assert titles[0] == VEGETARIAN  # every status: the pending ones too
        assert set(titles) == {WORK, DINNER, EXPORT, LANDING, VEGETARIAN}
        assert [m["pinned"] for m in found if m["title"] == WORK] == [True]
    recorded = [m["recorded_at"] for m in found]
    assert recorded == sorted(recorded, reverse=True)
    if case == "as known then":  # before the pin, and before the outcome raised it
        assert {m["title"]: m["pinned"] for m in found}[WORK] is False
        assert {m["title"]: m["confidence"] for m in found}[EXPORT] == 0.85
        assert VEGETARIAN not in titles
    assert found and len(found) <= args["limit"]

    status = args.get("status")
    data = graphql(
        world,
        MEMORIES,
        first=args["limit"],
        after=str(args["offset"]) if "offset" in args else None,
        status=None if status is None else MemoryStatus(status).name,
        knownAt=args.get("known_at"),
    )["memories"]
    assert [summary_json(n) for n in data["nodes"]] == [without(m, SUMMARY_ONLY) for m in found]
    assert leaves(data["nodes"]) >= 10 * len(found)


@reads("get_memory")
@pytest.mark.parametrize(
    ("title", "short"), [(WORK, False), (EXPORT, True), (DINNER, False), (LANDING, True)]
)
def test_get_memory(world: World, title: str, short: bool) -> None:
    iri = world.memories[title]
    key = iri.rsplit("/", 1)[1] if short else iri  # a short id reads the same memory
    found = same_answer(world, "get_memory", {"id": key})
    assert found["id"] == iri and found["title"] == title and found["decisions"]
    if title == WORK:
        assert found["pinned"] and found["use_count"] == 1 and found["claims"] and found["about"]
    if title == EXPORT:
        assert found["steps"][0] == "bounce it at 48 kHz" and found["triggers"]
    if title == DINNER:
        assert found["occurred_at"] == "2026-11-07T20:00:00+00:00"

    query = f"query($id: ID!) {{ memory(id: $id) {{ {MEMORY} }} }}"
    memory, _ = memory_json(graphql(world, query, id=key)["memory"])
    assert set(memory) == set(found), "get_memory and GraphQL's Memory have other fields"
    assert memory == found


NOTES = """query($c: Boolean, $l: Int, $o: Int) { notes(consolidated: $c, limit: $l,
  offset: $o) { __typename ... on NoteList { total
    notes { id shortId text timestamp chat consolidated } } } }"""


@reads("get_note")
def test_get_note(world: World) -> None:
    note = world.note
    found = same_answer(world, "get_note", {"id": note["short_id"]})
    assert found["id"] == note["id"] and found["text"] == NOTE and found["chat"] == CHAT
    assert found == same_answer(world, "get_note", {"id": note["id"]})  # its IRI alike

    query = f"query($id: ID!) {{ memory(id: $id) {{ {MEMORY} }} }}"
    memory = graphql(world, query, id=world.memories[LANDING])["memory"]
    [source] = memory_json(memory)[1]
    source = snaked(source)
    # Query.note (by short id or IRI) shows it as the memory quoting it shows its source
    by_note = f"query($id: ID!) {{ note(id: $id) {{ {SOURCE} }} }}"
    assert snaked(graphql(world, by_note, id=note["short_id"])["note"]) == source
    assert snaked(graphql(world, by_note, id=note["id"])["note"]) == source
    assert graphql(world, by_note, id=world.memories[LANDING])["note"] is None  # no note
    assert set(found) - set(source) == NOTE_ONLY and set(source) - set(found) == SOURCE_ONLY
    assert without(source, SOURCE_ONLY) == without(found, NOTE_ONLY)
    assert source["link"] == note["id"]
    # ...and as the notes list shows it
    listed = graphql(world, NOTES)["notes"]["notes"]
    [item] = [snaked(n) for n in listed if n["id"] == note["id"]]
    shared = set(item) & set(found)
    assert shared == {"id", "short_id", "text", "timestamp", "chat"}
    assert {k: item[k] for k in shared} == {k: found[k] for k in shared}


@reads("list_notes")
@pytest.mark.parametrize("args", [{}, {"consolidated": False, "limit": 5, "offset": 0}])
def test_list_notes(world: World, args: dict[str, Any]) -> None:
    found = same_answer(world, "list_notes", args)
    assert found["total"] == 1 and [n["text"] for n in found["notes"]] == [NOTE]
    assert found["notes"][0]["consolidated"] is False
    data = graphql(
        world, NOTES, c=args.get("consolidated"), l=args.get("limit"), o=args.get("offset")
    )["notes"]
    assert data.pop("__typename") == "NoteList"
    assert snaked(data) == found


PAGE = """query($p: String, $e: String) { page(path: $p, entity: $e) {
  id kind title path file revision of markdown } }"""


@reads("read_page")
@pytest.mark.parametrize("by", ["path", "entity"])
def test_read_page(world: World, by: str) -> None:
    args = {"path": world.page_path} if by == "path" else {"entity": "Northwind Studio"}
    found = same_answer(world, "read_page", args)
    assert found["kind"] == "page" and found["title"] == "Northwind Studio"
    assert found["file"] == world.page_path and "Northwind Studio" in found["markdown"]
    data = graphql(world, PAGE, p=args.get("path"), e=args.get("entity"))["page"]
    assert snaked(data) == found  # every field


ITEM = "id kind title excerpt score why steps triggers"
CONTEXT = f"""query($t: String!, $i: Intent!, $k: Int) {{ context(task: $t, intent: $i, k: $k)
  {{ __typename ... on ContextPacket {{ task intent facts {{ {ITEM} }} procedure {{ {ITEM} }}
    alternatives {{ {ITEM} }} episodes {{ {ITEM} }} notes {{ id text timestamp score why }}
    warnings packet }} }} }}"""


@reads("retrieve_memory")
@pytest.mark.parametrize(
    "args",
    [
        {"task": "export the final mix for the client", "intent": "execute"},
        {"task": "when does Arjun land at OPO on Thursday", "intent": "answer", "k": 10},
    ],
)
def test_retrieve_memory(world: World, args: dict[str, Any]) -> None:
    found = same_answer(world, "retrieve_memory", args)
    if args["intent"] == "execute":
        assert found["procedure"]["title"] == EXPORT and found["procedure"]["steps"]
    else:
        assert [n["id"] for n in found["notes"]] == [world.note["id"]]
    data = graphql(world, CONTEXT, t=args["task"], i=args["intent"].upper(), k=args.get("k"))
    packet = data["context"]
    assert packet["__typename"] == "ContextPacket"
    assert packet["packet"] == found  # the whole packet, evidence and all
    assert (packet["task"], packet["intent"], packet["warnings"]) == (
        found["task"],
        found["intent"],
        found["warnings"],
    )
    fields = ITEM.split()
    for section in ("facts", "alternatives", "episodes"):
        expected = [{k: i[k] for k in fields} for i in found[section]]
        assert packet[section] == expected, section
    procedure = found["procedure"]
    assert packet["procedure"] == (None if procedure is None else {k: procedure[k] for k in fields})
    notes = [{k: n[k] for k in ("id", "text", "timestamp", "score", "why")} for n in found["notes"]]
    assert packet["notes"] == notes
    compared = [packet[s] for s in ("facts", "alternatives", "episodes", "procedure", "notes")]
    assert leaves(compared) >= 8


PROMPT = """query($a: String, $b: Int) { promptContext(accountName: $a, budgetTokens: $b) {
  __typename ... on PromptContext { markdown tokens budgetTokens truncated packet } } }"""


@reads("prompt_context")
@pytest.mark.parametrize("args", [{}, {"account_name": "Priya Raman", "budget_tokens": 1500}])
def test_prompt_context(world: World, args: dict[str, Any]) -> None:
    found = same_answer(world, "prompt_context", args)
    markdown = found["markdown"]
    assert "Northwind Studio" in markdown and NOTE in markdown and EXPORT in markdown
    assert args.get("account_name", UID) in markdown
    data = graphql(world, PROMPT, a=args.get("account_name"), b=args.get("budget_tokens"))
    pushed = data["promptContext"]
    assert pushed.pop("__typename") == "PromptContext"
    assert pushed.pop("packet") == found  # generated_at too: the clock stands still
    assert snaked(pushed) == {
        "markdown": markdown,
        "tokens": found["tokens"],
        "budget_tokens": found["budget_tokens"],
        "truncated": found["truncated"]["total"],
    }


@reads("review_inbox")
def test_review_inbox(world: World) -> None:
    found = same_answer(world, "review_inbox", {"limit": 10})["memories"]
    assert [m["title"] for m in found] == [VEGETARIAN, LANDING]  # newest first
    data = graphql(world, f"query($f: Int!) {{ reviewInbox(first: $f) {{ {SUMMARY} }} }}", f=10)
    assert [summary_json(m) for m in data["reviewInbox"]] == [
        without(m, SUMMARY_ONLY) for m in found
    ]


@reads("review_mode")
def test_review_mode(world: World) -> None:
    found = same_answer(world, "review_mode", {})
    assert found == {"mode": "review", "changed": False}
    assert WriteMode[graphql(world, "{ reviewMode }")["reviewMode"]].value == found["mode"]


@reads("decisions_feed")
@pytest.mark.parametrize("limit", [3, 50])
def test_decisions_feed(world: World, limit: int) -> None:
    found = same_answer(world, "decisions_feed", {"limit": limit})["decisions"]
    assert len(found) == 3 if limit == 3 else 5 < len(found) < limit
    actions = [d["action"] for d in found]
    if limit == 50:
        assert {"pin", "refuse"} <= set(actions), actions
        [refused] = [d for d in found if d["action"] == "refuse"]
        assert refused["draft"]["title"] == "Priya was born in Delhi"
    ats = [d["at"] for d in found]
    assert ats == sorted(ats, reverse=True)  # newest first
    data = graphql(world, f"query($f: Int!) {{ decisions(first: $f) {{ {DECISION} }} }}", f=limit)
    assert [decision_json(d) for d in data["decisions"]] == found


CONSOLIDATION = """query($h: Int!) { consolidation(history: $h) { model waitingSources
  waitingDrafts passes { id status state stateReason stage attempts recoveries startedAt
    finishedAt nextAttemptAt owner { host pid } heartbeatAt drafts sources error errorStage
    abandonReason retriedAs } } }"""


@reads("consolidation_status")
def test_consolidation_status(world: World) -> None:
    found = same_answer(world, "consolidation_status", {"limit": 5})
    [abandoned] = found["passes"]
    assert abandoned["id"] == world.abandoned and abandoned["state"] == "abandoned"
    assert "answered 503" in abandoned["abandon_reason"]
    assert found["waiting_sources"] == 1  # the short note, kept after the pass
    data = snaked(graphql(world, CONSOLIDATION, h=5)["consolidation"])
    passes = data.pop("passes")
    assert data == without(found, {"passes"})
    assert passes == found["passes"]  # every field, the worker's too


# -- writes: the same bad argument, the same field named -------------------------------

IN = "__typename ... on InputError { message field }"


@dataclass(frozen=True)
class Refusal:
    """A bad call of ``tool``: ``args`` as MCP and REST take them, and the same call in
    GraphQL. ``graphql`` says how GraphQL refuses it: ``InputError`` (the tool's parse, as
    on the other surfaces), ``NotFound`` or ``Conflict``, ``schema`` (GraphQL's own types
    refuse it first, naming the argument) or ``extensions`` (a query's error, naming the
    field in its extensions). ``names``: what GraphQL names instead of the field, where
    its argument is called otherwise (``first`` for ``limit``) or its refusal names the
    argument's type."""

    name: str
    tool: str
    args: Callable[[World], dict[str, Any]]
    document: str
    variables: Callable[[World], dict[str, Any]]
    field: str | None
    status: int = 422
    graphql: str = "InputError"
    names: str | None = None  # what GraphQL's own refusal names, when not the argument


def _draft(**extra: Any) -> dict[str, Any]:
    return {
        "kind": "semantic",
        "title": "Arjun loves grilled octopus",
        "confidence": 0.9,
        "evidence": [{"source": f"chat:{CHAT}#2", "quote": "he loved the grilled octopus"}],
    } | extra


def _turn(**extra: Any) -> dict[str, Any]:
    said = "Arjun says the octopus at Tasca do Rio beats Lisbon's."
    return {"chat": CHAT, "turn": 5, "role": "user", "text": said} | extra


def _task(**extra: Any) -> dict[str, Any]:
    states = [{"state": "started", "at": "2026-11-09T11:00:00Z"}]
    return {"task_id": "ad-mix-export", "text": "Export the ad mix", "states": states} | extra


def _task_input(**extra: Any) -> dict[str, Any]:
    """:func:`_task` as GraphQL's TaskInput spells it."""
    return {camel(k): v for k, v in _task(**extra).items()}


def _work(w: World) -> str:
    return w.memories[WORK]


REFUSALS = (
    Refusal(
        "remember: a blank text",
        "memory_remember",
        lambda w: {"text": "   ", "chat": CHAT},
        f"mutation($t: String!, $c: String) {{ out: remember(text: $t, chat: $c) {{ {IN} }} }}",
        lambda w: {"t": "   ", "c": CHAT},
        "text",
    ),
    Refusal(
        "remember: an unknown field",
        "memory_remember",
        lambda w: {"text": "Arjun prefers the window seat", "mood": "cheerful"},
        'mutation { out: remember(text: "Arjun prefers the window seat", mood: "cheerful") '
        "{ __typename } }",
        lambda w: {},
        "mood",
        graphql="schema",
    ),
    Refusal(
        "reflect: neither messages nor learnings",
        "reflect_session",
        lambda w: {"chat": CHAT},
        f"mutation($c: String!) {{ out: reflectSession(chat: $c) {{ {IN} }} }}",
        lambda w: {"c": CHAT},
        "learnings",
    ),
    Refusal(
        "draft: confidence above 1",
        "draft_memory",
        lambda w: {"drafts": [_draft(confidence=1.5)]},
        f"mutation($d: [DraftInput!]!) {{ out: draftMemories(drafts: $d) {{ {IN} }} }}",
        lambda w: {"d": [_draft(confidence=1.5, kind="SEMANTIC")]},
        "drafts[0].confidence",
    ),
    Refusal(
        "draft: an unknown field",
        "draft_memory",
        lambda w: {"drafts": [_draft(mood="wistful")]},
        f"mutation($d: [DraftInput!]!) {{ out: draftMemories(drafts: $d) {{ {IN} }} }}",
        lambda w: {"d": [_draft(mood="wistful", kind="SEMANTIC")]},
        "drafts[0].mood",
        graphql="schema",
    ),
    Refusal(
        "manage: rate by 5",
        "manage_memory",
        lambda w: {"id": _work(w), "action": "rate", "delta": 5},
        f"mutation($id: ID!) {{ out: manageMemory(id: $id, action: RATE, delta: 5) {{ {IN} }} }}",
        lambda w: {"id": _work(w)},
        "delta",
    ),
    Refusal(
        "manage: an unknown field",
        "manage_memory",
        lambda w: {"id": _work(w), "action": "archive", "reason": "she moved on"},
        'mutation($id: ID!) { out: manageMemory(id: $id, action: ARCHIVE, reason: "she moved on")'
        " { __typename } }",
        lambda w: {"id": _work(w)},
        "reason",
        graphql="schema",
    ),
    Refusal(
        "forget note: an unknown field",
        "forget_note",
        lambda w: {"id": w.note["short_id"], "reason": "he landed"},
        'mutation($id: ID!) { out: forgetNote(id: $id, reason: "he landed") { __typename } }',
        lambda w: {"id": w.note["short_id"]},
        "reason",
        graphql="schema",
    ),
    Refusal(
        "forget note: a memory is no note",
        "forget_note",
        lambda w: {"id": _work(w)},
        "mutation($id: ID!) { out: forgetNote(id: $id) { __typename "
        "... on NotFound { message } } }",
        lambda w: {"id": _work(w)},
        None,
        status=404,
        graphql="NotFound",
    ),
    Refusal(
        "ingest: a narrator is no role",
        "ingest_messages",
        lambda w: {"messages": [_turn(role="narrator")]},
        f"mutation($m: [MessageInput!]!) {{ out: ingestMessages(messages: $m) {{ {IN} }} }}",
        lambda w: {"m": [_turn(role="narrator")]},
        "messages[0].role",
    ),
    Refusal(
        "ingest: a turn that is no number",
        "ingest_messages",
        lambda w: {"messages": [_turn(turn="five")]},
        f"mutation($m: [MessageInput!]!) {{ out: ingestMessages(messages: $m) {{ {IN} }} }}",
        lambda w: {"m": [_turn(turn="five")]},
        "messages[0].turn",
        graphql="schema",
    ),
    Refusal(
        "ingest task: a result with no end",
        "ingest_task",
        lambda w: _task(result="ad-mix-v3.wav, 48 kHz"),
        f"mutation($t: TaskInput!) {{ out: ingestTask(task: $t) {{ {IN} }} }}",
        lambda w: {"t": _task_input(result="ad-mix-v3.wav, 48 kHz")},
        "states",
    ),
    Refusal(
        "retry: no pass id",
        "retry_consolidation",
        lambda w: {"passes": ["last-night"]},
        f"mutation($p: [String!]) {{ out: retryConsolidation(passes: $p) {{ {IN} }} }}",
        lambda w: {"p": ["last-night"]},
        "passes[0]",
    ),
    Refusal(
        "cite: an empty id",
        "memory_cite",
        lambda w: {"id": ""},
        f'mutation {{ out: cite(id: "") {{ {IN} }} }}',
        lambda w: {},
        "id",
    ),
    Refusal(
        "outcome: no items",
        "record_outcome",
        lambda w: {"items": [], "verdict": "helpful"},
        f"mutation {{ out: recordOutcome(items: [], verdict: HELPFUL) {{ {IN} }} }}",
        lambda w: {},
        "items",
    ),
    Refusal(
        "review: an unknown field",
        "review_decide",
        lambda w: {"id": w.memories[VEGETARIAN], "verdict": "approve", "note": "she said so"},
        'mutation($id: ID!) { out: approveMemory(id: $id, note: "she said so") { __typename } }',
        lambda w: {"id": w.memories[VEGETARIAN]},
        "note",
        graphql="schema",
    ),
    Refusal(
        "review: an active memory",
        "review_decide",
        lambda w: {"id": _work(w), "verdict": "approve"},
        "mutation($id: ID!) { out: approveMemory(id: $id) { __typename "
        "... on Conflict { message } } }",
        lambda w: {"id": _work(w)},
        None,
        status=409,
        graphql="Conflict",
    ),
    Refusal(
        "review mode: sometimes",
        "review_mode",
        lambda w: {"mode": "sometimes"},
        "mutation { out: setReviewMode(mode: SOMETIMES) { __typename } }",
        lambda w: {},
        "mode",
        graphql="schema",
        names="ReviewMode",  # graphql-core names an enum value's type, not the argument
    ),
    # reads refuse alike too
    Refusal(
        "search: k of 0",
        "memory_search",
        lambda w: {"query": "Arjun", "k": 0},
        f'query {{ out: search(query: "Arjun", k: 0) {{ {IN} }} }}',
        lambda w: {},
        "k",
    ),
    Refusal(
        "notes: a limit of 0",
        "list_notes",
        lambda w: {"limit": 0},
        f"query {{ out: notes(limit: 0) {{ {IN} }} }}",
        lambda w: {},
        "limit",
    ),
    Refusal(
        "prompt context: a budget of 10",
        "prompt_context",
        lambda w: {"budget_tokens": 10},
        f"query {{ out: promptContext(budgetTokens: 10) {{ {IN} }} }}",
        lambda w: {},
        "budget_tokens",
    ),
    Refusal(
        "memories: a blank predicate",
        "list_memories",
        lambda w: {"predicate": "  "},
        'query { out: memories(predicate: "  ") { nodes { id } } }',
        lambda w: {},
        "predicate",
        graphql="extensions",
    ),
    Refusal(
        "decisions: a limit of 0",
        "decisions_feed",
        lambda w: {"limit": 0},
        "query { out: decisions(first: 0) { id } }",
        lambda w: {},
        "limit",
        graphql="extensions",
        names="first",
    ),
    Refusal(
        "consolidation: a limit of 0",
        "consolidation_status",
        lambda w: {"limit": 0},
        "query { out: consolidation(history: 0) { model } }",
        lambda w: {},
        "limit",
        graphql="extensions",
        names="history",
    ),
)


def state(world: World) -> list[Any]:
    """What a refused call must leave as it was."""
    http = world.http
    return [
        http.get("/api/memories", params={"limit": 100}).json(),
        http.get("/api/memories", params={"status": "pending"}).json(),
        http.get("/api/notes").json(),
        http.get("/api/decisions").json(),
        http.get("/api/consolidation").json(),
        http.get("/api/review-mode").json(),
        http.get(f"/api/memories/{quote(world.memories[WORK], safe='')}").json(),
    ]


@pytest.mark.parametrize("case", REFUSALS, ids=[r.name for r in REFUSALS])
def test_a_bad_call_is_refused_alike_on_every_surface(world: World, case: Refusal) -> None:
    before = state(world)
    args = case.args(world)

    answer = rest_call(world.http, case.tool, args)
    assert answer.status_code == case.status, answer.text
    over_rest = answer.json()["error"]
    result = mcp_call(world, case.tool, args)
    assert result.is_error and isinstance(result.structured_content, dict), result.content
    over_mcp = result.structured_content["error"]
    assert over_rest["field"] == over_mcp["field"] == case.field, (over_rest, over_mcp)
    assert over_mcp["status"] == case.status and over_rest["code"] == over_mcp["code"]
    if case.field is None:  # the same refusal, in the same words
        assert over_rest["message"] == over_mcp["message"], (over_rest, over_mcp)
    else:  # REST's body check (the OpenAPI schema) may word it otherwise, naming the field
        prefix = f"{case.field}: "
        assert over_rest["message"].startswith(prefix), over_rest
        assert over_mcp["message"].startswith(prefix), over_mcp

    posted = world.http.post(
        "/graphql", json={"query": case.document, "variables": case.variables(world)}
    )
    assert posted.status_code == 200, posted.text
    body = posted.json()
    if case.graphql == "schema":  # refused by GraphQL's own types, before the tool
        [error] = body["errors"]
        assert case.field is not None
        name = case.names or camel(re.findall(r"[a-z_]+", case.field)[-1])
        assert re.search(rf"\b{name}\b", error["message"], re.IGNORECASE), error
    elif case.graphql == "extensions":
        [error] = body["errors"]
        assert error["extensions"]["field"] == (case.names or camel(str(case.field))), error
        if case.names is None:  # the tool's own refusal
            assert error["message"] == over_mcp["message"], error
    else:
        assert not body.get("errors"), body
        out = body["data"]["out"]
        assert out["__typename"] == case.graphql, out
        assert out["message"] == over_mcp["message"]
        if case.graphql == "InputError":
            assert out["field"] == case.field
    assert state(world) == before, "a refused call changed something"


def test_a_refused_draft_says_the_same_on_rest_and_graphql(world: World) -> None:
    """draft_memory's every field, REST against GraphQL, on a draft the gate refuses (it
    writes only its refusal)."""
    invented = _draft(evidence=[{"source": f"chat:{CHAT}#2", "quote": "Arjun owns a boat"}])
    [over_rest] = rest_call(world.http, "draft_memory", {"drafts": [invented]}).json()["items"]
    query = """mutation($d: [DraftInput!]!) { draftMemories(drafts: $d) { __typename
      ... on DraftSuccess { items { index outcome memoryId shortId decision reasons needsTerms
        superseded weakened contradicts violations } } } }"""
    drafted = graphql(world, query, d=[{**invented, "kind": "SEMANTIC"}])["draftMemories"]
    [item] = snaked(drafted["items"])
    item["memory"] = item.pop("memory_id")
    assert over_rest["outcome"] == "refused" and set(item) == set(over_rest)
    assert without(item, {"decision"}) == without(over_rest, {"decision"})  # each its own
