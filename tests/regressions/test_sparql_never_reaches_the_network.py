"""Regression: an escaped IRI once hid a SERVICE call from a keyword scan, and the server
POSTed to the URL a user named; an escaped graph name in FROM read as the caller's dataset."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.api.test_sparql import World, running_world
from tests.regressions.tripwire import tripwire


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("home")) as running:
        yield running


@pytest.mark.parametrize(
    "template",
    [
        r"SELECT * WHERE {{ OPTIONAL {{ <urn:x\u0041#> ?p0 ?o0 }} "
        "SERVICE <{url}> {{ ?x ?p ?o }} }}",
        r"SELECT * WHERE {{ \u0053ERVICE <{url}> {{ ?x ?p ?o }} }}",
        "SELECT * WHERE {{ ?s <urn:p#> ?o . SERVICE SILENT <{url}> {{ ?x ?y ?z }} }}",
        "SELECT * WHERE {{ {{ SELECT * WHERE {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }} }}",
        "ASK {{ FILTER EXISTS {{ SERVICE <{url}> {{ ?a ?b ?c }} }} }}",
        "SELECT * WHERE {{ BIND(<{url}> AS ?e) SERVICE ?e {{ ?a ?b ?c }} }}",
    ],
)
def test_service_in_any_spelling_is_refused_and_nothing_connects(
    world: World, template: str
) -> None:
    with tripwire() as wire:
        answer = world.post(world.alice, data={"query": template.format(url=wire.url)})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["field"] == "query"
    assert wire.connections == []


def test_an_escaped_graph_name_in_from_is_the_graph_it_spells(world: World) -> None:
    answer = world.get(
        world.alice, query=r"SELECT * FROM <urn:kgmem:user:\u0062ob:kg> WHERE { ?s ?p ?o }"
    )
    assert answer.status_code == 403, answer.text
    mine = world.get(
        world.alice, query=r"SELECT * FROM <urn:kgmem:user:\u0061lice:kg> WHERE { ?s ?p ?o }"
    )
    assert mine.status_code == 200, mine.text
