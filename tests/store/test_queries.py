"""The named-query registry: loading, parse errors with positions, binding by substitution."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import BindingError, QuerySyntaxError, UnknownQuery
from kgmem.store import QueryKind, QueryRegistry
from kgmem.store.queries import default_queries_dir, parse_query, substitute


def test_registry_loads_every_repo_query_by_name(queries: QueryRegistry) -> None:
    files = sorted(default_queries_dir().rglob("*.rq"))
    assert len(queries) == len(files) > 0
    assert "store/graph_counts" in queries
    assert queries["store/graph_counts"].kind is QueryKind.SELECT
    assert queries["store/clear_graph"].kind is QueryKind.UPDATE


def test_registry_names_nested_directories(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c.rq").write_text("ASK { ?s ?p ?o }")
    registry = QueryRegistry.load(tmp_path)
    assert registry.names() == ["a/b/c"]
    assert registry["a/b/c"].kind is QueryKind.ASK


def test_broken_query_reports_file_line_and_column(tmp_path: Path) -> None:
    (tmp_path / "good.rq").write_text("SELECT ?s WHERE { ?s ?p ?o }\n")
    broken = tmp_path / "memory" / "broken.rq"
    broken.parent.mkdir()
    broken.write_text("# a comment\nSELECT ?s\nWHERE {\n  ?s kgm:title \n}\n")
    with pytest.raises(QuerySyntaxError) as info:
        QueryRegistry.load(tmp_path)
    err = info.value
    assert err.path == str(broken)
    assert err.line == 5  # the prologue kgmem prepends does not shift the reported line
    assert str(err).startswith(f"{broken}:5:")


def test_broken_update_reports_its_file(tmp_path: Path) -> None:
    path = tmp_path / "bad_update.rq"
    path.write_text("DELETE WHERE { GRAPH ?g { ?s ?p } }\n")
    with pytest.raises(QuerySyntaxError, match=r"bad_update\.rq:1:"):
        QueryRegistry.load(tmp_path)


def test_undecodable_query_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "latin1.rq").write_bytes(b"SELECT * WHERE { ?s ?p '\xe9' }")
    with pytest.raises(QuerySyntaxError, match=r"latin1\.rq"):
        QueryRegistry.load(tmp_path)


def test_unknown_query_name(queries: QueryRegistry) -> None:
    with pytest.raises(UnknownQuery, match="memory/nope"):
        queries["memory/nope"]


def test_standard_prefixes_need_no_declaration() -> None:
    query = parse_query("t", "SELECT ?m WHERE { ?m a kgm:Memory ; schema:name ?n }", "t.rq")
    assert query.variables == {"m", "n"}


def test_substitute_replaces_only_variable_tokens() -> None:
    body = (
        "# ?g in a comment stays\n"
        'DELETE { GRAPH ?g { ?s kgm:title "?g stays in a string" } }\n'
        "WHERE { GRAPH ?g { ?s kgm:title ?t . FILTER(?t != <urn:x?g=1>) } }"
    )
    query = parse_query("t", body, "t.rq")
    text = substitute(query, {"g": URIRef("urn:kgmem:user:a:kg")})
    assert text.count("<urn:kgmem:user:a:kg>") == 2
    assert "# ?g in a comment stays" in text
    assert '"?g stays in a string"' in text
    assert "<urn:x?g=1>" in text


def test_substitute_escapes_hostile_literals() -> None:
    from kgmem.store import Changeset, OxigraphStore, Quad
    from kgmem.vocab import KGM

    store = OxigraphStore()
    graph = URIRef("urn:kgmem:user:a:kg")
    hostile = Literal('x" } } ; DROP ALL ; INSERT DATA { <urn:a> <urn:b> "c')
    keep = Quad(URIRef("urn:m2"), KGM.title, Literal("keep"), graph)
    store.commit(Changeset.of([Quad(URIRef("urn:m1"), KGM.title, hostile, graph), keep]))
    query = parse_query("t", "DELETE WHERE { GRAPH ?g { ?s kgm:title ?t } }", "t.rq")
    store.update(query, {"g": graph, "t": hostile})
    # Exactly the hostile triple went: nothing was dropped, nothing was inserted.
    assert list(store.quads()) == [keep]


def test_substitute_refuses_unknown_variable_and_blank_nodes() -> None:
    from rdflib import BNode

    query = parse_query("t", "DELETE WHERE { GRAPH ?g { ?s ?p ?o } }", "t.rq")
    with pytest.raises(BindingError, match="no such variable"):
        substitute(query, {"x": URIRef("urn:a")})
    with pytest.raises(BindingError, match="blank"):
        substitute(query, {"s": BNode()})


def test_a_list_binding_selects_exactly_its_keys_in_one_query() -> None:
    from kgmem.store import Changeset, OxigraphStore, Quad
    from kgmem.vocab import KGM

    store = OxigraphStore()
    graph = URIRef("urn:kgmem:user:a:kg")
    titles = {URIRef(f"urn:m{i}"): Literal(f"title {i}") for i in range(6)}
    hostile = Literal('x" } } ; DROP ALL ; #')
    store.commit(
        Changeset.of(
            [Quad(m, KGM.title, t, graph) for m, t in titles.items()]
            + [Quad(URIRef("urn:h"), KGM.title, hostile, graph)]
        )
    )
    query = parse_query(
        "t", "SELECT ?m ?t WHERE { GRAPH ?g { ?m kgm:title ?t } } ORDER BY ?m", "t.rq"
    )
    keys = [URIRef("urn:m4"), URIRef("urn:m1"), URIRef("urn:absent")]
    rows = store.select(query, {"g": graph}, values={"m": keys})
    assert [(r["m"], r["t"]) for r in rows] == [(k, titles[k]) for k in sorted(keys[:2])]
    assert store.select(query, {"g": graph}, values={"m": []}) == []
    found = store.select(query, {"g": graph}, values={"t": [hostile]})
    assert [r["m"] for r in found] == [URIRef("urn:h")]
    assert len(list(store.quads())) == 7  # the hostile literal stayed data
    with pytest.raises(BindingError, match="no such variable"):
        store.select(query, values={"x": keys})
