"""Regression (#22, item 6): one record holding a value kgmem cannot read broke the server for
everyone. A time that overflows once in UTC (``0001-01-01T00:00:00+14:00``, as an older
version or another tool could leave it) made start-up fail outright; a confidence of
``"abc"`` made that user's memory list answer 500; and ``kgmem index check`` said the
projection matched. Now such a value reads as absent wherever kgmem reads it, is logged
with its node's IRI, and ``index check`` names it (exit 1); the server starts, the user's
search, list, context and lifecycle work, another user's writes reach search at once,
and a drain through the bad record completes."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest

from kgmem.api import create_app
from kgmem.config import Settings
from kgmem.store import UserGraphs
from kgmem.vocab import KGM
from tests.conftest import serve_app
from tests.test_cli import kgmem

XSD = "http://www.w3.org/2001/XMLSchema#"
BAD = {  # property -> (lexical form, datatype)
    "recordedAt": ("0001-01-01T00:00:00+14:00", "dateTime"),
    "confidence": ("abc", "double"),
}


@contextmanager
def _served(settings: Settings) -> Iterator[tuple[str, dict[str, str]]]:
    """The app on a real uvicorn; the URL and a key per user (alice is the default user,
    ``me``)."""
    app = create_app(settings)
    keys = {"alice": (settings.home / "api-key").read_text().strip()}
    accounts = app.state.accounts
    known = any(account.uid == "bob" for account in accounts.all())
    keys["bob"] = (accounts.issue("bob") if known else accounts.add("bob")).token
    with serve_app(app, settings) as url:
        yield url, keys


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30)


def _remember(http: httpx.Client, chat: str, text: str, title: str, obj: str) -> str:
    turn = {"chat": chat, "turn": 0, "role": "user", "text": text}
    assert http.post("/api/messages", json={"messages": [turn]}).status_code == 200
    draft = {
        "kind": "semantic",
        "title": title,
        "confidence": 0.9,
        "claims": [{"subject": "I", "predicate": "kgm:allergicTo", "object": obj}],
        "evidence": [{"source": f"chat:{chat}#0", "quote": text}],
    }
    answer = http.post("/api/memories/batch-draft", json={"drafts": [draft]}).json()
    (item,) = answer["items"]
    assert item["outcome"] == "active", item
    return str(item["memory"])


def _found(http: httpx.Client, query: str) -> list[str]:
    answer = http.get("/api/search", params={"q": query})
    assert answer.status_code == 200, answer.text
    return [hit["id"] for hit in answer.json()["results"]]


def _damage(home: Path, memory: str) -> None:
    """Write the bad values straight into the store, as another tool would (no server)."""
    store = ox.Store(str(home / "store"))
    graph, node = ox.NamedNode(str(UserGraphs("me").kg)), ox.NamedNode(memory)
    for name, (lexical, datatype) in BAD.items():
        prop = ox.NamedNode(str(KGM[name]))
        for quad in list(store.quads_for_pattern(node, prop, None, graph)):
            store.remove(quad)
        value = ox.Literal(lexical, datatype=ox.NamedNode(XSD + datatype))
        store.add(ox.Quad(node, prop, value, graph))
    store.flush()
    del store


def test_a_bad_record_is_isolated_logged_and_reported(
    settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    with _served(settings) as (url, keys), _client(url, keys["alice"]) as alice:
        bad = _remember(alice, "c1", "I am allergic to peanuts", "Allergic to peanuts", "peanuts")
        good = _remember(alice, "c2", "I am allergic to cats", "Allergic to cats", "cats")
    _damage(settings.home, bad)

    caplog.set_level(logging.WARNING, logger="kgmem.index")
    with (
        _served(settings) as (url, keys),  # start-up failed here (OverflowError)
        _client(url, keys["alice"]) as alice,
        _client(url, keys["bob"]) as bob,
    ):
        assert _found(alice, "peanuts")[:1] == [bad]
        assert _found(alice, "cats")[:1] == [good]
        listed = alice.get("/api/memories")
        assert listed.status_code == 200, listed.text
        shown = {m["id"]: m for m in listed.json()["memories"]}
        assert shown[bad]["recorded_at"] is None and shown[bad]["confidence"] is None
        assert shown[good]["confidence"] == 0.9
        assert alice.post("/api/context", json={"task": "cook dinner"}).status_code == 200
        # a drain through the bad record: pinning it commits, the feed refreshes it
        assert alice.post(f"/api/memories/{bad}/pin").status_code == 200
        assert _found(alice, "peanuts")[:1] == [bad]
        # another user's write reaches search at once
        mine = _remember(bob, "b1", "I am allergic to wasps", "Allergic to wasps", "wasps")
        assert _found(bob, "wasps")[:1] == [mine]
    logged = [r.getMessage() for r in caplog.records if bad in r.getMessage()]
    assert any("recordedAt" in m and "cannot be read" in m for m in logged), logged

    checked = kgmem(settings.home, "index", "check", "--json")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    report = json.loads(checked.stdout)["users"]
    assert report["me"]["matches"]  # read the same way on both sides: no false drift
    unreadable = {(u["node"], u["property"]) for u in report["me"]["unreadable"]}
    assert (bad, "recordedAt") in unreadable
    assert report["bob"]["matches"] and report["bob"]["unreadable"] == []
    shown_text = kgmem(settings.home, "index", "check").stdout
    assert f"me: UNREADABLE {bad}: recordedAt" in shown_text


def test_a_graph_named_under_a_user_but_not_kgmems_never_stops_the_server(
    settings: Settings,
) -> None:
    """A graph under a user's prefix whose name is not one of kgmem's (another tool's, or a
    benchmark's scratch graph left behind: ``urn:kgmem:user:me:kg-floor0``) stopped start-up
    with a GraphNameError. It is skipped: the server starts and the user is served."""
    with _served(settings) as (url, keys), _client(url, keys["alice"]) as alice:
        kept = _remember(alice, "c1", "I am allergic to peanuts", "Allergic to peanuts", "peanuts")
    store = ox.Store(str(settings.home / "store"))
    foreign = ox.NamedNode(f"{UserGraphs('me').kg}-floor0")
    store.add(ox.Quad(ox.NamedNode(kept), ox.NamedNode(str(KGM.title)), ox.Literal("x"), foreign))
    store.flush()
    del store
    with _served(settings) as (url, keys), _client(url, keys["alice"]) as alice:
        assert _found(alice, "peanuts")[:1] == [kept]
    checked = kgmem(settings.home, "index", "check", "--json")
    assert checked.returncode == 0, checked.stdout + checked.stderr
