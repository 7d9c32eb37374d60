"""GraphQL at /graphql against a real uvicorn with httpx: each operation's stored effect,
expected failures as union members naming the field, GraphiQL, keys, and tenant isolation
(another user's ids give null or NotFound, never data)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from kgmem.vocab import KGM
from tests.api.support import ApiServer, api_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "graphql-home") as running:
        yield running


def gql(client: httpx.Client, query: str, **variables: Any) -> dict[str, Any]:
    """The data of a query that must succeed."""
    answer = client.post("/graphql", json={"query": query, "variables": variables})
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    assert "errors" not in body, body["errors"]
    data: dict[str, Any] = body["data"]
    return data


def errors(client: httpx.Client, query: str, **variables: Any) -> list[str]:
    answer = client.post("/graphql", json={"query": query, "variables": variables})
    assert answer.status_code == 200, answer.text
    return [e["message"] for e in answer.json().get("errors", [])]


INGEST = """
mutation($messages: [MessageInput!]!) {
  ingestMessages(messages: $messages) {
    __typename
    ... on Ingested { messages { id status } }
    ... on InputError { message field }
    ... on Conflict { message }
  }
}"""

DRAFT = """
mutation($drafts: [DraftInput!]!) {
  draftMemories(drafts: $drafts) {
    __typename
    ... on DraftSuccess { items { index outcome memoryId reasons memory { title status } } }
    ... on InputError { message field }
  }
}"""

MANAGE = """
mutation($id: ID!, $action: ManageAction!, $delta: Int) {
  manageMemory(id: $id, action: $action, delta: $delta) {
    __typename
    ... on Managed { status pinned strength decision }
    ... on NotFound { message }
    ... on Conflict { message }
    ... on InputError { message field }
  }
}"""

MEMORY = """
query($id: ID!) {
  memory(id: $id) {
    id shortId kind status title confidence tags
    evidence { quote spanStart spanEnd support sourceType
               source { text link chat turn } }
    claims { predicate object }
    history { action actor }
    entities { name types { iri } }
  }
}"""


def said(client: httpx.Client, chat: str, text: str) -> None:
    message = {"chat": chat, "turn": 0, "role": "user", "text": text}
    out = gql(client, INGEST, messages=[message])["ingestMessages"]
    assert out["__typename"] == "Ingested", out


def sibling(client: httpx.Client, chat: str, name: str) -> dict[str, Any]:
    """A grounded, active memory that ``name`` is the user's sibling; its draft item."""
    text = f"My sister is {name}"
    said(client, chat, text)
    draft = {
        "kind": "SEMANTIC",
        "title": f"Sister {name}",
        "confidence": 0.9,
        "tags": ["family"],
        "entities": [{"name": name, "types": ["schema:Person"]}],
        "claims": [{"subject": "I", "predicate": "schema:sibling", "object": name}],
        "evidence": [{"source": f"chat:{chat}#0", "quote": text}],
    }
    out = gql(client, DRAFT, drafts=[draft])["draftMemories"]
    assert out["__typename"] == "DraftSuccess", out
    [item] = out["items"]
    assert item["outcome"] == "active", item
    return dict(item)


# -- the endpoint ------------------------------------------------------------------------


def test_graphiql_on_get_and_a_key_is_needed(server: ApiServer) -> None:
    with server.client("g-ide") as c:
        page = c.get("/graphql", headers={"Accept": "text/html"})
        assert page.status_code == 200 and "graphiql" in page.text.lower()
        assert gql(c, "{ me { id admin } }")["me"] == {"id": "g-ide", "admin": False}
    bare = httpx.post(f"{server.base}/graphql", json={"query": "{ me { id } }"})
    assert bare.status_code == 401
    assert bare.json()["error"]["code"] == "unauthenticated"
    browser = httpx.get(f"{server.base}/graphql", headers={"Accept": "text/html,*/*;q=0.8"})
    assert browser.status_code == 200 and "graphiql" in browser.text.lower()  # the page only
    for sneaky in ({"query": "{ me { id } }"}, {"query": "", "x": "1"}):
        answer = httpx.get(f"{server.base}/graphql", params=sneaky, headers={"Accept": "*/*"})
        assert answer.status_code == 401, sneaky
    as_json = httpx.get(f"{server.base}/graphql", headers={"Accept": "application/json"})
    assert as_json.status_code == 401  # no HTML asked for: not the page


# -- stored effects ----------------------------------------------------------------------


def test_draft_then_read_memory_evidence_source_history_and_entities(server: ApiServer) -> None:
    with server.client("g-draft") as c:
        item = sibling(c, "d1", "Ada")
        assert item["memory"] == {"title": "Sister Ada", "status": "ACTIVE"}
        memory = gql(c, MEMORY, id=item["memoryId"])["memory"]
        assert memory["kind"] == "SEMANTIC" and memory["tags"] == ["family"]
        [evidence] = memory["evidence"]
        assert evidence["quote"] == "My sister is Ada" and evidence["support"] == "explicit"
        assert (evidence["spanStart"], evidence["spanEnd"]) == (0, len("My sister is Ada"))
        assert evidence["source"] == {
            "text": "My sister is Ada",
            "link": "chat:d1#0",
            "chat": "d1",
            "turn": 0,
        }
        assert [d["action"] for d in memory["history"]] == ["create"]
        names = {e["name"] for e in memory["entities"]}
        assert "Ada" in names
        by_short = gql(c, MEMORY, id=memory["shortId"])["memory"]
        assert by_short["id"] == item["memoryId"]
        listed = gql(c, "{ memories(kind: SEMANTIC, status: ACTIVE) { nodes { id } } }")
        assert [m["id"] for m in listed["memories"]["nodes"]] == [item["memoryId"]]
        none = gql(c, "{ memories(kind: EPISODIC) { nodes { id } pageInfo { hasNextPage } } }")
        assert none["memories"] == {"nodes": [], "pageInfo": {"hasNextPage": False}}


def test_a_refused_draft_is_one_decision_with_its_reasons(server: ApiServer) -> None:
    with server.client("g-refuse") as c:
        said(c, "r1", "My sister is Ada")
        draft = {
            "kind": "SEMANTIC",
            "title": "Sister Lin",
            "confidence": 0.9,
            "claims": [{"subject": "I", "predicate": "schema:sibling", "object": "Lin"}],
            "evidence": [{"source": "chat:r1#0", "quote": "My sister is Lin"}],
        }
        out = gql(c, DRAFT, drafts=[draft])["draftMemories"]
        [item] = out["items"]
        assert item["outcome"] == "refused" and item["memoryId"] is None
        query = "{ decisions(first: 1000) { action target reason actor draft { title kind hash } }}"
        [decision] = gql(c, query)["decisions"]
        assert decision["action"] == "refuse" and decision["target"] is None
        assert decision["reason"] == "; ".join(item["reasons"])
        assert "does not occur verbatim" in decision["reason"]
        assert decision["actor"] == "agent"
        assert decision["draft"]["title"] == "Sister Lin"
        assert decision["draft"]["kind"] == "SEMANTIC" and len(decision["draft"]["hash"]) == 64
        listed = gql(c, "{ memories { nodes { id } } reviewInbox { id } }")
        assert listed == {"memories": {"nodes": []}, "reviewInbox": []}


ENTITY = """
query($id: ID!) {
  entity(id: $id) {
    name
    types { iri label ancestors { iri } }
    relations { predicate direction inferred other { id name } }
    memories { title }
  }
}"""


def test_entity_types_with_ancestors_and_relations_asserted_and_inferred(server: ApiServer) -> None:
    with server.client("g-entity") as c:
        sibling(c, "e1", "Grace")
        found = gql(c, '{ entities(name: "grace") { total nodes { id name } } }')["entities"]
        assert found["total"] == 1
        [grace] = found["nodes"]
        entity = gql(c, ENTITY, id=grace["id"])["entity"]
        [person] = entity["types"]
        assert person["iri"] == "https://schema.org/Person" and person["label"] == "person"
        assert "http://xmlns.com/foaf/0.1/Agent" in {a["iri"] for a in person["ancestors"]}
        relations = {(r["direction"], r["inferred"]) for r in entity["relations"]}
        # the user's sibling fact comes in; being symmetric, it is also inferred going out
        assert relations == {("IN", False), ("OUT", True)}
        assert {r["predicate"] for r in entity["relations"]} == {"https://schema.org/sibling"}
        assert entity["memories"] == [{"title": "Sister Grace"}]


ENTITY_TYPES = "{ entities(first: 10) { nodes { name types { label ancestors { iri label } } } } }"


def test_entity_types_list_each_ancestor_once(server: ApiServer) -> None:
    """#28: schema:Person is foaf:Person and sits under rc:Person, kko:Persons, foaf:Agent,
    rc:Agent-Generic and kko:Agents; its ancestors read "person, person, persons, agent,
    agent generic, agents" until each label was listed once, by its nearest term."""
    with server.client("g-types") as c:
        sibling(c, "t1", "Grace")
        nodes = gql(c, ENTITY_TYPES)["entities"]["nodes"]
        [grace] = [n for n in nodes if n["name"] == "Grace"]
        [person] = grace["types"]
        assert person["label"] == "person"
        assert person["ancestors"] == [
            {"iri": "http://xmlns.com/foaf/0.1/Agent", "label": "agent"},
            {"iri": "https://schema.org/Thing", "label": "thing"},
        ]


def test_lifecycle_review_and_revert_through_mutations(server: ApiServer) -> None:
    with server.client("g-life") as c:
        memory = sibling(c, "l1", "Hedy")["memoryId"]
        pinned = gql(c, MANAGE, id=memory, action="PIN")["manageMemory"]
        assert pinned["__typename"] == "Managed" and pinned["pinned"] is True
        archived = gql(c, MANAGE, id=memory, action="ARCHIVE")["manageMemory"]
        assert archived["status"] == "archived"
        again = gql(c, MANAGE, id=memory, action="ARCHIVE")["manageMemory"]
        assert again["__typename"] == "Conflict" and again["message"]
        reverted = gql(c, MANAGE, id=memory, action="REVERT")["manageMemory"]
        assert reverted["status"] == "active"
        feed = gql(c, "{ decisions(first: 10) { action target revertedBy } }")["decisions"]
        assert [d["action"] for d in feed][:3] == ["revert", "archive", "pin"]
        assert feed[1]["revertedBy"] is not None
        inbox = gql(c, "{ reviewInbox { id } }")["reviewInbox"]
        assert inbox == []
        refused = gql(c, "mutation($id: ID!) { approveMemory(id: $id) { __typename } }", id=memory)
        assert refused["approveMemory"]["__typename"] == "Conflict"  # not waiting for review


def test_search_context_cite_and_outcome(server: ApiServer) -> None:
    with server.client("g-search") as c:
        memory = sibling(c, "s1", "Katherine")["memoryId"]
        query = """query($q: String!) { search(query: $q, filters: {kinds: ["semantic"]}) {
            ... on SearchResults { hits { id kind memory { title } } }
            ... on InputError { message field } } }"""
        hits = gql(c, query, q="Katherine")["search"]["hits"]
        assert [h["id"] for h in hits] == [memory]
        assert hits[0]["memory"] == {"title": "Sister Katherine"}
        packet = gql(
            c,
            """{ context(task: "call my sister Katherine", intent: ANSWER) {
                ... on ContextPacket { intent facts { id memory { status } } } } }""",
        )["context"]
        assert packet["intent"] == "answer" and [f["id"] for f in packet["facts"]] == [memory]
        cited = gql(
            c, "mutation($id: ID!) { cite(id: $id) { ... on Cited { useCount } } }", id=memory
        )
        assert cited["cite"] == {"useCount": 1}
        outcome = """mutation($ids: [ID!]!) { recordOutcome(items: $ids, verdict: OUTDATED) {
            __typename } }"""
        assert gql(c, outcome, ids=[memory])["recordOutcome"]["__typename"] == "OutcomeRecorded"
        assert gql(c, MEMORY, id=memory)["memory"]["status"] == "OUTDATED"


def test_remember_terms_and_consolidation(server: ApiServer) -> None:
    with server.client("g-note") as c:
        note = gql(
            c,
            """mutation { remember(text: "prefers green tea", chat: "n1") {
                ... on Remembered { id source { text type } } } }""",
        )["remember"]
        assert note["source"] == {"text": "prefers green tea", "type": "shortNote"}
        terms = gql(c, '{ terms(query: "allergic to", limit: 3) { iri kind } }')["terms"]
        assert terms[0] == {"iri": str(KGM.allergicTo), "kind": "property"}
        status = gql(c, "{ consolidation { model waitingSources passes { id } } }")
        assert status["consolidation"]["model"] is None


# -- expected failures -------------------------------------------------------------------


def test_bad_input_is_a_union_error_naming_the_field_and_stores_nothing(server: ApiServer) -> None:
    with server.client("g-bad") as c:
        before = server.snapshot()
        empty = gql(c, 'mutation { remember(text: "  ") { ... on InputError { message field } } }')
        assert empty["remember"]["field"] == "text"
        draft = {
            "kind": "SEMANTIC",
            "title": "x",
            "claims": [{"subject": "I", "predicate": "schema:sibling"}],
        }
        bad = gql(c, DRAFT, drafts=[draft])["draftMemories"]
        assert bad["__typename"] == "InputError" and bad["field"].startswith("drafts[0].")
        turn = {"chat": "b1", "turn": -1, "role": "user", "text": "hi"}
        refused = gql(c, INGEST, messages=[turn])["ingestMessages"]
        assert refused["__typename"] == "InputError" and refused["field"] == "messages[0].turn"
        searched = gql(c, '{ search(query: "x", k: 1000) { ... on InputError { field } } }')
        assert searched["search"] == {"field": "k"}
        assert server.snapshot() == before
        # a GraphQL type error is GraphQL's own error, with its message
        assert any(
            "String" in m for m in errors(c, "mutation { remember(text: 5) { __typename } }")
        )


# -- tenant isolation --------------------------------------------------------------------


def test_another_users_ids_give_null_or_not_found(server: ApiServer) -> None:
    with server.client("g-bob") as bob:
        memory = sibling(bob, "t1", "Lise")["memoryId"]
        entity = gql(bob, '{ entities(name: "lise") { nodes { id } } }')
        [lise] = entity["entities"]["nodes"]
    with server.client("g-alice") as alice:
        before = server.snapshot()
        assert gql(alice, MEMORY, id=memory)["memory"] is None
        assert gql(alice, ENTITY, id=lise["id"])["entity"] is None
        assert gql(alice, ENTITY, id=lise["id"].rsplit("/", 1)[1])["entity"] is None
        for action in ("PIN", "ARCHIVE", "REVERT"):
            out = gql(alice, MANAGE, id=memory, action=action)["manageMemory"]
            assert out["__typename"] == "NotFound", out
        cite = "mutation($id: ID!) { cite(id: $id) { __typename } }"
        assert gql(alice, cite, id=memory)["cite"]["__typename"] == "NotFound"
        hits = gql(alice, '{ search(query: "Lise") { ... on SearchResults { hits { id } } } }')
        assert hits["search"]["hits"] == []
        assert gql(alice, "{ entities { total } decisions { id } }") == {
            "entities": {"total": 0},
            "decisions": [],
        }
        assert server.snapshot() == before


# -- limits ------------------------------------------------------------------------------


def test_depth_alias_and_token_limits(server: ApiServer) -> None:
    with server.client("g-limits") as c:
        deep = "{ entities { nodes { relations { other { relations { other { relations { other {"
        deep += " relations { other { name } } } } } } } } } } }"
        assert any("exceeds maximum operation depth" in m for m in errors(c, deep))
        aliases = "{ " + " ".join(f"a{i}: me {{ id }}" for i in range(30)) + " }"
        assert any("aliases" in m for m in errors(c, aliases))
        tokens = "{ me { " + " ".join(["id"] * 2100) + " } }"
        assert any("token" in m.lower() for m in errors(c, tokens))
        assert gql(c, "{ a: me { id } b: me { id } }")["a"] == {"id": "g-limits"}
