"""Regression (found by the hostile suite): a user query the store cannot evaluate (a call of
a function Oxigraph does not know, ``<urn:f>(?x)``) answered 500, and a SERVICE nested in a
SERVICE overflowed rdflib's parser (a RecursionError: 500). Both are the query's fault:
400 naming ``query``, in the worker processes (a store on disk) and on threads (in
memory), and nothing connects."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgmem.errors import QueryRefused
from kgmem.store import OxigraphStore, user_dataset
from tests.api.test_sparql import World, running_world
from tests.regressions.tripwire import tripwire


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("home")) as running:
        yield running


UNKNOWN_FUNCTIONS = [
    "SELECT * WHERE { BIND(<urn:f>(1) AS ?x) }",
    "SELECT (<urn:f>(?s) AS ?x) WHERE { ?s ?p ?o }",
    "SELECT * WHERE { ?s ?p ?o FILTER(xsd:nothing(?o)) }",
]


@pytest.mark.parametrize("query", UNKNOWN_FUNCTIONS)
def test_an_unknown_function_is_a_400(world: World, query: str) -> None:
    answer = world.get(world.alice, query=query)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["field"] == "query"
    assert "cannot be evaluated" in answer.json()["error"]["message"]


@pytest.mark.parametrize("query", UNKNOWN_FUNCTIONS)
def test_an_unknown_function_is_refused_on_threads_too(query: str) -> None:
    store = OxigraphStore()
    with pytest.raises(QueryRefused, match="cannot be evaluated"):
        store.query_text(query, dataset=user_dataset("alice", []))


def test_a_service_nested_in_a_service_is_refused_and_nothing_connects(world: World) -> None:
    with tripwire() as wire:
        query = (
            f"SELECT * WHERE {{ SERVICE <{wire.url}> {{ SERVICE <{wire.url}> {{ ?s ?p ?o }} }} }}"
        )
        answer = world.get(world.alice, query=query)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["field"] == "query"
    assert wire.connections == []
