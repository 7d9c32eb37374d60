"""The SPARQL check: every spelling of SERVICE the grammar allows is refused, truths pass."""

from __future__ import annotations

import threading

import pytest
from rdflib import URIRef

from kgmem.errors import QueryRefused
from kgmem.store.sparql_check import check_query, expand_escapes
from kgmem.vocab import PREFIXES

SERVICE_SPELLINGS = [
    "SELECT * WHERE { SERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }",
    "select * where { service silent <http://127.0.0.1:9/x> { ?s ?p ?o } }",
    "SELECT * WHERE { SeRvIcE ?endpoint { ?s ?p ?o } }",
    r"SELECT * WHERE { OPTIONAL { <urn:x\u0041#> ?p0 ?o0 } SERVICE <http://127.0.0.1:9/x> "
    "{ ?x ?p ?o } }",
    r"SELECT * WHERE { \u0053ERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }",
    r"SELECT * WHERE { \U00000053ERVICE <http://127.0.0.1:9/x> { ?s ?p ?o } }",
    "PREFIX r: <http://127.0.0.1:9/> SELECT * WHERE { SERVICE r:x { ?s ?p ?o } }",
    "SELECT * WHERE { { { ?a ?b ?c } UNION { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } } } }",
    "SELECT * WHERE { { SELECT ?s WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } } } }",
    "ASK { ?s ?p ?o FILTER EXISTS { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } } }",
    "ASK { ?s ?p ?o FILTER NOT EXISTS { SERVICE <http://127.0.0.1:9/> { } } }",
    "CONSTRUCT { ?s ?p ?o } WHERE { MINUS { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } } }",
    "DESCRIBE ?s WHERE { GRAPH ?g { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } } }",
    "# SERVICE in a comment is nothing\nSELECT * WHERE { ?s ?p ?o # }\n"
    "SERVICE <http://127.0.0.1:9/> { ?x ?y ?z } }",
    "SELECT * WHERE { ?s <urn:p#> ?o . SERVICE <http://127.0.0.1:9/> { ?x ?y ?z } }",
]


@pytest.mark.parametrize("text", SERVICE_SPELLINGS)
def test_check_query_refuses_service_however_spelled(text: str) -> None:
    with pytest.raises(QueryRefused, match=r"SERVICE is not allowed|can check"):
        check_query(text, PREFIXES)


@pytest.mark.parametrize(
    "text",
    [
        "PREFIX ex: <http://e/> INSERT DATA { ex:a ex:b ex:c }",
        "CLEAR ALL",
        "LOAD <http://127.0.0.1:9/data.ttl>",
        "DELETE WHERE { ?s ?p ?o }",
    ],
)
def test_check_query_refuses_updates(text: str) -> None:
    with pytest.raises(QueryRefused, match="update"):
        check_query(text, PREFIXES)


@pytest.mark.parametrize(
    "text",
    [
        "SELECT * WHERE { ?s ?p ?o }",
        "PREFIX ex: <http://e/> SELECT ?service WHERE { ?s ex:SERVICE 'SERVICE' }",
        "SELECT ?class ?label WHERE { ?class a owl:Class ; rdfs:label ?label } LIMIT 5",
        "SELECT ?g (COUNT(*) AS ?triples) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
        "DESCRIBE kgm:Memory",
        "CONSTRUCT WHERE { ?s ?p ?o }",
        "ASK { ?m a kgm:Memory }",
        'SELECT ?m WHERE { ?m kgm:title ?t FILTER(CONTAINS(?t, "service")) } # SERVICE',
    ],
)
def test_check_query_keeps_ordinary_queries(text: str) -> None:
    assert check_query(text, PREFIXES).text == text


def test_check_query_reads_escaped_and_prefixed_graph_names() -> None:
    checked = check_query(
        r"PREFIX u: <urn:kgmem:user:> SELECT * FROM <urn:kgmem:user:\u0061lice:kg> "
        "FROM NAMED u:bob WHERE { ?s ?p ?o }",
        PREFIXES,
    )
    assert checked.default == (URIRef("urn:kgmem:user:alice:kg"),)
    assert checked.named == (URIRef("urn:kgmem:user:bob"),)


def test_expand_escapes_refuses_an_escape_that_spells_an_escape() -> None:
    with pytest.raises(QueryRefused, match="another escape"):
        expand_escapes(r"SELECT * WHERE { ?s ?p '\u005Cu0041' }")
    with pytest.raises(QueryRefused, match="not a character"):
        expand_escapes(r"SELECT * WHERE { ?s ?p '\uD800' }")


def test_queries_checked_on_many_threads_at_once_all_parse() -> None:
    """rdflib's grammar is not thread-safe: without the lock some of these fail in pyparsing."""
    failures: list[BaseException] = []

    def check(worker: int) -> None:
        for i in range(40):
            text = (
                f"SELECT ?s{worker}_{i} WHERE {{ VALUES ?v {{ {worker} {i} }} "
                f"?s{worker}_{i} ?p ?o FILTER(?o > {i}) }} LIMIT {i + 1}"
            )
            try:
                check_query(text, {})
            except BaseException as exc:
                failures.append(exc)

    threads = [threading.Thread(target=check, args=(w,)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
