"""Hand-made attacks on one live server, as an attacker or a careless client writes them.

One real server (uvicorn on loopback, a store on disk) takes every attack below while a
watcher asks ``/health`` every 50 ms and a loopback *tripwire* listener, whose URL the
attacks name, records any connection. Each attack must be answered below 500; at the end
``/health`` must have answered every time, each within a second, and nothing may have
connected to the tripwire (the server never reaches out).

Families: SPARQL that names the network in every spelling the grammar allows (escapes,
prefixed names, nested groups, subqueries, filters, variables, updates, ``LOAD``, ``FROM``),
GraphQL documents that expand (fragment and alias bombs, deep selections, huge token
counts, many operations), bodies that are too large, deep, malformed or mistyped, text with
NUL, non-BMP characters and lone surrogates, and time values outside the calendar.
"""

from __future__ import annotations

import json
import time

import httpx
import pytest

from tests.helpers import MCP_INIT
from tests.hostile.conftest import Target, assert_health_held

pytestmark = pytest.mark.integration


def _below_500(answer: httpx.Response) -> None:
    assert answer.status_code < 500, (answer.request.url, answer.status_code, answer.text[:300])


# -- SPARQL that names the network -------------------------------------------------------

_SPARQL = [
    "SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "select * where {{ service <{url}> {{ ?s ?p ?o }} }}",
    r"SELECT * WHERE {{ \u0053ERVICE <{url}> {{ ?s ?p ?o }} }}",
    r"SELECT * WHERE {{ \U00000053ERVICE <{url}> {{ ?s ?p ?o }} }}",
    r"SELECT * WHERE {{ OPTIONAL {{ <urn:x\u0041#> ?p0 ?o0 }} SERVICE <{url}> {{ ?x ?p ?o }} }}",
    "PREFIX net: <{url}> SELECT * WHERE {{ SERVICE net:here {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ ?s ?p ?o . SERVICE SILENT <{url}> {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ {{ ?s ?p ?o }} UNION {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * WHERE {{ ?s ?p ?o MINUS {{ SERVICE <{url}> {{ ?s ?b ?c }} }} }}",
    "SELECT * WHERE {{ GRAPH ?g {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }} }}",
    "ASK {{ FILTER NOT EXISTS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
    "SELECT * WHERE {{ BIND(<{url}> AS ?e) SERVICE ?e {{ ?a ?b ?c }} }}",
    "SELECT * WHERE {{ VALUES ?e {{ <{url}> }} SERVICE ?e {{ ?a ?b ?c }} }}",
    "CONSTRUCT {{ ?s ?p ?o }} WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "DESCRIBE ?s WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ SERVICE <{url}> {{ SERVICE <{url}> {{ ?s ?p ?o }} }} }}",
    "SELECT * FROM <{url}> WHERE {{ ?s ?p ?o }}",
    "SELECT * FROM NAMED <{url}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
    "DESCRIBE <{url}>",
    "SELECT * WHERE {{ BIND(<{url}>(1) AS ?x) }}",
    "LOAD <{url}>",
    "LOAD SILENT <{url}> INTO GRAPH <urn:x>",
    "INSERT DATA {{ <urn:a> <urn:b> <{url}> }}",
    "CLEAR ALL",
    "SELECT * WHERE {{ ?s ?p ?o }} ; LOAD <{url}>",
]


@pytest.mark.parametrize("template", _SPARQL)
def test_sparql_never_reaches_out(target: Target, template: str) -> None:
    query = template.format(url=target.wire.url)
    for answer in (
        target.world.get(target.world.alice, query=query),
        target.world.post(target.world.alice, data={"query": query}),
        target.world.post(
            target.world.alice,
            content=query.encode(),
            headers={"Content-Type": "application/sparql-query"},
        ),
    ):
        _below_500(answer)
    assert target.wire.connections == []


# -- GraphQL documents that expand -------------------------------------------------------


def _fragment_bomb(depth: int, spreads: int = 2) -> str:
    parts = ["query Bomb { me { ...F0 } }"]
    parts += [
        f"fragment F{i} on Me {{ {' '.join([f'...F{i + 1}'] * spreads)} }}" for i in range(depth)
    ]
    parts.append(f"fragment F{depth} on Me {{ id }}")
    return "\n".join(parts)


_GRAPHQL = {
    "fragment bomb 20": _fragment_bomb(20),
    "fragment bomb 60": _fragment_bomb(60),
    "wide fragment bomb": _fragment_bomb(8, spreads=12),
    "alias bomb": "{ " + " ".join(f"a{i}: me {{ id }}" for i in range(500)) + " }",
    "deep selection": "{ entities(first: 1) { nodes { "
    + "relations { other { " * 12
    + "name"
    + " } }" * 12
    + " } } }",
    "deep introspection": "{ __schema { types { "
    + "fields { type { " * 10
    + "name"
    + " } }" * 10
    + " } } }",
    "cost bomb": "{ entities(first: 1000) { nodes { relations { other { "
    + "memories(first: 1000) { nodes { evidence { quote } } } } } } } }",
    "token flood": "{ me { " + "id " * 50_000 + "} }",
    "directive flood": "{ me { id " + "@include(if: true) " * 3000 + "} }",
    "many operations": " ".join(f"query Q{i} {{ me {{ id }} }}" for i in range(2000)),
    "nested braces": "{" * 20_000 + "}" * 20_000,
    "nested list literal": '{ search(query: "x", filters: {tags: '
    + "[" * 5000
    + "]" * 5000
    + "}) { __typename } }",
    "unterminated string": '{ search(query: "' + "x" * 500_000 + ") { __typename } }",
    "cyclic fragments": "{ me { ...A } } fragment A on Me { ...B } fragment B on Me { ...A }",
}


@pytest.mark.parametrize("name", sorted(_GRAPHQL))
def test_graphql_documents_are_bounded(target: Target, name: str) -> None:
    started = time.monotonic()
    answer = httpx.post(
        f"{target.world.url}/graphql",
        json={"query": _GRAPHQL[name]},
        headers=target.headers(),
        timeout=30,
    )
    _below_500(answer)
    assert time.monotonic() - started < 5, f"{name} took {time.monotonic() - started:.1f} s"
    if answer.status_code == 200:
        body = answer.json()
        assert body.get("errors") or body.get("data") is not None


# -- bodies ------------------------------------------------------------------------------

_POSTS = ["/api/remember", "/api/memories/batch-draft", "/api/messages", "/graphql", "/sparql"]


@pytest.mark.parametrize("path", _POSTS)
@pytest.mark.parametrize(
    ("content", "content_type"),
    [
        (b"x" * (2 * 1024 * 1024), "application/json"),
        (b"{" * 10_000, "application/json"),
        (b"[" * 200_000 + b"]" * 200_000, "application/json"),
        (b'{"text": "unterminated', "application/json"),
        (b"\xff\xfe\x00garbage", "application/json"),
        (b'{"text": "x"}', "text/plain"),
        (b'{"text": NaN, "query": Infinity}', "application/json"),
        (b"", "application/json"),
        (b"null", "application/json"),
        (b'"a string"', "application/json"),
        (b"[1, 2, 3]", "application/json"),
    ],
    ids=[
        "2MiB",
        "open-braces",
        "deep-arrays",
        "unterminated",
        "not-utf8",
        "text-plain",
        "nan",
        "empty",
        "null",
        "string",
        "array",
    ],
)
def test_bad_bodies_are_4xx(target: Target, path: str, content: bytes, content_type: str) -> None:
    answer = httpx.post(
        target.world.url + path,
        content=content,
        headers=target.headers(**{"Content-Type": content_type}),
        timeout=30,
    )
    _below_500(answer)
    assert answer.status_code != 200, (path, answer.text[:200])


# -- text and time values ----------------------------------------------------------------

_TEXTS = [
    "nul \x00 inside",
    "non-BMP \U0001f600\U0010ffff\U000e0001",
    "lone \ud800 surrogate",
    "right-to-left \u202e override",
    "x" * 100_000,
    "",
    " ",
]


def _draft(text: str, when: object = None) -> dict[str, object]:
    draft: dict[str, object] = {
        "kind": "episodic",
        "title": text,
        "confidence": 0.5,
        "claims": [{"subject": text, "predicate": "kgm:likes", "object": text}],
        "evidence": [{"source": "reported", "quote": text, "reported_text": text}],
    }
    if when is not None:
        draft["occurred_at"] = when
    return draft


def _json(target: Target, method: str, path: str, body: object) -> httpx.Response:
    """``body`` as a JSON encoder sends it (a lone surrogate as JSON's own escape)."""
    return httpx.request(
        method,
        target.world.url + path,
        content=json.dumps(body).encode(),
        headers=target.headers(**{"Content-Type": "application/json"}),
        timeout=60,
    )


@pytest.mark.parametrize("text", _TEXTS, ids=range(len(_TEXTS)))
def test_hostile_text_in_every_write(target: Target, text: str) -> None:
    for path, body in (
        ("/api/remember", {"text": text, "tags": [text]}),
        ("/api/memories/batch-draft", {"drafts": [_draft(text)]}),
        ("/api/messages", {"messages": [{"chat": text, "turn": 0, "role": "user", "text": text}]}),
        (
            "/graphql",
            {
                "query": "query($q: String!) { search(query: $q) { __typename } }",
                "variables": {"q": text},
            },
        ),
    ):
        _below_500(_json(target, "POST", path, body))
    query = text.replace("\ud800", "")[:2000]  # a URL holds no lone surrogate, nor 100 kB
    _below_500(
        httpx.get(
            f"{target.world.url}/api/search",
            params={"q": query},
            headers=target.headers(),
            timeout=30,
        )
    )


_TIMES = [
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "2026-02-30T10:00:00Z",
    "2026-03-14",
    "2026-03-14T25:61:00Z",
    "now",
    "",
    "+002026-03-14T00:00:00Z",
    1e309,
    -1,
    True,
    None,
    ["2026-03-14"],
]


@pytest.mark.parametrize("when", _TIMES, ids=[repr(t)[:30] for t in _TIMES])
def test_time_values_outside_the_calendar(target: Target, when: object) -> None:
    _below_500(_json(target, "POST", "/api/memories/batch-draft", {"drafts": [_draft("t", when)]}))
    for name in ("since", "until"):
        _below_500(
            httpx.get(
                f"{target.world.url}/api/search",
                params={"q": "t", name: str(when)},
                headers=target.headers(),
                timeout=30,
            )
        )
    turn = {"chat": "times", "turn": 0, "role": "user", "text": "t", "timestamp": when}
    _below_500(_json(target, "POST", "/api/messages", {"messages": [turn]}))


# -- MCP ---------------------------------------------------------------------------------

_MCP_ACCEPT = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _mcp(target: Target, body: object, session: str | None = None) -> httpx.Response:
    headers = target.headers(**_MCP_ACCEPT)
    if session is not None:
        headers["mcp-session-id"] = session
    return httpx.post(
        f"{target.world.url}/mcp", content=json.dumps(body).encode(), headers=headers, timeout=30
    )


def _call(name: str, arguments: object) -> dict[str, object]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}


_MCP_CALLS = {
    "unknown tool": _call("rm_rf", {}),
    "arguments not an object": _call("memory_search", ["q"]),
    "wrong types": _call("memory_search", {"query": 5, "k": "all"}),
    "huge k": _call("memory_search", {"query": "x", "k": 10**30}),
    "lone surrogate": _call("memory_remember", {"text": "a\ud800b"}),
    "nul and non-BMP": _call("memory_remember", {"text": "\x00\U0010ffff"}),
    "unknown argument": _call("memory_remember", {"text": "x", "user": "bob"}),
    "bad time": _call("memory_search", {"query": "x", "since": "0001-01-01T00:00:00+14:00"}),
    "another user's memory": _call("manage_memory", {"id": "urn:x", "action": "forget"}),
    "unknown method": {"jsonrpc": "2.0", "id": 8, "method": "resources/delete", "params": {}},
    "no id": {"jsonrpc": "2.0", "method": "tools/call", "params": {}},
    "not json-rpc": {"hello": "world"},
    "batch": [_call("memory_search", {"query": "x"})] * 50,
}


@pytest.mark.parametrize("name", sorted(_MCP_CALLS))
def test_mcp_calls_are_answered_below_500(target: Target, name: str) -> None:
    opened = _mcp(target, MCP_INIT)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    _mcp(target, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    _below_500(_mcp(target, _MCP_CALLS[name], session))
    _below_500(_mcp(target, _MCP_CALLS[name]))  # and without a session


# -- the whole run -------------------------------------------------------------------------


def test_zz_health_answered_within_a_second_throughout(target: Target) -> None:
    """Runs last in this module (pytest keeps file order; xdist keeps a module together)."""
    assert_health_held(target)
