"""Reads under write load: N loopback clients mix writes and reads against a real server.

Starts ``kgmem serve`` on a fresh home (a process of its own, a free loopback port) with
N/2 users, two clients each (an agent and its host app share a user, so one client's
search meets the other's write batches). For ``--seconds`` every client loops over a mix:

* ``ingest``: two chat turns (``/api/messages``);
* ``draft``: five turns ingested, then a batch draft of five memories quoting them
  (``/api/memories/batch-draft``), then at once a search for a word only that batch wrote
  (``own-search``: the writer must read its own write);
* ``remember``: a short note (``/api/remember``);
* ``search``: ``/api/search`` for a word some client of the user wrote;
* ``graphql``: the same search, or the newest memories, through ``/graphql``.

First one client searches alone for ``--idle-seconds`` (the floor, in the same run). Then
it prints per operation the count, p50/p95/p99 in ms and 5xx answers; then every write
the server acknowledged (messages, notes, memories) is looked up in the store afterwards
(SPARQL, per user) and the lost ones counted. Last lines: ``load_search_p95_ms=`` and
``load_lost_writes=``. Goal on a 2-core machine: search p95 <= 50 ms with 8 clients, no
write lost, no 5xx.

    .venv/bin/python benchmarks/load.py [--clients 8] [--seconds 60] [--seed 7]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from served import Served, percentile, served

_WEIGHTS = {"search": 35, "graphql": 15, "ingest": 15, "draft": 20, "remember": 15}
_LIKES = ("kgm:likes", "kgm:hobby", "kgm:dislikes", "kgm:allergicTo")
_NOUNS = [
    "tea",
    "coffee",
    "jazz",
    "chess",
    "hiking",
    "sushi",
    "tennis",
    "opera",
    "kayaking",
    "pottery",
    "rugby",
    "salsa",
    "sailing",
    "cycling",
    "baking",
    "poetry",
    "karate",
    "origami",
    "surfing",
    "skiing",
    "climbing",
    "painting",
    "gardening",
]
_GRAPHQL_SEARCH = (
    "query S($q: String!) { search(query: $q) { ... on SearchResults { hits { id } } } }"
)
_GRAPHQL_NEWEST = "{ memories(first: 5) { nodes { id title status } } }"
_STORED = """SELECT ?s WHERE {{ ?s a <https://w3id.org/kgmem/ns#{kind}> .
  FILTER(STRSTARTS(STR(?s), "https://w3id.org/kgmem/user/{uid}/")) }}"""


@dataclass
class Tally:
    """What the clients saw, shared by all of them (under a lock)."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    server_errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    other_errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    acknowledged: dict[str, dict[str, set[str]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(set))
    )  # uid -> kind -> ids
    own_misses: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, op: str, started: float, answer: httpx.Response | None) -> None:
        with self.lock:
            self.latencies[op].append((time.perf_counter() - started) * 1000)
            if answer is None:
                self.other_errors[op] += 1
            elif answer.status_code >= 500:
                self.server_errors[op] += 1
            elif answer.status_code >= 400:
                self.other_errors[op] += 1

    def stored(self, uid: str, kind: str, ids: list[str]) -> None:
        with self.lock:
            self.acknowledged[uid][kind].update(ids)


class Client:
    """One loopback client of one user, looping over the mix until ``stop`` is set."""

    def __init__(self, url: str, uid: str, key: str, name: str, tally: Tally, seed: int) -> None:
        self.uid, self.name, self.tally = uid, name, tally
        self.http = httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120
        )
        self.random = random.Random(seed)
        self.turn = 0
        self.serial = 0
        self.words: list[str] = []  # words this client wrote (others of the user search them)

    def _call(self, op: str, method: str, path: str, **kw: object) -> httpx.Response | None:
        started = time.perf_counter()
        try:
            answer = self.http.request(method, path, **kw)  # type: ignore[arg-type]
        except httpx.HTTPError:
            answer = None
        self.tally.record(op, started, answer)
        return answer if answer is not None and answer.status_code < 400 else None

    def _word(self) -> str:
        self.serial += 1
        return f"{self.random.choice(_NOUNS)}{self.name}x{self.serial}"

    def _ingest(self, texts: list[str]) -> list[tuple[int, str]] | None:
        chat = f"{self.name}-chat"
        turns = []
        for text in texts:
            turns.append({"chat": chat, "turn": self.turn, "role": "user", "text": text})
            self.turn += 1
        answer = self._call("ingest", "POST", "/api/messages", json={"messages": turns})
        if answer is None:
            return None
        self.tally.stored(self.uid, "Message", [m["id"] for m in answer.json()["messages"]])
        return [(t["turn"], t["text"]) for t in turns]  # type: ignore[misc]

    def ingest(self) -> None:
        words = [self._word() for _ in range(2)]
        self._ingest([f"Yesterday I talked about {w} with a friend." for w in words])
        self.words += words

    def draft(self) -> None:
        words = [self._word() for _ in range(5)]
        said = self._ingest([f"I really enjoy {w} on weekends." for w in words])
        if said is None:
            return
        chat = f"{self.name}-chat"
        drafts = [
            {
                "kind": "semantic",
                "title": f"Enjoys {w}",
                "confidence": 0.9,
                "claims": [{"subject": "I", "predicate": self.random.choice(_LIKES), "object": w}],
                "evidence": [{"source": f"chat:{chat}#{turn}", "quote": f"I really enjoy {w}"}],
            }
            for w, (turn, _) in zip(words, said, strict=True)
        ]
        answer = self._call("draft", "POST", "/api/memories/batch-draft", json={"drafts": drafts})
        if answer is None:
            return
        items = answer.json()["items"]
        made = [i["memory"] for i in items if i["memory"] and i["outcome"] != "refused"]
        self.tally.stored(self.uid, "Memory", made)
        self.words += words
        active = [w for w, i in zip(words, items, strict=True) if i["outcome"] == "active"]
        if active:  # the writer reads its own write at once
            found = self._call("own-search", "GET", "/api/search", params={"q": active[0]})
            ids = [] if found is None else [h["id"] for h in found.json()["results"]]
            if not set(made) & set(ids):
                with self.tally.lock:
                    self.tally.own_misses += 1

    def remember(self) -> None:
        word = self._word()
        answer = self._call("remember", "POST", "/api/remember", json={"text": f"check {word}"})
        if answer is not None:
            self.tally.stored(self.uid, "ShortNote", [answer.json()["id"]])
            self.words.append(word)

    def search(self, pool: list[str]) -> None:
        query = self.random.choice(pool) if pool else self.random.choice(_NOUNS)
        self._call("search", "GET", "/api/search", params={"q": query})

    def graphql(self, pool: list[str]) -> None:
        if self.random.random() < 0.5:
            query = self.random.choice(pool) if pool else self.random.choice(_NOUNS)
            body = {"query": _GRAPHQL_SEARCH, "variables": {"q": query}}
        else:
            body = {"query": _GRAPHQL_NEWEST}
        self._call("graphql", "POST", "/graphql", json=body)

    def run(self, stop: threading.Event, peers: list[Client]) -> None:
        ops, weights = zip(*_WEIGHTS.items(), strict=True)
        while not stop.is_set():
            op = self.random.choices(ops, weights)[0]
            if op in ("search", "graphql"):
                pool = [w for peer in peers for w in peer.words[-50:]]
                getattr(self, op)(pool)
            else:
                getattr(self, op)()
        self.http.close()


def _alone(client: Client, tally: Tally, seconds: float) -> list[float]:
    """The floor in the same run: one client writes a little, then searches alone for
    ``seconds``; its search latencies (ms), kept apart from the load's."""
    for _ in range(10):
        client.draft()
    pool = list(client.words)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        client.search(pool)
    with tally.lock:
        found = tally.latencies.pop("search", [])
        for op in ("draft", "ingest", "own-search"):
            tally.latencies.pop(op, None)
    return found


def lost_writes(server: Served, keys: dict[str, str], tally: Tally) -> dict[str, int]:
    """Per kind: acknowledged writes the store does not hold."""
    lost: dict[str, int] = defaultdict(int)
    for uid, kinds in tally.acknowledged.items():
        headers = {"Authorization": f"Bearer {keys[uid]}", "Accept": "application/json"}
        for kind, ids in kinds.items():
            answer = httpx.get(
                f"{server.url}/sparql",
                params={"query": _STORED.format(kind=kind, uid=uid)},
                headers=headers,
                timeout=60,
            )
            answer.raise_for_status()
            held = {b["s"]["value"] for b in answer.json()["results"]["bindings"]}
            lost[kind] += len(ids - held)
    return lost


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--idle-seconds", type=float, default=5.0, help="search alone first")
    args = parser.parse_args()
    tally = Tally()
    with (
        tempfile.TemporaryDirectory(prefix="kgmem-load-") as home,
        served(Path(home)) as server,
    ):
        users = [f"user{n}" for n in range(max(1, args.clients // 2))]
        keys = {uid: server.add_user(uid) for uid in users}
        clients = [
            Client(server.url, uid, keys[uid], f"c{n}", tally, args.seed + n)
            for n, uid in enumerate(users[n % len(users)] for n in range(args.clients))
        ]
        idle = _alone(clients[0], tally, args.idle_seconds)
        stop = threading.Event()
        threads = [
            threading.Thread(
                target=c.run, args=(stop, [p for p in clients if p.uid == c.uid]), daemon=True
            )
            for c in clients
        ]
        for thread in threads:
            thread.start()
        time.sleep(args.seconds)
        stop.set()
        for thread in threads:
            thread.join()
        lost = lost_writes(server, keys, tally)
    print(
        f"alone first: {len(idle)} searches, p50 {percentile(idle, 50):.1f} ms, "
        f"p95 {percentile(idle, 95):.1f} ms"
    )
    print(f"{args.clients} clients, {len(users)} users, {args.seconds:g} s")
    print(f"{'operation':<11} {'count':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'5xx':>4}")
    for op in ("search", "own-search", "graphql", "ingest", "draft", "remember"):
        found = tally.latencies.get(op, [])
        p50, p95, p99 = (percentile(found, p) for p in (50, 95, 99))
        errors = tally.server_errors.get(op, 0)
        print(f"{op:<11} {len(found):>6} {p50:>8.1f} {p95:>8.1f} {p99:>8.1f} {errors:>4}")
    acknowledged = sum(len(ids) for kinds in tally.acknowledged.values() for ids in kinds.values())
    print(f"writes acknowledged {acknowledged}, lost {sum(lost.values())} {dict(lost)}")
    print(f"4xx or failed requests: {dict(tally.other_errors)}")
    print(f"own write not found by the writer's next search: {tally.own_misses}")
    print(f"load_5xx={sum(tally.server_errors.values())}")
    print(f"load_search_p95_ms={percentile(tally.latencies.get('search', []), 95):.1f}")
    print(f"load_lost_writes={sum(lost.values())}")


if __name__ == "__main__":
    main()
