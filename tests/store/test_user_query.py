"""A user's own query: its dataset is the user's standing graphs and the catalogue, narrowed by
FROM or the protocol's graph parameters only; it runs bounded in time and size."""

from __future__ import annotations

import threading
import time

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import Forbidden, QueryRefused, QueryTimeout, ResultLimitExceeded
from kgmem.store import (
    ACCOUNTS_GRAPH,
    AskResult,
    Changeset,
    Dataset,
    DatasetRequest,
    OxigraphStore,
    Quad,
    SelectResult,
    UserGraphs,
    UserQueries,
    catalogue_graph,
    dataset_clause,
    readable_by,
    shapes_graph,
    user_dataset,
)
from kgmem.vocab import KGM

ALICE, BOB = UserGraphs("alice"), UserGraphs("bob")
CATALOGUE = catalogue_graph("kgmem")
# ~8M solutions counted: well over a second on this machine, yet it ends on its own
_VALUES = " ".join(f"VALUES ?v{i} {{ {' '.join(map(str, range(200)))} }}" for i in range(3))
SLOW = f"SELECT (COUNT(*) AS ?n) WHERE {{ {_VALUES} }}"


def _title(graph: URIRef, text: str) -> Quad:
    return Quad(URIRef(f"urn:x:{text}"), KGM.title, Literal(text), graph)


@pytest.fixture
def seeded(store: OxigraphStore) -> OxigraphStore:
    store.commit(
        Changeset.of(
            [
                _title(ALICE.kg, "alice-kg"),
                _title(ALICE.ops, "alice-ops"),
                _title(ALICE.outbox, "alice-outbox"),
                _title(ALICE.proposal("p1"), "alice-proposal"),
                _title(BOB.kg, "bob-kg"),
                _title(CATALOGUE, "catalogue"),
                _title(shapes_graph("core"), "shapes"),
                _title(ACCOUNTS_GRAPH, "accounts"),
            ]
        )
    )
    return store


def _titles(queries: UserQueries, text: str, requested: DatasetRequest | None = None) -> set[str]:
    result = queries.run("alice", "PREFIX kgm: <https://w3id.org/kgmem/ns#> " + text, requested)
    assert isinstance(result, SelectResult)
    return {str(row["t"]) for row in result.rows}


def test_readable_by_is_own_standing_graphs_and_the_catalogue() -> None:
    assert all(readable_by("alice", g) for g in ALICE.standing)
    assert readable_by("alice", CATALOGUE)
    for graph in (
        *BOB.standing,
        ALICE.outbox,
        ALICE.proposal("p1"),
        shapes_graph("core"),
        ACCOUNTS_GRAPH,
        URIRef("http://example.org/g"),
        URIRef("urn:kgmem:user:alice:kg:extra"),
    ):
        assert not readable_by("alice", graph), graph


def test_user_dataset_defaults_to_everything_readable() -> None:
    installed = [CATALOGUE, BOB.kg, ALICE.kg, ACCOUNTS_GRAPH, shapes_graph("core")]
    dataset = user_dataset("alice", installed)
    assert dataset.default == dataset.named == (*ALICE.standing, CATALOGUE)


def test_user_dataset_narrows_and_the_protocol_wins_over_from() -> None:
    declared = DatasetRequest(default=(ALICE.kg,))
    assert user_dataset("alice", [], declared=declared) == Dataset(default=(ALICE.kg,), named=())
    requested = DatasetRequest(named=(ALICE.ops,))
    assert user_dataset("alice", [], requested=requested, declared=declared) == Dataset(
        default=(), named=(ALICE.ops,)
    )


@pytest.mark.parametrize("graph", [BOB.kg, ALICE.outbox, ALICE.proposal("p1"), ACCOUNTS_GRAPH])
def test_user_dataset_naming_an_unreadable_graph_is_forbidden(graph: URIRef) -> None:
    for request in (DatasetRequest(default=(graph,)), DatasetRequest(named=(ALICE.kg, graph))):
        with pytest.raises(Forbidden, match=str(graph)):
            user_dataset("alice", [graph], requested=request)
        with pytest.raises(Forbidden):
            user_dataset("alice", [graph], declared=request)


def test_dataset_clause_reads_from_and_from_named() -> None:
    text = """
        BASE <http://example.org/base/>
        PREFIX u: <urn:kgmem:user:>
        # FROM <urn:in:a:comment>
        CONSTRUCT { ?s ?p "FROM <urn:in:a:string>" }
        FROM u:alice:kg
        FROM NAMED <urn:kgmem:user:alice:ops>
        FROM<relative>
        FROM kgm:vocabulary
        WHERE { ?s ?p ?o }
    """
    clause = dataset_clause(text)
    assert clause.default == (
        ALICE.kg,
        URIRef("http://example.org/base/relative"),
        URIRef(f"{KGM}vocabulary"),
    )
    assert clause.named == (ALICE.ops,)
    assert not dataset_clause("SELECT * WHERE { ?from ?p ?o }")


def test_run_reads_own_graphs_and_catalogue_only(seeded: OxigraphStore) -> None:
    queries = UserQueries(seeded, limit=100, timeout=30)
    everything = "SELECT ?t WHERE { { ?m kgm:title ?t } UNION { GRAPH ?g { ?m kgm:title ?t } } }"
    assert _titles(queries, everything) == {"alice-kg", "alice-ops", "catalogue"}
    assert _titles(queries, f"SELECT ?t FROM <{ALICE.kg}> WHERE {{ ?m kgm:title ?t }}") == {
        "alice-kg"
    }
    narrowed = DatasetRequest(default=(ALICE.ops,))
    assert _titles(queries, "SELECT ?t WHERE { ?m kgm:title ?t }", narrowed) == {"alice-ops"}
    for graph in (BOB.kg, ALICE.outbox, ALICE.proposal("p1"), ACCOUNTS_GRAPH):
        inside = f"SELECT ?t WHERE {{ GRAPH <{graph}> {{ ?m kgm:title ?t }} }}"
        assert _titles(queries, inside) == set()
        with pytest.raises(Forbidden):
            _titles(queries, f"SELECT ?t FROM <{graph}> WHERE {{ ?m kgm:title ?t }}")
        with pytest.raises(Forbidden):
            _titles(queries, f"SELECT ?t FROM NAMED <{graph}> WHERE {{ GRAPH ?g {{ ?m ?p ?t }} }}")


def test_run_caps_the_result_and_refuses_updates(seeded: OxigraphStore) -> None:
    queries = UserQueries(seeded, limit=2, timeout=30)
    with pytest.raises(ResultLimitExceeded, match="more than 2"):
        queries.run("alice", "SELECT * WHERE { ?s ?p ?o }")
    with pytest.raises(QueryRefused):
        queries.run("alice", f"DROP GRAPH <{ALICE.kg}>")
    assert seeded.count(ALICE.kg) == 1


def test_run_times_out_and_a_slot_frees_when_the_query_ends(store: OxigraphStore) -> None:
    queries = UserQueries(store, limit=10, timeout=0.05, slots=1)
    started = time.monotonic()
    with pytest.raises(QueryTimeout, match=r"did not finish within 0\.05 s") as slow:
        queries.run("alice", SLOW)
    assert time.monotonic() - started < 0.5  # the caller is answered, not kept waiting
    assert not slow.value.waited
    # the abandoned query still holds the only slot: the next one waits and says so
    with pytest.raises(QueryTimeout, match="free query slot") as waiting:
        queries.run("alice", "ASK { ?s ?p ?o }")
    assert waiting.value.waited
    _wait_for_idle_workers()
    queries.timeout = 30
    assert queries.run("alice", "ASK { }") == AskResult(True)


def _wait_for_idle_workers() -> None:
    deadline = time.monotonic() + 60
    while any(t.name == "kgmem-user-query" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "an abandoned query never ended"
        time.sleep(0.05)
