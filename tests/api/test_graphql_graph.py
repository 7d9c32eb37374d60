"""GraphQL ``graph`` (what the memory browser draws) against a real uvicorn: the caller's
entities only, branches from the ontology, facts asserted and inferred, pages linked by
shared memories, and ``first`` keeping the entities most written about."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.api.support import ApiServer, api_server
from tests.browser.world import BOB_CHATS, MAYA_CHATS, bob_drafts, gql, maya_drafts, named, write

GRAPH = """query($first: Int!) { graph(first: $first) { total truncated
  nodes { id name branch branchLabel types memories hasPage }
  predicates { iri label } edges { source target predicate inferred }
  links { source target shared } } }"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "graph") as s:
        with s.client("maya") as c:
            write(c, MAYA_CHATS, maya_drafts())
        with s.client("bob") as c:
            write(c, BOB_CHATS, bob_drafts())
        assert s.app.state.services.settle()
        yield s


def test_graph_is_the_callers_with_branches_facts_and_page_links(server: ApiServer) -> None:
    with server.client("maya") as c:
        g = named(gql(c, GRAPH, first=5000)["graph"])
    names = {n["name"]: n for n in g["nodes"]}
    assert {"Ada", "Ravi Shah", "Lumen Labs", "Berlin", "Lisbon", "Porto"} <= set(names)
    assert not {"Quarry Systems", "Oslo", "bob"} & set(names)
    assert all("/user/maya/" in n["id"] for n in g["nodes"])
    assert g["total"] == len(g["nodes"]) and not g["truncated"]
    # top-level classes: people and places apart, cities under one branch
    assert names["Ada"]["branch"] == names["Ravi Shah"]["branch"]
    assert names["Berlin"]["branch"] == names["Porto"]["branch"] == names["Lisbon"]["branch"]
    assert names["Berlin"]["branchLabel"] == "place"
    assert names["Ada"]["branch"] != names["Berlin"]["branch"]
    assert "person" in names["Ada"]["types"]
    by_id = {n["id"]: n["name"] for n in g["nodes"]}
    facts = {
        (by_id[e["source"]], e["label"], by_id[e["target"]], e["inferred"]) for e in g["edges"]
    }
    assert ("Ada", "home location", "Porto", False) in facts
    assert ("Ada", "home location", "Lisbon", False) not in facts  # superseded: not a fact now
    assert ("Ada", "works for", "Tidewater Books", False) in facts
    sibling = {f for f in facts if f[1] == "sibling"}
    assert {f[3] for f in sibling} == {False, True}  # asserted one way, inferred the other
    assert {p["label"] for p in gql_predicates(server)} == {e["label"] for e in g["edges"]}
    assert g["links"] and all(by_id[link["source"]] and link["shared"] >= 1 for link in g["links"])
    paged = {n["id"] for n in g["nodes"] if n["hasPage"]}
    assert all(link["source"] in paged and link["target"] in paged for link in g["links"])
    assert names["Ada"]["memories"] >= 3


def gql_predicates(server: ApiServer) -> list[dict[str, str]]:
    with server.client("maya") as c:
        found: list[dict[str, str]] = gql(c, GRAPH, first=5000)["graph"]["predicates"]
    return found


def test_first_keeps_the_entities_most_written_about(server: ApiServer) -> None:
    with server.client("maya") as c:
        whole = named(gql(c, GRAPH, first=5000)["graph"])
        top = named(gql(c, GRAPH, first=3)["graph"])
        refused = c.post("/graphql", json={"query": GRAPH, "variables": {"first": 0}}).json()
    assert top["truncated"] and top["total"] == whole["total"] and len(top["nodes"]) == 3
    most = sorted((n["memories"] for n in whole["nodes"]), reverse=True)[:3]
    assert sorted((n["memories"] for n in top["nodes"]), reverse=True) == most
    kept = {n["id"] for n in top["nodes"]}
    assert all(e["source"] in kept and e["target"] in kept for e in top["edges"] + top["links"])
    assert "first must be at least 1" in refused["errors"][0]["message"]
