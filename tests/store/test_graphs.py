"""The named-graph scheme."""

from __future__ import annotations

import pytest
from rdflib import URIRef

from kgmem.errors import GraphNameError
from kgmem.store import GraphKind, UserGraphs, catalogue_graph, check_id, parse_graph, shapes_graph


def test_user_graphs_follow_the_design_scheme() -> None:
    graphs = UserGraphs("alice")
    assert graphs.schema == URIRef("urn:kgmem:user:alice:schema")
    assert graphs.kg == URIRef("urn:kgmem:user:alice:kg")
    assert graphs.sources == URIRef("urn:kgmem:user:alice:sources")
    assert graphs.quarantine == URIRef("urn:kgmem:user:alice:quarantine")
    assert graphs.ops == URIRef("urn:kgmem:user:alice:ops")
    assert graphs.proposal("p-7") == URIRef("urn:kgmem:user:alice:proposal:p-7")
    assert catalogue_graph("schemaorg") == URIRef("urn:kgmem:catalogue:schemaorg")
    assert shapes_graph("core") == URIRef("urn:kgmem:shapes:core")


@pytest.mark.parametrize(
    "graph",
    [
        UserGraphs("alice").kg,
        UserGraphs("a.b-c_d").ops,
        UserGraphs("alice").proposal("pass1"),
        catalogue_graph("kbpedia"),
        shapes_graph("core"),
    ],
)
def test_parse_graph_round_trips(graph: URIRef) -> None:
    parsed = parse_graph(graph)
    if parsed.uid is not None:
        assert UserGraphs(parsed.uid).owns(graph)


def test_parse_graph_fields() -> None:
    parsed = parse_graph("urn:kgmem:user:bob:proposal:x1")
    assert (parsed.kind, parsed.uid, parsed.name) == (GraphKind.PROPOSAL, "bob", "x1")
    assert parse_graph("urn:kgmem:catalogue:foaf").name == "foaf"


@pytest.mark.parametrize(
    "value",
    ["", "alice:kg", "-x", "a b", "ali/ce", "é", "x" * 129, "alice\n"],
)
def test_invalid_ids_are_refused(value: str) -> None:
    with pytest.raises(GraphNameError):
        check_id(value)
    with pytest.raises(GraphNameError):
        UserGraphs(value)


@pytest.mark.parametrize(
    "graph",
    [
        "http://example.org/g",
        "urn:kgmem:user:alice",
        "urn:kgmem:user:alice:secrets",
        "urn:kgmem:user:alice:kg:extra",
        "urn:kgmem:user:alice:proposal",
        "urn:kgmem:catalogue:",
        "urn:kgmem:shapes:a:b",
    ],
)
def test_parse_graph_refuses_outside_the_scheme(graph: str) -> None:
    with pytest.raises(GraphNameError):
        parse_graph(graph)


def test_owns_does_not_confuse_users() -> None:
    alice, bob = UserGraphs("alice"), UserGraphs("alice2")
    assert not alice.owns(bob.kg)
    assert not alice.owns(URIRef("urn:kgmem:catalogue:foaf"))
    assert not alice.owns(URIRef("http://example.org/alice"))
