"""Reading a named query for many keys: the same rows as one query a key, in chunks."""

from __future__ import annotations

from typing import Any

import pytest
from rdflib import Literal, URIRef

from kgmem.store import KEYS_PER_QUERY, Changeset, OxigraphStore, Quad, UserGraphs, select_keyed
from kgmem.store.queries import parse_query
from kgmem.vocab import KGM

G = UserGraphs("alice").kg
TITLES = parse_query(
    "titles", "SELECT ?memory ?title WHERE { GRAPH ?graph { ?memory kgm:title ?title } }", "<t>"
)


def _memory(n: int) -> URIRef:
    return URIRef(f"https://w3id.org/kgmem/user/alice/memory/m{n}")


@pytest.mark.parametrize("per_key", [False, True])
def test_keyed_rows_equal_one_query_a_key_in_chunks(
    store: OxigraphStore, monkeypatch: pytest.MonkeyPatch, per_key: bool
) -> None:
    n = KEYS_PER_QUERY + 10
    store.commit(Changeset.of([Quad(_memory(i), KGM.title, Literal(f"t{i}"), G) for i in range(n)]))
    calls: list[dict[str, Any]] = []
    select = store.select

    def counting(query: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return select(query, *args, **kwargs)

    monkeypatch.setattr(store, "select", counting)
    keys = [_memory(i) for i in range(n + 5)] + [_memory(0)]  # 5 unknown, one twice
    rows = select_keyed(store, TITLES, {"graph": G}, "memory", keys, per_key=per_key)
    assert sorted((str(r["memory"]), str(r["title"])) for r in rows) == sorted(
        (str(_memory(i)), f"t{i}") for i in range(n)
    )
    assert len(calls) == (n + 5 if per_key else 2)  # each key once; 266 keys are 2 chunks
    assert select_keyed(store, TITLES, {"graph": G}, "memory", [], per_key=per_key) == []
