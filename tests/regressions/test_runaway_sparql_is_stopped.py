"""#22: two cartesian-product queries answered ``query_timeout`` kept two threads at 100% CPU
(every user's SPARQL failed until a restart), and an ``ORDER BY ... LIMIT 1`` over the same
product grew the server by gigabytes. A timed-out query must stop, free its CPU, stay within
a memory bound, and other users' queries must keep answering meanwhile."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import httpx

from tests.api.test_sparql import running_world
from tests.store.test_isolated_queries import _cpu_seconds, _resident, _workers

_SIDE = " ".join(map(str, range(300)))
_FOUR = " ".join(f"VALUES ?v{i} {{ {_SIDE} }}" for i in range(4))
_THREE = " ".join(f"VALUES ?v{i} {{ {_SIDE} }}" for i in range(3))
PRODUCT = f"SELECT (COUNT(*) AS ?n) WHERE {{ {_FOUR} }}"  # 8.1 billion rows: hours
# 27 million rows held for the sort: gigabytes
SORTED = f"SELECT * WHERE {{ {_THREE} }} ORDER BY DESC(?v0) ?v1 ?v2 LIMIT 1"


def _sparql(url: str, token: str, query: str) -> httpx.Response:
    return httpx.get(
        f"{url}/sparql",
        params={"query": query},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/sparql-results+json"},
        timeout=30,
    )


def test_runaway_queries_stop_and_others_keep_answering(tmp_path: Path) -> None:
    with running_world(tmp_path / "home", sparql_timeout_seconds=2.0) as world:
        assert _sparql(world.url, world.bob, "ASK { }").status_code == 200
        rss_before = _resident(os.getpid())
        answers: dict[str, tuple[httpx.Response, float]] = {}

        def attack(name: str, token: str, query: str) -> None:
            started = time.monotonic()
            answers[name] = (_sparql(world.url, token, query), time.monotonic() - started)

        attackers = [
            threading.Thread(target=attack, args=("count-alice", world.alice, PRODUCT)),
            threading.Thread(target=attack, args=("count-admin", world.admin, PRODUCT)),
        ]
        for thread in attackers:
            thread.start()
        time.sleep(0.5)
        # two users' runaway queries run: bob's is answered meanwhile
        started = time.monotonic()
        bob = _sparql(world.url, world.bob, "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        assert bob.status_code == 200, bob.text
        assert time.monotonic() - started < 1.5
        for thread in attackers:
            thread.join(30)
        for name in ("count-alice", "count-admin"):
            answer, took = answers[name]
            assert answer.status_code == 400 and answer.json()["error"]["code"] == "query_timeout"
            assert took < 3.0, f"{name} answered after {took:.1f} s"  # timeout plus one second
        time.sleep(0.2)
        busy = {pid: _cpu_seconds(pid) for pid in _workers()}
        time.sleep(1.0)
        assert all(_cpu_seconds(pid) - cpu < 0.1 for pid, cpu in busy.items() if pid in _workers())

        started = time.monotonic()
        sorted_answer = _sparql(world.url, world.alice, SORTED)
        assert sorted_answer.status_code == 400
        assert sorted_answer.json()["error"]["code"] in {"query_too_large", "query_timeout"}
        assert time.monotonic() - started < 3.0
        assert _resident(os.getpid()) - rss_before < 256 * 1024 * 1024
        assert sum(_resident(pid) for pid in _workers()) < 256 * 1024 * 1024
        assert _sparql(world.url, world.alice, "ASK { }").status_code == 200
        assert httpx.get(f"{world.url}/health", timeout=1).status_code == 200
