"""``/sparql`` on a real uvicorn, driven by clients no one here wrote: SPARQLWrapper and
rdflib's SPARQLStore (plus httpx for what those clients cannot send)."""

from __future__ import annotations

import csv
import io
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.dom.minidom import Document

import httpx
import pyoxigraph as ox
import pytest
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.compare import isomorphic
from rdflib.namespace import RDF, XSD
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from rdflib.query import Result
from SPARQLWrapper import (
    CSV,
    GET,
    JSON,
    JSONLD,
    N3,
    POST,
    POSTDIRECTLY,
    RDFXML,
    TSV,
    TURTLE,
    URLENCODED,
    XML,
    SPARQLWrapper,
)
from SPARQLWrapper.SPARQLExceptions import QueryBadFormed, Unauthorized
from starlette.applications import Starlette

from kgmem.api import create_app
from kgmem.config import load_settings
from kgmem.store import Changeset, Quad, TripleStore, UserGraphs
from kgmem.store.ox_terms import from_ox
from kgmem.vocab import KGM
from tests.api.support import SparqlUsers
from tests.conftest import free_port, serve_app

ALICE, BOB = UserGraphs("alice"), UserGraphs("bob")
A1 = URIRef(ALICE.node_base + "memory/m1")
A2 = URIRef(ALICE.node_base + "memory/m2")
TRICKY = 'Peanuts, "allergy"\tand\nmore \\ é'
PREFIX = "PREFIX kgm: <https://w3id.org/kgmem/ns#>\n"
NOTES = (
    PREFIX + "SELECT ?m ?note ?missing WHERE { ?m kgm:note ?note OPTIONAL { ?m kgm:x ?missing } }"
)
GRAPH_QUERIES = {
    "CONSTRUCT": PREFIX + "CONSTRUCT { ?m kgm:note ?note } WHERE { ?m kgm:note ?note }",
    "DESCRIBE": PREFIX + "DESCRIBE ?m WHERE { ?m kgm:note ?note }",
}


def alice_quads() -> list[Quad]:
    blank = BNode("b1")
    return [
        Quad(A1, RDF.type, KGM.Memory, ALICE.kg),
        Quad(A1, KGM.note, Literal(TRICKY), ALICE.kg),
        Quad(A1, KGM.note, Literal("Erdnuss", lang="de"), ALICE.kg),
        Quad(A2, RDF.type, KGM.Memory, ALICE.kg),
        Quad(A2, KGM.note, Literal("0.9", datatype=XSD.decimal), ALICE.kg),
        Quad(blank, KGM.note, Literal("a blank subject"), ALICE.kg),
        Quad(A1, KGM.title, Literal("alice-ops-record"), ALICE.ops),
    ]


def bob_quads() -> list[Quad]:
    """Something in every graph of bob's, proposals and outbox included."""
    node = URIRef(BOB.node_base + "memory/m1")
    graphs = (*BOB.standing, BOB.proposal("p1"), BOB.outbox)
    return [Quad(node, KGM.note, Literal(f"BOB-SECRET in {g}"), g) for g in graphs] + [
        Quad(node, RDF.type, KGM.Memory, BOB.kg)
    ]


def seed(store: TripleStore) -> None:
    store.commit(Changeset.of([*alice_quads(), *bob_quads()]))


@dataclass(frozen=True)
class World(SparqlUsers):
    """The users of a served app whose store holds alice's and bob's data."""

    app: Starlette | None = None


@contextmanager
def running_world(home: Path, **overrides: Any) -> Iterator[World]:
    """A served app whose store holds alice's and bob's data; keys for both and the admin."""
    settings = load_settings(env={"KGMEM_HOME": str(home)}, port=free_port(), **overrides)
    app = create_app(settings)
    seed(app.state.services.store)
    admin = (settings.home / "api-key").read_text().strip()
    alice, bob = (app.state.accounts.add(uid).token for uid in ("alice", "bob"))
    with serve_app(app, settings) as url:
        yield World(url, alice, bob, admin, app=app)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with running_world(tmp_path_factory.mktemp("home")) as running:
        yield running


def wrapper(world: World, query: str, fmt: str, method: str = GET, via: str = URLENCODED) -> Any:
    client = SPARQLWrapper(world.endpoint)
    client.addCustomHttpHeader("Authorization", f"Bearer {world.alice}")
    client.setQuery(query)
    client.setReturnFormat(fmt)
    client.setMethod(method)
    client.setRequestMethod(via)
    return client


def _expected_notes() -> set[tuple[str, str]]:
    return {
        (str(A1), TRICKY),
        (str(A1), "Erdnuss"),
        (str(A2), "0.9"),
        ("_:", "a blank subject"),
    }


def _subject(value: str) -> str:
    """A blank node's label is the server's choice: compare only that it is one."""
    return value if value.startswith("http") else "_:"


def strictly_read(data: bytes, fmt: ox.QueryResultsFormat) -> list[dict[str, str]]:
    """Solutions as read by Oxigraph's parser, as plain values.

    Only this frame ever holds the pyoxigraph result, which must be freed on the thread that
    made it: a test's own frame can outlive the test in a reference cycle (rdflib's parsers
    make one) and be collected on a server thread.
    """
    solutions = ox.parse_query_results(data, fmt)
    assert isinstance(solutions, ox.QuerySolutions)
    names = [v.value for v in solutions.variables]
    rows = [{n: s[n].value for n in names if s[n] is not None} for s in solutions]
    del solutions
    return rows


# -- SELECT, ASK -------------------------------------------------------------------------

METHODS = [(GET, URLENCODED), (POST, URLENCODED), (POST, POSTDIRECTLY)]


@pytest.mark.parametrize(("method", "via"), METHODS, ids=["get", "post-form", "post-query"])
def test_select_as_sparql_json(world: World, method: str, via: str) -> None:
    body = wrapper(world, NOTES, JSON, method, via).queryAndConvert()
    assert body["head"]["vars"] == ["m", "note", "missing"]
    rows = body["results"]["bindings"]
    assert {r["m"]["type"] for r in rows} == {"uri", "bnode"}
    got = {(_subject(r["m"]["value"]), r["note"]["value"]) for r in rows}
    assert got == _expected_notes()
    assert all("missing" not in r for r in rows)  # unbound stays unbound
    by_value = {r["note"]["value"]: r["note"] for r in rows}
    assert by_value["Erdnuss"]["xml:lang"] == "de"
    assert by_value["0.9"]["datatype"] == str(XSD.decimal)
    assert "datatype" not in by_value[TRICKY]


def test_select_as_sparql_xml(world: World) -> None:
    document = wrapper(world, NOTES, XML, POST).queryAndConvert()
    assert isinstance(document, Document)
    names = [v.getAttribute("name") for v in document.getElementsByTagName("variable")]
    assert names == ["m", "note", "missing"]
    literals = {
        (e.firstChild.data if e.firstChild else "", e.getAttribute("xml:lang"))
        for e in document.getElementsByTagName("literal")
    }
    assert (TRICKY, "") in literals and ("Erdnuss", "de") in literals
    assert len(document.getElementsByTagName("bnode")) == 1


def test_select_as_csv(world: World) -> None:
    raw = wrapper(world, NOTES, CSV).queryAndConvert()
    rows = list(csv.reader(io.StringIO(raw.decode(), newline="")))
    assert rows[0] == ["m", "note", "missing"]
    assert {(_subject(m), note) for m, note, _ in rows[1:]} == _expected_notes()
    assert all(missing == "" for _, _, missing in rows[1:])


def test_select_as_tsv_reads_back_term_for_term(world: World) -> None:
    raw = wrapper(world, NOTES, TSV, POST, POSTDIRECTLY).queryAndConvert()
    parsed = Result.parse(io.BytesIO(raw), format="tsv")
    assert [str(v) for v in parsed.vars or []] == ["m", "note", "missing"]
    notes = {row[1] for row in parsed}  # type: ignore[index]
    assert notes == {
        Literal(TRICKY),
        Literal("Erdnuss", lang="de"),
        Literal("0.9", datatype=XSD.decimal),
        Literal("a blank subject"),
    }
    # a second, independent reader of the same bytes
    assert len(strictly_read(raw, ox.QueryResultsFormat.TSV)) == 4


@pytest.mark.parametrize(
    ("accept", "fmt"),
    [
        ("application/sparql-results+json", ox.QueryResultsFormat.JSON),
        ("application/sparql-results+xml", ox.QueryResultsFormat.XML),
        ("text/tab-separated-values", ox.QueryResultsFormat.TSV),
    ],  # Oxigraph reads no CSV results (lossy): test_select_as_csv reads those
)
def test_every_result_format_parses_strictly(
    world: World, accept: str, fmt: ox.QueryResultsFormat
) -> None:
    answer = world.get(world.alice, query=NOTES, accept=accept)
    assert answer.status_code == 200
    assert answer.headers["content-type"].split(";")[0] == accept
    assert answer.headers["vary"] == "Accept"
    values = {row["note"] for row in strictly_read(answer.content, fmt)}
    assert values == {TRICKY, "Erdnuss", "0.9", "a blank subject"}


@pytest.mark.parametrize(("fmt", "method"), [(JSON, GET), (XML, POST)])
def test_ask(world: World, fmt: str, method: str) -> None:
    yes = wrapper(world, PREFIX + "ASK { ?m kgm:note 'Erdnuss'@de }", fmt, method)
    no = wrapper(world, PREFIX + "ASK { ?m kgm:note 'nothing like it' }", fmt, method)
    if fmt == JSON:
        assert yes.queryAndConvert()["boolean"] is True
        assert no.queryAndConvert()["boolean"] is False
    else:
        texts = [
            c.queryAndConvert().getElementsByTagName("boolean")[0].firstChild.data
            for c in (yes, no)
        ]
        assert texts == ["true", "false"]


# -- CONSTRUCT, DESCRIBE -------------------------------------------------------------------


def _alice_note_graph(describe: bool) -> Graph:
    graph = Graph()
    for quad in alice_quads():
        # DESCRIBE tells all of a subject in the default graph: the union of alice's graphs
        if describe or (quad.graph == ALICE.kg and quad.predicate == KGM.note):
            graph.add((quad.subject, quad.predicate, quad.object))
    return graph


_READERS = {
    "text/turtle": ox.RdfFormat.TURTLE,
    "text/n3": ox.RdfFormat.N3,
    "application/n-triples": ox.RdfFormat.N_TRIPLES,
    "application/ld+json": ox.RdfFormat.JSON_LD,
    "application/json": ox.RdfFormat.JSON_LD,
    "application/rdf+xml": ox.RdfFormat.RDF_XML,
}


def parsed(data: bytes, media_type: str) -> Graph:
    """``data`` read by Oxigraph's strict parsers (rdflib's JSON-LD reader warns on use)."""
    graph = Graph()
    for quad in ox.parse(data, _READERS[media_type]):
        graph.add((from_ox(quad.subject), from_ox(quad.predicate), from_ox(quad.object)))
    return graph


@pytest.mark.parametrize("form", ["CONSTRUCT", "DESCRIBE"])
@pytest.mark.parametrize(
    ("fmt", "media_type", "parse_as"),
    [
        (TURTLE, "text/turtle", "text/turtle"),
        (N3, "text/turtle", "text/turtle"),
        (JSONLD, "application/ld+json", "application/ld+json"),
        (RDFXML, "application/rdf+xml", "application/rdf+xml"),
    ],
)
def test_graph_forms_in_each_rdf_format(
    world: World, form: str, fmt: str, media_type: str, parse_as: str
) -> None:
    client = wrapper(world, GRAPH_QUERIES[form], fmt, POST)
    answer = client.query()
    assert answer.info()["content-type"].split(";")[0] == media_type
    graph = parsed(answer.response.read(), parse_as)
    assert isomorphic(graph, _alice_note_graph(describe=form == "DESCRIBE"))


@pytest.mark.parametrize("accept", ["application/n-triples", "text/n3", "application/json"])
def test_graph_forms_in_other_negotiated_formats(world: World, accept: str) -> None:
    answer = world.get(world.alice, query=GRAPH_QUERIES["CONSTRUCT"], accept=accept)
    assert answer.status_code == 200
    graph = parsed(answer.content, accept)
    assert isomorphic(graph, _alice_note_graph(describe=False))


def test_negotiation_prefers_quality_then_our_order(world: World) -> None:
    picks = {
        None: "application/sparql-results+json",
        "*/*": "application/sparql-results+json",
        "text/*": "text/csv",
        "text/csv;q=0.5, application/sparql-results+xml;q=0.9": "application/sparql-results+xml",
        "text/html, application/xml;q=0.8, */*;q=0.1": "application/sparql-results+xml",
    }
    for accept, chosen in picks.items():
        answer = world.get(world.alice, query=NOTES, accept=accept)
        assert answer.headers["content-type"].split(";")[0] == chosen, accept
    construct = world.get(world.alice, query=GRAPH_QUERIES["CONSTRUCT"])
    assert construct.headers["content-type"].startswith("text/turtle")


@pytest.mark.parametrize(
    ("query", "accept"),
    [
        (NOTES, "text/turtle"),
        (NOTES, "text/html"),
        (NOTES, "application/sparql-results+json;q=0"),
        (PREFIX + "ASK { ?s ?p ?o }", "text/csv"),
        (GRAPH_QUERIES["CONSTRUCT"], "application/sparql-results+json"),
    ],
)
def test_an_unservable_accept_is_406_naming_the_offers(
    world: World, query: str, accept: str
) -> None:
    answer = world.get(world.alice, query=query, accept=accept)
    assert answer.status_code == 406
    error = answer.json()["error"]
    assert error["code"] == "not_acceptable" and error["field"] == "Accept"
    assert "can be sent as" in error["message"]


def test_from_and_graph_parameters_narrow_to_own_graphs(world: World) -> None:
    everywhere = (
        PREFIX + "SELECT ?t WHERE { { ?s kgm:title ?t } UNION { GRAPH ?g { ?s kgm:title ?t } } }"
    )

    def titles(answer: httpx.Response) -> list[str]:
        assert answer.status_code == 200, answer.text
        return sorted(r["t"]["value"] for r in answer.json()["results"]["bindings"])

    assert titles(world.get(world.alice, query=everywhere)) == ["alice-ops-record"] * 2
    from_kg = everywhere.replace("SELECT ?t", f"SELECT ?t FROM <{ALICE.kg}>")
    assert titles(world.get(world.alice, query=from_kg)) == []
    named_ops = {"query": everywhere, "named-graph-uri": str(ALICE.ops)}
    assert titles(world.post(world.alice, data=named_ops)) == ["alice-ops-record"]
    # the protocol's graphs replace the query's FROM
    assert titles(world.get(world.alice, query=from_kg, **{"default-graph-uri": str(ALICE.ops)}))
    assert titles(world.get(world.alice, query=from_kg, **{"named-graph-uri": str(ALICE.kg)})) == []


# -- rdflib's SPARQLStore --------------------------------------------------------------------


def _sparql_store(world: World, fmt: str = "xml") -> SPARQLStore:
    # SPARQLConnector passes extra keyword arguments to each request: headers go out as-is
    headers = {"Authorization": f"Bearer {world.alice}"}
    return SPARQLStore(world.endpoint, returnFormat=fmt, headers=headers)


@pytest.mark.parametrize("fmt", ["xml", "json", "csv", "tsv"])
def test_sparqlstore_select(world: World, fmt: str) -> None:
    graph = Graph(store=_sparql_store(world, fmt))
    rows = list(graph.query(PREFIX + "SELECT ?note WHERE { ?m kgm:note ?note }"))
    notes = {str(row[0]) for row in rows}  # type: ignore[index]
    assert notes == {TRICKY, "Erdnuss", "0.9", "a blank subject"}


def test_sparqlstore_graphs_triples_and_construct(world: World) -> None:
    store = _sparql_store(world)
    assert set(store.contexts()) == {*ALICE.standing, *_catalogue(world)}
    ops = Graph(store=store, identifier=ALICE.ops)  # sent as default-graph-uri
    assert list(ops.triples((None, None, None))) == [(A1, KGM.title, Literal("alice-ops-record"))]
    assert len(ops) == 1
    constructed = Graph(store=store).query(GRAPH_QUERIES["CONSTRUCT"]).graph
    assert constructed is not None
    assert isomorphic(constructed, _alice_note_graph(describe=False))


def _catalogue(world: World) -> list[URIRef]:
    graphs = world.app.state.services.store.graphs()
    return [g for g in graphs if str(g).startswith("urn:kgmem:catalogue:")]


# -- read-only -------------------------------------------------------------------------------


def _stored(world: World) -> int:
    store = world.app.state.services.store
    graphs = (*ALICE.standing, *BOB.standing, *_catalogue(world))
    return sum(store.count(g) for g in graphs)


UPDATES = [
    "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
    f"DROP GRAPH <{ALICE.kg}>",
    "DELETE WHERE { ?s ?p ?o }",
    "CLEAR ALL",
    f"LOAD <http://example.org/data.ttl> INTO GRAPH <{ALICE.kg}>",
    f"WITH <{ALICE.kg}> DELETE {{ ?s ?p ?o }} WHERE {{ ?s ?p ?o }}",
]


@pytest.mark.parametrize("update", UPDATES)
def test_updates_are_refused_and_change_nothing(world: World, update: str) -> None:
    before = _stored(world)
    for method, via in METHODS[1:]:  # SPARQLWrapper POSTs updates as update= or a body
        with pytest.raises(QueryBadFormed, match="read-only"):
            wrapper(world, update, JSON, method, via).query()
    for answer in (
        world.get(world.alice, query=update),
        world.post(world.alice, data={"query": update}),
        world.post(world.alice, data={"update": update}),
        world.post(
            world.alice,
            content=update,
            headers={"Content-Type": "application/sparql-update"},
        ),
        world.post(
            world.admin,
            content=update,
            headers={"Content-Type": "application/sparql-query"},
        ),
    ):
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "query_refused"
        assert "read-only" in answer.json()["error"]["message"]
    assert _stored(world) == before


def test_service_is_refused(world: World) -> None:
    query = f"SELECT * WHERE {{ SERVICE <{world.endpoint}> {{ ?s ?p ?o }} }}"
    answer = world.get(world.alice, query=query)
    assert answer.status_code == 400
    assert "SERVICE" in answer.json()["error"]["message"]
    with pytest.raises(QueryBadFormed, match="SERVICE"):
        wrapper(world, query, JSON).query()


# -- bad requests ------------------------------------------------------------------------------


def test_bad_requests_name_the_problem(world: World) -> None:
    cases = [
        (world.get(world.alice), 400, "query"),
        (world.get(world.alice, query="  "), 400, "query"),
        (httpx.get(f"{world.endpoint}?query=ASK{{}}&query=ASK{{}}",
                   headers={"Authorization": f"Bearer {world.alice}"}), 400, "query"),
        (world.get(world.alice, query="SELECT ?x WHERE {"), 400, "query"),
        (world.post(world.alice, content="ASK {}", headers={"Content-Type": "text/plain"}),
         415, "Content-Type"),
        (world.post(world.alice, content=b"ASK { \xff }",
                    headers={"Content-Type": "application/sparql-query"}), 400, None),
        (world.post(world.alice, content=b"#" * (1 << 20) + b"\nASK {}",
                    headers={"Content-Type": "application/sparql-query"}), 413, "body"),
    ]  # fmt: skip
    for answer, status, field in cases:
        assert answer.status_code == status, answer.text
        error = answer.json()["error"]
        assert error["message"] and error["field"] == field
    assert (
        world.get(world.alice, query="SELECT ?x WHERE {")
        .json()["error"]["message"]
        .startswith("query refused: not a SPARQL query")
    )
    put = httpx.put(world.endpoint, headers={"Authorization": f"Bearer {world.alice}"})
    assert put.status_code == 405


def test_a_missing_or_invalid_key_is_401(world: World) -> None:
    client = SPARQLWrapper(world.endpoint)
    client.setQuery("ASK {}")
    client.setReturnFormat(JSON)
    with pytest.raises(Unauthorized):
        client.query()
    client.addCustomHttpHeader("Authorization", "Bearer kgm_000000000000_nope")
    with pytest.raises(Unauthorized):
        client.query()
    answer = world.get(None, query="ASK {}")
    assert answer.status_code == 401 and answer.json()["error"]["code"] == "unauthenticated"
    store = SPARQLStore(world.endpoint, headers={"Authorization": "Bearer wrong"})
    with pytest.raises(ValueError):  # SPARQLStore's word for any HTTP error on GET
        list(Graph(store=store).query("ASK {}"))


# -- time and size limits ------------------------------------------------------------------------

_VALUES = " ".join(f"VALUES ?v{i} {{ {' '.join(map(str, range(300)))} }}" for i in range(3))
SLOW = f"SELECT (COUNT(*) AS ?n) WHERE {{ {_VALUES} }}"  # 27M solutions: seconds, then ends


def _wait_for_idle_workers() -> None:
    deadline = time.monotonic() + 120
    while any(t.name == "kgmem-user-query" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "an abandoned query never ended"
        time.sleep(0.05)


def test_timeout_and_result_cap_answer_4xx_with_clear_messages(tmp_path: Path) -> None:
    limits = {"sparql_timeout_seconds": 0.5, "sparql_result_limit": 3}
    with running_world(tmp_path / "home", **limits) as small:
        capped = small.get(small.alice, query=NOTES)  # four rows, the cap is three
        assert capped.status_code == 413
        assert capped.json()["error"] == {
            "code": "result_too_large",
            "message": "the result has more than 3 rows; add LIMIT or narrow the query",
            "field": None,
        }
        limited = small.get(small.alice, query=NOTES + " LIMIT 3")
        assert limited.status_code == 200
        assert len(json.loads(limited.content)["results"]["bindings"]) == 3
        triples = small.get(small.alice, query=GRAPH_QUERIES["CONSTRUCT"])
        assert triples.status_code == 413

        started = time.monotonic()
        answer = small.get(small.alice, query=SLOW)
        assert answer.status_code == 400
        error = answer.json()["error"]
        assert error["code"] == "query_timeout"
        assert error["message"].startswith("the query did not finish within 0.5 s")
        assert time.monotonic() - started < 5  # answered at the deadline, not at the end
        assert httpx.get(f"{small.url}/health", timeout=5).status_code == 200
        with pytest.raises(QueryBadFormed, match="did not finish"):
            wrapper(small, SLOW, JSON).query()
        _wait_for_idle_workers()
