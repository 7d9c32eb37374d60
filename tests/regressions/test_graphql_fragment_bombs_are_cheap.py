"""Regression: fragments that each spread the next twice (760 bytes, 20 deep) took 8.3 s in
the depth and alias limiters, with the event loop blocked; 30 deep never returned. Limits now
cost one walk of the document, and a cost limit refuses what would expand too far."""

from __future__ import annotations

import time

import pytest
from starlette.testclient import TestClient

from kgmem.config import Settings


def _bomb(levels: int, spreads: int = 2) -> str:
    fragments = [
        f"fragment F{i} on Me {{ {' '.join([f'...F{i + 1}'] * spreads)} }}" for i in range(levels)
    ]
    fragments.append(f"fragment F{levels} on Me {{ id }}")
    return "query Bomb { me { ...F0 } } " + " ".join(fragments)


def _post(client: TestClient, settings: Settings, query: str) -> dict[str, object]:
    key = (settings.home / "api-key").read_text().strip()
    answer = client.post(
        "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {key}"}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert isinstance(body, dict)
    return body


@pytest.mark.parametrize("levels", [20, 30, 60])
def test_a_fragment_bomb_is_refused_at_once(
    client: TestClient, settings: Settings, levels: int
) -> None:
    started = time.monotonic()
    body = _post(client, settings, _bomb(levels))
    assert time.monotonic() - started < 1.0
    assert body.get("data") is None
    assert any("would resolve about" in str(e) for e in body["errors"])  # type: ignore[attr-defined]


def test_an_alias_bomb_through_fragments_counts_every_alias(
    client: TestClient, settings: Settings
) -> None:
    query = "query A { me { ...F0 } } fragment F0 on Me { a: id b: id ...F1 ...F1 } " + (
        "fragment F1 on Me { c: id d: id e: id f: id g: id h: id i: id j: id k: id l: id }"
    )
    body = _post(client, settings, query)
    assert any("aliases found" in str(e) for e in body["errors"])  # type: ignore[attr-defined]


def test_nested_pages_multiply_into_the_cost(client: TestClient, settings: Settings) -> None:
    wide = "{ memories(first: 500) { nodes { evidence { quote } } } entities(first: 500) { " + (
        "nodes { name } } }"
    )
    assert "errors" not in _post(client, settings, wide)
    huge = "{ entities(first: 500) { nodes { relations { other { memories(first: 500) { " + (
        "nodes { title } } } } } } }"
    )
    body = _post(client, settings, huge)
    assert any("would resolve about" in str(e) for e in body.get("errors", []))  # type: ignore[attr-defined]
