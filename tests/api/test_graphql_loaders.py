"""Dataloaders: a page of entities with their types, attributes, relations and pages costs
the same number of store queries for 10 entities as for 50, and one entity read by id reads
only its own rows (keys bound as a list), never the user's whole graph."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from rdflib import Literal

from kgmem.api import create_app
from kgmem.config import Settings
from kgmem.memory import NodeKind, node_iri
from kgmem.store import Changeset, Quad, UserGraphs
from kgmem.vocab import KGM, RDF, SDO
from tests.conftest import serve_app

PAGE = """
query($first: Int!) {
  entities(first: $first) {
    nodes {
      id name aliases
      types { iri ancestors { iri } }
      attributes { property value }
      relations { predicate direction inferred other { name types { iri } } }
      page { path }
    }
  }
}"""


def people(uid: str, count: int) -> list[Quad]:
    """``count`` people, each the sibling of the next, with a birth year."""
    graph, quads = UserGraphs(uid).kg, []
    nodes = [node_iri(uid, NodeKind.ENTITY, f"p{i:03d}") for i in range(count)]
    for i, node in enumerate(nodes):
        name = f"Person {i:03d}"
        quads += [
            Quad(node, RDF.type, KGM.Entity, graph),
            Quad(node, RDF.type, SDO.Person, graph),
            Quad(node, KGM.name, Literal(name), graph),
            Quad(node, KGM.nameKey, Literal(name.lower()), graph),
            Quad(node, SDO.birthDate, Literal(str(1900 + i)), graph),
        ]
        if i + 1 < count:
            quads.append(Quad(node, SDO.sibling, nodes[i + 1], graph))
    return quads


@pytest.fixture
def counted(settings: Settings) -> Iterator[tuple[httpx.Client, list[str]]]:
    """A server whose store counts its SELECT queries, and a client of user ``crowd``."""
    app = create_app(settings)
    store = app.state.services.store
    store.commit(Changeset.of(add=people("crowd", 60)))
    token = app.state.accounts.add("crowd").token
    calls: list[str] = []
    with (
        serve_app(app, settings) as base,
        httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as client,
    ):
        # count from here: start-up (index warm-up) and the feed's drain are done
        app.state.services.feed.drain("crowd")
        select = store.select

        def counting(query: Any, *args: Any, **kwargs: Any) -> Any:
            bindings = args[0] if args else kwargs.get("bindings") or {}
            keyed = " (keyed)" if kwargs.get("values") is not None else ""
            if not keyed and set(bindings) & ONE_KEY:
                keyed = " (one key)"  # a query Oxigraph scans with VALUES, bound per key
            calls.append(str(getattr(query, "name", query)) + keyed)
            return select(query, *args, **kwargs)

        store.select = counting
        yield client, calls


def queries_for(client: httpx.Client, calls: list[str], first: int) -> tuple[int, int, Any]:
    """(queries per batch of keys, queries bound to one key each, the page's nodes)."""
    calls.clear()
    answer = client.post("/graphql", json={"query": PAGE, "variables": {"first": first}})
    assert answer.status_code == 200 and "errors" not in answer.json(), answer.text
    single = sum(c.endswith("(one key)") for c in calls)
    return len(calls) - single, single, answer.json()["data"]["entities"]["nodes"]


def test_a_page_of_50_entities_costs_as_many_store_queries_as_a_page_of_10(
    counted: tuple[httpx.Client, list[str]],
) -> None:
    client, calls = counted
    queries_for(client, calls, 1)  # the user's effective ontology is built and cached once
    ten, ten_single, small = queries_for(client, calls, 10)
    fifty, fifty_single, nodes = queries_for(client, calls, 50)
    assert len(small) == 10 and len(nodes) == 50
    assert fifty == ten, calls
    assert ten <= 8, calls
    # the facts at an entity, by subject and by object: one query per key (with a VALUES
    # block Oxigraph scans every fact: 4.6 s for 31 keys at 10k memories)
    assert (ten_single, fifty_single) == (2 * 10, 2 * 50), calls
    second = nodes[1]
    assert second["attributes"] == [{"property": str(SDO.birthDate), "value": "1901"}]
    seen = {(r["direction"], r["inferred"], r["other"]["name"]) for r in second["relations"]}
    assert seen == {
        ("OUT", False, "Person 002"),
        ("IN", False, "Person 000"),
        ("OUT", True, "Person 000"),  # sibling is symmetric
        ("IN", True, "Person 002"),
    }
    assert {t["iri"] for t in second["types"]} == {str(SDO.Person)}


ONE_KEY = {"subject", "object", "page"}  # the node variables of index/facts_at, index/page_of

ONE = """
query($id: ID!) {
  entity(id: $id) {
    name
    attributes { property value }
    relations { direction inferred other { name } }
    page { path }
    memories { title }
  }
}"""


def test_one_entity_by_id_reads_only_its_own_rows(
    counted: tuple[httpx.Client, list[str]],
) -> None:
    client, calls = counted
    client.post("/graphql", json={"query": PAGE, "variables": {"first": 1}})  # ontology cached
    calls.clear()
    entity = str(node_iri("crowd", NodeKind.ENTITY, "p007"))
    answer = client.post("/graphql", json={"query": ONE, "variables": {"id": entity}})
    assert answer.status_code == 200 and "errors" not in answer.json(), answer.text
    found = answer.json()["data"]["entity"]
    assert found["name"] == "Person 007"
    assert {r["other"]["name"] for r in found["relations"]} == {"Person 006", "Person 008"}
    whole = [c for c in calls if c.startswith(("index/", "graphql/", "pages/"))]
    own = ("(keyed)", "(one key)")
    assert whole and all(c.endswith(own) or c == "index/inverses" for c in whole), calls
