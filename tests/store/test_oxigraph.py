"""The Oxigraph adapter, on both an in-memory and an on-disk store."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import XSD

from kgmem.errors import (
    BindingError,
    QueryKindMismatch,
    QueryRefused,
    ResultLimitExceeded,
    StoreClosed,
    StoreCorrupt,
    StoreLocked,
    StoreOperationFailed,
)
from kgmem.store import (
    AskResult,
    Changeset,
    Dataset,
    GraphResult,
    OxigraphStore,
    Quad,
    QueryRegistry,
    RdfFormat,
    SelectResult,
    UserGraphs,
)
from kgmem.store.queries import parse_query
from kgmem.vocab import KGM
from tests.helpers import holding

ALICE = UserGraphs("alice")
BOB = UserGraphs("bob")
M1 = URIRef("urn:kgmem:alice:memory:m1")


def q(name: str, body: str):  # type: ignore[no-untyped-def]
    return parse_query(name, body, f"<test {name}>")


def test_commit_add_then_read_back_all_term_kinds(store: OxigraphStore) -> None:
    quads = [
        Quad(M1, KGM.title, Literal("Peanut allergy"), ALICE.kg),
        Quad(M1, KGM.confidence, Literal("0.9", datatype=XSD.decimal), ALICE.kg),
        Quad(M1, KGM.body, Literal("Allergique", lang="fr"), ALICE.kg),
        Quad(M1, KGM.about, URIRef("urn:kgmem:alice:entity:e1"), ALICE.kg),
    ]
    store.commit(Changeset.of(quads))
    assert set(store.quads(ALICE.kg)) == set(quads)
    assert store.count(ALICE.kg) == 4
    assert store.graphs() == [ALICE.kg]


def test_every_pattern_reads_what_a_filter_of_every_quad_gives(store: OxigraphStore) -> None:
    """A read returns the terms it was asked for in the bound positions (only the free ones
    are converted): each of the 16 patterns over quads of every term kind, including a
    blank subject and typed and tagged literals, equals the matching quads."""
    blank, e1 = BNode("b1"), URIRef("urn:kgmem:alice:entity:e1")
    quads = [
        Quad(M1, KGM.title, Literal("Peanut allergy"), ALICE.kg),
        Quad(M1, KGM.confidence, Literal("0.9", datatype=XSD.decimal), ALICE.kg),
        Quad(M1, KGM.body, Literal("Allergique", lang="fr"), ALICE.kg),
        Quad(M1, KGM.about, e1, ALICE.kg),
        Quad(blank, KGM.about, e1, ALICE.kg),
        Quad(M1, KGM.about, e1, ALICE.sources),
        Quad(M1, KGM.title, Literal("Peanut allergy"), BOB.kg),
    ]
    store.commit(Changeset.of(quads))
    for quad in quads:
        for mask in range(16):
            asked = [t if mask & (1 << i) else None for i, t in enumerate(quad[3:] + quad[:3])]
            graph, subject, predicate, obj = asked
            got = list(store.quads(graph, subject, predicate, obj))  # type: ignore[arg-type]
            wanted = [
                q
                for q in quads
                if all(a is None or a == t for a, t in zip(asked, (q.graph, *q[:3]), strict=True))
            ]
            assert sorted(got) == sorted(wanted), (mask, quad)
            for read in got:
                stored = quads[quads.index(read)]
                assert [type(t) for t in read] == [type(t) for t in stored]
                assert [getattr(t, "language", None) for t in read] == [
                    getattr(t, "language", None) for t in stored
                ]


def test_commit_removes_and_adds_in_one_step(store: OxigraphStore) -> None:
    old = Quad(M1, KGM.status, KGM.pending, ALICE.kg)
    new = Quad(M1, KGM.status, KGM.active, ALICE.kg)
    store.commit(Changeset.of([old]))
    store.commit(Changeset.of(add=[new], remove=[old]))
    assert list(store.quads(ALICE.kg)) == [new]


def test_commit_refused_changes_nothing(store: OxigraphStore) -> None:
    kept = Quad(M1, KGM.title, Literal("kept"), ALICE.kg)
    store.commit(Changeset.of([kept]))
    blank = Quad(BNode(), KGM.title, Literal("x"), ALICE.kg)
    with pytest.raises(StoreOperationFailed, match="blank nodes"):
        store.commit(
            Changeset.of(add=[Quad(M1, KGM.title, Literal("new"), ALICE.kg)], remove=[blank])
        )
    assert list(store.quads(ALICE.kg)) == [kept]


def test_commit_drop_graph_leaves_other_graphs(store: OxigraphStore) -> None:
    store.commit(
        Changeset.of(
            [Quad(M1, KGM.title, Literal("a"), ALICE.kg), Quad(M1, KGM.title, Literal("b"), BOB.kg)]
        )
    )
    store.commit(Changeset.of(drop_graphs=[ALICE.kg]))
    assert store.count(ALICE.kg) == 0
    assert store.count(BOB.kg) == 1


def test_transaction_commits_on_exit_and_not_on_error(store: OxigraphStore) -> None:
    with store.transaction() as tx:
        tx.add(Quad(M1, KGM.title, Literal("one"), ALICE.kg))
        assert store.count(ALICE.kg) == 0  # nothing visible before the commit
    assert store.count(ALICE.kg) == 1
    with pytest.raises(RuntimeError), store.transaction() as tx:
        tx.add(Quad(M1, KGM.title, Literal("two"), ALICE.kg))
        raise RuntimeError("boom")
    assert store.count(ALICE.kg) == 1


def test_select_binds_parameters_as_terms(store: OxigraphStore) -> None:
    store.commit(
        Changeset.of(
            [Quad(M1, KGM.title, Literal("a"), ALICE.kg), Quad(M1, KGM.title, Literal("b"), BOB.kg)]
        )
    )
    query = q("t/titles", "SELECT ?g ?title WHERE { GRAPH ?g { ?m kgm:title ?title } }")
    rows = store.select(query, {"g": ALICE.kg})
    assert [r["title"] for r in rows] == [Literal("a")]
    # A literal carrying SPARQL syntax is a value, not code.
    assert store.select(query, {"g": URIRef("urn:kgmem:user:x:kg")}) == []


def test_select_binding_of_unknown_variable_is_refused(store: OxigraphStore) -> None:
    query = q("t/one", "SELECT ?s WHERE { ?s ?p ?o }")
    with pytest.raises(BindingError, match="nope"):
        store.select(query, {"nope": M1})


def test_select_binds_unprojected_variables_as_constants(store: OxigraphStore) -> None:
    store.commit(
        Changeset.of(
            [
                Quad(M1, KGM.title, Literal("a"), ALICE.kg),
                Quad(M1, KGM.title, Literal("b"), ALICE.kg),
            ]
        )
    )
    query = q("t/unprojected", "SELECT ?s WHERE { GRAPH ?g { ?s kgm:title ?o } }")
    assert store.select(query, {"o": Literal("a"), "g": ALICE.kg}) == [{"s": M1}]
    assert store.select(query, {"o": Literal("zzz"), "g": ALICE.kg}) == []


def test_select_text_gives_each_terms_plain_text_in_select_order(store: OxigraphStore) -> None:
    store.commit(
        Changeset.of(
            [
                Quad(M1, KGM.title, Literal("a title", lang="en"), ALICE.kg),
                Quad(M1, KGM.confidence, Literal(0.5), ALICE.kg),
            ]
        )
    )
    query = q(
        "t/text",
        "SELECT ?o ?m ?none WHERE { GRAPH ?g { ?m ?p ?o } OPTIONAL { ?m kgm:absent ?none } }"
        " ORDER BY ?o",
    )
    assert sorted(store.select_text(query, {"g": ALICE.kg}), key=str) == [
        ("0.5", str(M1), None),
        ("a title", str(M1), None),
    ]
    with pytest.raises(QueryKindMismatch):
        store.select_text(q("t/ask2", "ASK { ?s ?p ?o }"))


def test_ask_and_construct(store: OxigraphStore) -> None:
    store.commit(Changeset.of([Quad(M1, KGM.title, Literal("a"), ALICE.kg)]))
    ask = q("t/ask", "ASK { GRAPH ?g { ?m kgm:title ?t } }")
    assert store.ask(ask, {"g": ALICE.kg}) is True
    assert store.ask(ask, {"g": BOB.kg}) is False
    construct = q("t/c", "CONSTRUCT { ?m kgm:excerpt ?t } WHERE { GRAPH ?g { ?m kgm:title ?t } }")
    assert store.construct(construct, {"g": ALICE.kg}).triples == ((M1, KGM.excerpt, Literal("a")),)


def test_query_used_as_wrong_kind_is_refused(store: OxigraphStore) -> None:
    with pytest.raises(QueryKindMismatch):
        store.ask(q("t/sel", "SELECT * WHERE { ?s ?p ?o }"))


def test_named_update_substitutes_terms(store: OxigraphStore, queries: QueryRegistry) -> None:
    store.commit(
        Changeset.of(
            [Quad(M1, KGM.title, Literal("a"), ALICE.kg), Quad(M1, KGM.title, Literal("b"), BOB.kg)]
        )
    )
    store.update(queries["store/clear_graph"], {"graph": ALICE.kg})
    assert store.count(ALICE.kg) == 0
    assert store.count(BOB.kg) == 1


def test_load_replaces_graph_atomically_with_blank_nodes(store: OxigraphStore) -> None:
    graph = URIRef("urn:kgmem:shapes:demo")
    data = b"@prefix ex: <http://e/> . ex:a ex:b [ ex:c 1 ; ex:d 2 ] ."
    assert store.load(data, RdfFormat.TURTLE, graph) == 3
    assert store.load(data, RdfFormat.TURTLE, graph) == 3
    assert store.count(graph) == 3
    blanks = {q.subject for q in store.quads(graph) if isinstance(q.subject, BNode)}
    assert len(blanks) == 1  # the two properties stay on one node


def test_load_unparseable_changes_nothing(store: OxigraphStore) -> None:
    graph = URIRef("urn:kgmem:catalogue:demo")
    store.load(b"<http://e/a> <http://e/b> <http://e/c> .", RdfFormat.NTRIPLES, graph)
    with pytest.raises(StoreOperationFailed, match="unparseable"):
        store.load(b"<http://e/a> <http://e/b> .", RdfFormat.NTRIPLES, graph)
    assert store.count(graph) == 1


def test_bulk_load_fills_graph(store: OxigraphStore) -> None:
    graph = URIRef("urn:kgmem:catalogue:bulk")
    data = "".join(f'<http://e/{i}> <http://e/p> "{i}" .\n' for i in range(500)).encode()
    assert store.load(data, RdfFormat.NTRIPLES, graph, bulk=True) == 500
    assert store.load(data, RdfFormat.NTRIPLES, graph, bulk=True) == 500  # replaced, not added
    assert store.count(graph) == 500
    more = "".join(f'<http://e/{i}> <http://e/q> "{i}" .\n' for i in range(7)).encode()
    # added to what the graph holds: the triples of this load, not the graph's total
    assert store.load(more, RdfFormat.NTRIPLES, graph, replace=False, bulk=True) == 7
    assert store.count(graph) == 507


def test_bulk_load_lenient_accepts_malformed_iris(store: OxigraphStore) -> None:
    graph = URIRef("urn:kgmem:catalogue:lenient")
    data = b'<http://e/a#b#c> <http://e/p> "x" .'  # a second '#', as in schema.org's shapes
    with pytest.raises(StoreOperationFailed, match="unparseable"):
        store.load(data, RdfFormat.NTRIPLES, graph, bulk=True)
    assert store.load(data, RdfFormat.NTRIPLES, graph, bulk=True, lenient=True) == 1


def test_query_text_dataset_ignores_from_and_graph_of_others(store: OxigraphStore) -> None:
    store.commit(
        Changeset.of(
            [
                Quad(M1, KGM.title, Literal("alice's"), ALICE.kg),
                Quad(M1, KGM.title, Literal("bob's"), BOB.kg),
            ]
        )
    )
    mine = Dataset(default=ALICE.standing, named=ALICE.standing)
    texts = [
        "SELECT ?t WHERE { ?m kgm:title ?t }",
        f"SELECT ?t FROM <{BOB.kg}> WHERE {{ ?m kgm:title ?t }}",
        f"SELECT ?t WHERE {{ GRAPH <{BOB.kg}> {{ ?m kgm:title ?t }} }}",
        f"SELECT ?t FROM NAMED <{BOB.kg}> WHERE {{ GRAPH ?g {{ ?m kgm:title ?t }} }}",
    ]
    seen = set()
    for text in texts:
        result = store.query_text("PREFIX kgm: <https://w3id.org/kgmem/ns#> " + text, dataset=mine)
        assert isinstance(result, SelectResult)
        seen |= {str(r["t"]) for r in result.rows}
    assert seen == {"alice's"}


def test_query_text_empty_dataset_sees_nothing(store: OxigraphStore) -> None:
    store.commit(Changeset.of([Quad(M1, KGM.title, Literal("x"), ALICE.kg)]))
    result = store.query_text(
        "SELECT * WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }",
        dataset=Dataset(default=(), named=()),
    )
    assert isinstance(result, SelectResult) and result.rows == ()


def test_query_text_kinds_and_limit(store: OxigraphStore) -> None:
    store.commit(
        Changeset.of(
            [Quad(URIRef(f"urn:x:{i}"), KGM.title, Literal(str(i)), ALICE.kg) for i in range(5)]
        )
    )
    everything = Dataset()
    assert store.query_text("ASK { ?s ?p ?o }", dataset=everything) == AskResult(True)
    graph = store.query_text("CONSTRUCT WHERE { ?s ?p ?o }", dataset=everything, limit=5)
    assert isinstance(graph, GraphResult) and len(graph.triples) == 5
    with pytest.raises(ResultLimitExceeded, match="more than 4"):
        store.query_text("SELECT * WHERE { ?s ?p ?o }", dataset=everything, limit=4)


@pytest.mark.parametrize(
    "text",
    [
        "INSERT DATA { <urn:a> <urn:b> <urn:c> }",
        "DELETE WHERE { ?s ?p ?o }",
        "LOAD <http://example.org/data.ttl>",
        "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }",
    ],
)
def test_query_text_refuses_updates_and_service(store: OxigraphStore, text: str) -> None:
    store.commit(Changeset.of([Quad(M1, KGM.title, Literal("x"), ALICE.kg)]))
    with pytest.raises(QueryRefused):
        store.query_text(text, dataset=Dataset())
    assert store.count() == 1


def test_query_text_syntax_error_is_refused(store: OxigraphStore) -> None:
    with pytest.raises(QueryRefused, match="not a SPARQL query"):
        store.query_text("SELECT ?x WHERE {", dataset=Dataset())


def test_closed_store_refuses_use(store: OxigraphStore) -> None:
    store.close()
    with pytest.raises(StoreClosed):
        store.count()


def test_disk_store_persists_across_reopen(tmp_path: Path) -> None:
    path = tmp_path / "store"
    first = OxigraphStore(path)
    first.commit(Changeset.of([Quad(M1, KGM.title, Literal("durable"), ALICE.kg)]))
    first.close()
    second = OxigraphStore(path)
    assert [q.object for q in second.quads(ALICE.kg)] == [Literal("durable")]
    assert (second.size_on_disk() or 0) > 0
    second.close()


def test_disk_store_locked_by_another_process(tmp_path: Path) -> None:
    path = tmp_path / "store"
    OxigraphStore(path).close()
    with holding(path), pytest.raises(StoreLocked, match=str(path)):
        OxigraphStore(path)


def test_corrupt_store_directory_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "store"
    OxigraphStore(path).close()
    (path / "CURRENT").write_text("garbage\n")
    with pytest.raises(StoreCorrupt, match="store"):
        OxigraphStore(path)
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    with pytest.raises(StoreCorrupt):
        OxigraphStore(not_a_dir)
