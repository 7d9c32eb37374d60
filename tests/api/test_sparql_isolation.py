"""Tenant isolation on ``/sparql``: every way alice could name bob's data returns nothing or
403, never data; proposals, the outbox and the accounts stay invisible to everyone."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from rdflib import Graph, URIRef
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, POST, POSTDIRECTLY, SPARQLWrapper

from kgmem.store import ACCOUNTS_GRAPH, UserGraphs
from tests.api.test_sparql import World, running_world

ALICE, BOB = UserGraphs("alice"), UserGraphs("bob")
BOB_NODE = URIRef(BOB.node_base + "memory/m1")
# bob's graphs that exist in the store (a marker triple in each), and alice's own hidden ones
BOB_GRAPHS = (*BOB.standing, BOB.proposal("p1"), BOB.outbox)
HIDDEN = (*BOB_GRAPHS, ALICE.outbox, ALICE.proposal("p1"), ACCOUNTS_GRAPH)
EVERYTHING = "SELECT * WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
ALL_MIME = "application/sparql-results+json"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("home")) as running:
        yield running


def _leaks(text: str) -> list[str]:
    """What in an answer body is another tenant's data or a secret."""
    markers = ["BOB-SECRET", BOB.node_base, "secretHash", "keyHash", "urn:kgmem:user:bob:"]
    return [m for m in markers if m in text]


def _assert_nothing_or_403(answer: httpx.Response) -> None:
    assert answer.status_code in (200, 403), answer.text
    if answer.status_code == 403:
        assert answer.json()["error"]["code"] == "forbidden"
        return
    assert _leaks(answer.text) == [], answer.text
    body = answer.json()
    assert body.get("boolean", False) is False
    assert body.get("results", {}).get("bindings", []) == []


def test_control_alice_sees_her_own_data_and_bob_his(world: World) -> None:
    mine = world.get(world.alice, query=EVERYTHING)
    assert mine.status_code == 200 and ALICE.node_base in mine.text
    assert _leaks(mine.text) == []
    his = world.get(world.bob, query=EVERYTHING)
    assert "BOB-SECRET" in his.text and ALICE.node_base not in his.text
    # bob's proposal and outbox are his machinery: not even he reads them here
    assert f"in {BOB.proposal('p1')}" not in his.text and f"in {BOB.outbox}" not in his.text
    assert f"in {BOB.kg}" in his.text


def test_an_admin_reads_no_one_else_either(world: World) -> None:
    answer = world.get(world.admin, query=EVERYTHING)
    assert answer.status_code == 200
    assert _leaks(answer.text) == [] and ALICE.node_base not in answer.text


@pytest.mark.parametrize("graph", HIDDEN, ids=str)
def test_graph_iri_in_the_query_body_matches_nothing(world: World, graph: URIRef) -> None:
    for query in (
        f"SELECT * WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}",
        f"ASK {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}",
        f"SELECT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }} FILTER(?g = <{graph}>) }}",
        f"SELECT * WHERE {{ VALUES ?g {{ <{graph}> }} GRAPH ?g {{ ?s ?p ?o }} }}",
    ):
        _assert_nothing_or_403(world.get(world.alice, query=query, accept=ALL_MIME))


@pytest.mark.parametrize("graph", HIDDEN, ids=str)
def test_from_and_protocol_graphs_of_others_are_403(world: World, graph: URIRef) -> None:
    body = "WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }"
    attempts = [
        world.get(world.alice, query=f"SELECT * FROM <{graph}> {body}"),
        world.get(world.alice, query=f"SELECT * FROM NAMED <{graph}> {body}"),
        world.get(world.alice, query=f"SELECT * FROM <{ALICE.kg}> FROM <{graph}> {body}"),
        world.get(world.alice, query=f"PREFIX g: <{graph}> SELECT * FROM g: {body}"),
        world.get(world.alice, query=f"BASE <{graph}> SELECT * FROM <> {body}"),
        world.get(world.alice, query=f"SELECT * {body}", **{"default-graph-uri": str(graph)}),
        world.get(world.alice, query=f"SELECT * {body}", **{"named-graph-uri": str(graph)}),
        # the protocol's graphs win over FROM, yet a FROM naming others is still refused
        world.get(
            world.alice,
            query=f"SELECT * FROM <{graph}> {body}",
            **{"default-graph-uri": str(ALICE.kg)},
        ),
        world.post(
            world.alice,
            data={"query": f"SELECT * {body}", "named-graph-uri": str(graph)},
        ),
        world.post(
            world.alice,
            content=f"DESCRIBE <{BOB_NODE}> FROM <{graph}>",
            headers={"Content-Type": "application/sparql-query"},
        ),
    ]
    for answer in attempts:
        assert answer.status_code == 403, answer.text
        error = answer.json()["error"]
        assert error["code"] == "forbidden" and "not readable here" in error["message"]
        assert "BOB-SECRET" not in answer.text


def test_guessed_node_iris_of_another_user_answer_nothing(world: World) -> None:
    prefix = BOB.node_base
    for query in (
        f"SELECT * WHERE {{ <{BOB_NODE}> ?p ?o }}",
        f"SELECT * WHERE {{ GRAPH ?g {{ <{BOB_NODE}> ?p ?o }} }}",
        f"SELECT * WHERE {{ ?s ?p <{BOB_NODE}> }}",
        f"ASK {{ <{BOB_NODE}> ?p ?o }}",
        f'SELECT * WHERE {{ ?s ?p ?o FILTER(STRSTARTS(STR(?s), "{prefix}")) }}',
        'SELECT * WHERE { ?s ?p ?o FILTER(CONTAINS(STR(?o), "BOB-SECRET")) }',
        "SELECT * WHERE { ?s <https://w3id.org/kgmem/ns#secretHash> ?o }",
    ):
        _assert_nothing_or_403(world.get(world.alice, query=query, accept=ALL_MIME))
    for query in (f"DESCRIBE <{BOB_NODE}>", f"CONSTRUCT WHERE {{ <{BOB_NODE}> ?p ?o }}"):
        answer = world.get(world.alice, query=query, accept="application/n-triples")
        assert answer.status_code == 200 and answer.content.strip() == b""


def test_graph_enumeration_lists_only_own_graphs_and_catalogue(world: World) -> None:
    answer = world.get(world.alice, query="SELECT DISTINCT ?g WHERE { GRAPH ?g { } }")
    graphs = {row["g"]["value"] for row in answer.json()["results"]["bindings"]}
    catalogue = {g for g in graphs if g.startswith("urn:kgmem:catalogue:")}
    assert catalogue and graphs == {str(g) for g in ALICE.standing} | catalogue


def test_sparqlwrapper_cannot_reach_bob(world: World) -> None:
    client = SPARQLWrapper(world.endpoint)
    client.addCustomHttpHeader("Authorization", f"Bearer {world.alice}")
    client.setReturnFormat(JSON)
    client.setMethod(POST)
    client.setRequestMethod(POSTDIRECTLY)
    client.setQuery(f"SELECT * WHERE {{ GRAPH <{BOB.kg}> {{ ?s ?p ?o }} }}")
    assert client.queryAndConvert()["results"]["bindings"] == []
    client.addDefaultGraph(str(BOB.kg))  # sent as default-graph-uri
    with pytest.raises(Exception, match="403"):  # urllib's HTTPError: SPARQLWrapper re-raises
        client.query()


def test_sparqlstore_cannot_reach_bob(world: World) -> None:
    headers = {"Authorization": f"Bearer {world.alice}"}
    store = SPARQLStore(world.endpoint, returnFormat="json", headers=headers)
    assert not {str(g) for g in store.contexts()} & {str(g) for g in HIDDEN}
    everything = Graph(store=store)
    assert not [t for t in everything.triples((BOB_NODE, None, None))]
    with pytest.raises(ValueError):  # bob's graph as default-graph-uri: a 403
        list(Graph(store=store, identifier=BOB.kg).triples((None, None, None)))


def test_bob_cannot_reach_alice_either(world: World) -> None:
    hers = world.get(world.bob, query=f"SELECT * WHERE {{ GRAPH <{ALICE.kg}> {{ ?s ?p ?o }} }}")
    assert hers.status_code == 200 and hers.json()["results"]["bindings"] == []
    named = world.get(world.bob, query=EVERYTHING, **{"named-graph-uri": str(ALICE.kg)})
    assert named.status_code == 403
    assert ALICE.node_base not in world.get(world.bob, query=EVERYTHING).text
