"""Runaway user queries against a real server: do they stop, free the CPU, stay small?

Starts ``kgmem serve`` in a process of its own (fresh home, loopback port), then for each
attack measures, while a bystander user keeps sending a small SPARQL query and ``/health``:

* ``answer s``: how long the attacker waited for its answer (the timeout is the floor);
* ``stop s``: from the request until the server's processes (the server and its query
  workers) are idle again, i.e. the query really stopped;
* ``cpu left s``: CPU the server's processes burned in the 2 s after the answer;
* ``rss growth MB``: peak resident memory of the server's processes over the idle baseline;
* ``others p95 ms``: the bystander's SPARQL p95 during the attack, next to its idle p95.

Attacks: two concurrent 4-way cartesian ``COUNT`` queries (as reported in #22), an
``ORDER BY ... LIMIT 1`` over a 27M-row product, and the GraphQL fragment bomb (20 levels).

    .venv/bin/python benchmarks/runaway.py [--timeout 10]

Last line: ``runaway_worst_stop_over_timeout_s=<seconds>`` (the goal is at most 1).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from served import Served, cpu_seconds, percentile, rss_bytes, served

_SIDE = " ".join(map(str, range(300)))
_FOUR = " ".join(f"VALUES ?v{i} {{ {_SIDE} }}" for i in range(4))
_THREE = " ".join(f"VALUES ?v{i} {{ {_SIDE} }}" for i in range(3))
PRODUCT = f"SELECT (COUNT(*) AS ?n) WHERE {{ {_FOUR} }}"  # 8.1 billion rows
SORTED = f"SELECT * WHERE {{ {_THREE} }} ORDER BY DESC(?v0) ?v1 ?v2 LIMIT 1"  # 27M rows sorted
SMALL = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def _bomb(depth: int = 20) -> str:
    parts = ["query { ...F0 }"]
    parts += [f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(depth)]
    parts.append(f"fragment F{depth} on Query {{ __typename }}")
    return "\n".join(parts)


@dataclass
class Server:
    url: str
    pid: int
    admin: str
    bystander: str
    attacker: str


def start(served: Served) -> Server:
    bystander, attacker = (served.add_user(uid) for uid in ("bystander", "attacker"))
    return Server(served.url, served.pid, served.admin, bystander, attacker)


def _sparql(
    server: Server, token: str, query: str, timeout: float = 60, client: httpx.Client | None = None
) -> httpx.Response:
    return (client or httpx).get(
        f"{server.url}/sparql",
        params={"query": query},
        headers={"Authorization": f"Bearer {token}"},
        timeout=timeout,
    )


def _graphql(server: Server, token: str, document: str) -> httpx.Response:
    return httpx.post(
        f"{server.url}/graphql",
        json={"query": document},
        headers={"Authorization": f"Bearer {token}"},
        timeout=60,
    )


class Bystander:
    """Sends a small SPARQL query (and /health) in a loop; records each latency."""

    def __init__(self, server: Server) -> None:
        self.server, self.latencies, self.health = server, [], []
        self.errors = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        client = httpx.Client()  # one connection: the latencies are the server's, not setup
        while not self._stop.is_set():
            started = time.monotonic()
            try:
                answer = _sparql(self.server, self.server.bystander, SMALL, 30, client)
                ok = answer.status_code == 200
            except httpx.HTTPError:
                ok = False
            self.latencies.append((time.monotonic() - started) * 1000)
            self.errors += not ok
            started = time.monotonic()
            client.get(f"{self.server.url}/health", timeout=30)
            self.health.append((time.monotonic() - started) * 1000)
            time.sleep(0.05)
        client.close()

    def __enter__(self) -> Bystander:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


def _p95(values: list[float]) -> float:
    return percentile(values, 95)


@dataclass
class Row:
    attack: str
    codes: str
    answer: float
    stop: float
    cpu_left: float
    rss_growth_mb: float
    others_p95: float
    health_p95: float
    others_errors: int


def attack(server: Server, name: str, requests: list[Callable[[], httpx.Response]]) -> Row:
    baseline_rss = rss_bytes(server.pid)
    peak = [baseline_rss]
    watching = threading.Event()

    def watch() -> None:
        while not watching.is_set():
            peak[0] = max(peak[0], rss_bytes(server.pid))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    answers: list[tuple[int, float]] = []
    started = time.monotonic()
    with Bystander(server) as bystander:

        def one(request: Callable[[], httpx.Response]) -> None:
            response = request()
            code = (
                response.json().get("error", {}).get("code") if response.status_code != 200 else ""
            )
            answers.append((response.status_code, time.monotonic() - started, code))

        threads = [threading.Thread(target=one, args=(r,)) for r in requests]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        answered = time.monotonic()
        cpu_at_answer = cpu_seconds(server.pid)
        # stopped = the server's processes burn < 5% of a CPU over a 0.2 s window
        stop = None
        previous, since = cpu_at_answer, time.monotonic()
        while time.monotonic() - answered < 60:
            time.sleep(0.2)
            now_cpu, now = cpu_seconds(server.pid), time.monotonic()
            if now_cpu - previous < 0.05 * (now - since) + 0.02:
                stop = since - started
                break
            previous, since = now_cpu, now
        time.sleep(max(0.0, answered + 2 - time.monotonic()))
        cpu_left = cpu_seconds(server.pid) - cpu_at_answer
    watching.set()
    watcher.join()
    return Row(
        name,
        ",".join(f"{s} {c}".strip() for s, _, c in answers),
        max(t for _, t, _ in answers),
        float("nan") if stop is None else stop,
        cpu_left,
        (peak[0] - baseline_rss) / 2**20,
        _p95(bystander.latencies),
        _p95(bystander.health),
        bystander.errors,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=10.0, help="sparql_timeout_seconds")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="kgmem-runaway-") as home,
        served(Path(home), sparql_timeout_seconds=str(args.timeout)) as running,
    ):
        server = start(running)
        _sparql(server, server.bystander, "ASK { }")  # workers up: the baseline holds them
        with Bystander(server) as idle:
            time.sleep(3)
        rows = [
            attack(
                server,
                "2 users x 4-way COUNT",
                [
                    lambda: _sparql(server, server.admin, PRODUCT),
                    lambda: _sparql(server, server.attacker, PRODUCT),
                ],
            ),
            attack(
                server,
                "sparql ORDER BY product",
                [lambda: _sparql(server, server.admin, SORTED)],
            ),
            attack(
                server,
                "graphql fragment bomb",
                [lambda: _graphql(server, server.admin, _bomb())],
            ),
        ]
    print(
        f"timeout {args.timeout:g} s; bystander idle: sparql p95 {_p95(idle.latencies):.1f} ms, "
        f"/health p95 {_p95(idle.health):.1f} ms"
    )
    header = (
        "attack",
        "answers",
        "answer s",
        "stop s",
        "cpu left s",
        "rss growth MB",
        "others p95 ms",
        "health p95 ms",
        "others errors",
    )
    print(" | ".join(header))
    for r in rows:
        print(
            " | ".join(
                [
                    r.attack,
                    r.codes,
                    f"{r.answer:.2f}",
                    f"{r.stop:.2f}",
                    f"{r.cpu_left:.2f}",
                    f"{r.rss_growth_mb:.0f}",
                    f"{r.others_p95:.1f}",
                    f"{r.health_p95:.1f}",
                    str(r.others_errors),
                ]
            )
        )
    sparql = [r for r in rows if r.attack.startswith("sparql") or r.attack.startswith("2 users")]
    worst = max(r.stop - args.timeout if r.stop == r.stop else float("inf") for r in sparql)
    print(f"runaway_worst_stop_over_timeout_s={worst:.2f}")


if __name__ == "__main__":
    main()
