"""kgmem at scale, measured from outside a real server: memory, start time, search latency and
repair after drift, per store size.

    .venv/bin/python benchmarks/scale.py [--memories 100000,1000000] [--users N]
                                          [--searches 1000] [--batches 20] [--home DIR]
                                          [--no-drift]

For each size, a store of N active memories spread evenly over ``--users`` users (1: all in
one) is built on disk: each user's memories are ``search_latency.py``'s (people, places,
employers, events, how-tos, codes over two years, evidence quoting chats), bulk-loaded as the
quads the gate writes for them (``search_latency.build``: the documented fast path; the
entities, records, facts and sources are what ``record_quads``, ``fact_quads`` and the source
writer make), and the graph projection is built for each user, as a server that wrote them
would have left it (with the digests of the user's nodes, and each user's search index built
and saved). Then, timed from outside:

- ``kgmem serve`` starts on the store (a process of its own, ``served.py``): seconds from
  spawn to its first answered search (``/health`` answers once start-up is done; the first
  user's key is made before it, the other users' after), and the server's resident memory
  (its process tree, from ``/proc``) right after;
- ``--searches`` searches through REST (``GET /api/search``, k=8) of
  ``search_latency.queries`` (plain, time cues, filters, common words), each as one of the
  users, one at a time: p50/p95/p99 as the client waits, and the server's memory after;
- forced drift: the server stops, one user's memory is written into the store behind the
  projections' back with the user's stamp moved and no outbox entry (what putting back a
  backup leaves), and the server starts again: seconds to that user's first answered
  search ("drift s": from their saved search index, each hit checked with the store, while
  the repair runs behind), and to the end of the repair of their graph projection and
  search index ("repair s": ``/health`` says nothing is left to repair); ``--no-drift``
  leaves this out (both print 0);
- ``--batches`` 25-draft batches through the gate at the same size, in process
  (``batch_draft.run``: its own store of that size, one user), p50 beside the storage floor
  of the same batch replayed natively (``storage_floor.py``), and their ratio (with
  ``--home``, that store is kept in its ``batch`` directory too).

Prints a table per size and, for the largest size measured, the last lines
``scale_rss_mb=``, ``scale_start_s=``, ``scale_search_p95_ms=``,
``scale_batch_over_floor=`` and, when the size is 1,000,000, the same with ``_1m``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import batch_draft
import httpx
from batch_draft import USER
from kept import keep, kept
from rdflib import Literal
from search_latency import NOW, Cast, Query, build, queries
from served import Served, percentile, rss_bytes, served

from kgmem.api.services import build_services
from kgmem.clock import FixedClock
from kgmem.config import load_settings
from kgmem.index.feed_outbox import stamp_node
from kgmem.memory.model import MemoryStatus
from kgmem.store import USER_NODE_BASE, Changeset, OxigraphStore, Quad, UserGraphs
from kgmem.vocab import KGM

K = 8
START_WITHIN = 3600  # seconds a start may take before it counts as failed
_PARAMS = {"kinds": "kind", "tags": "tag", "entity": "entity"}


@dataclass
class Size:
    memories: int
    users: int
    quads: int = 0
    load_s: float = 0.0
    projection_s: float = 0.0
    disk_mb: float = 0.0
    start_s: float = 0.0
    rss_start_mb: float = 0.0
    rss_after_mb: float = 0.0
    search_ms: list[float] = field(default_factory=list)
    failed: int = 0
    found: int = 0  # results the searches returned
    index_s: float = 0.0
    drift_start_s: float = 0.0
    drift_repair_s: float = 0.0
    batch_ms: float = 0.0
    floor_ms: float = 0.0

    @property
    def over_floor(self) -> float:
        return self.batch_ms / self.floor_ms if self.floor_ms else 0.0


def user_ids(users: int) -> list[str]:
    return [USER] if users == 1 else [f"u{n:03d}" for n in range(users)]


def make_store(home: Path, size: Size) -> dict[str, Cast]:
    """Build the store of ``size`` in ``home``: every user's memories and projection."""
    casts = {uid: Cast(size.memories // size.users) for uid in user_ids(size.users)}
    settings = load_settings(env={"KGMEM_HOME": str(home)})
    services = build_services(settings, clock=FixedClock(NOW))
    try:
        for uid, cast in casts.items():
            seconds, _ = build(services, cast, uid)
            size.load_s += seconds
            started = time.perf_counter()
            services.projection.rebuild(uid)
            services.digests.settle(uid)  # what the server's warm-up reads once
            size.projection_s += time.perf_counter() - started
            started = time.perf_counter()
            services.lexical.rebuild(uid)  # and saved, as a server leaves it
            size.index_s += time.perf_counter() - started
        size.quads = services.store.count()
    finally:
        services.close()
    size.disk_mb = sum(f.stat().st_size for f in home.rglob("*") if f.is_file()) / 2**20
    return casts


def settle_digests(home: Path, users: list[str]) -> float:
    """Seconds to read the digests of the users of a store built before they were kept
    (once: a server's warm-up would, during the searches measured)."""
    started = time.perf_counter()
    services = build_services(load_settings(env={"KGMEM_HOME": str(home)}), clock=FixedClock(NOW))
    try:
        for uid in users:
            services.digests.settle(uid)
    finally:
        services.close()
    return time.perf_counter() - started


def _first_search(server: Served, token: str, deadline: float = START_WITHIN) -> None:
    answer = httpx.get(
        f"{server.url}/api/search",
        params={"q": "dinner", "k": K},
        headers={"Authorization": f"Bearer {token}"},
        timeout=deadline,
    )
    answer.raise_for_status()


def _params(uid: str, query: Query) -> dict[str, Any]:
    params: dict[str, Any] = {"q": query.text, "k": K}
    for name, value in query.options.items():
        if name == "entity" and uid != USER:
            value = value.replace(f"{USER_NODE_BASE}{USER}/", f"{USER_NODE_BASE}{uid}/")
        params[_PARAMS[name]] = value
    return params


def measure(
    home: Path, size: Size, casts: dict[str, Cast], searches: int, drift_too: bool = True
) -> None:
    started = time.perf_counter()
    with served(home, start_within=START_WITHIN) as server:
        first = next(iter(casts))
        tokens = {first: server.add_user(first)}  # the others' keys after: not start-up
        _first_search(server, tokens[first])
        size.start_s = time.perf_counter() - started
        size.rss_start_mb = rss_bytes(server.pid) / 2**20
        tokens |= {uid: server.add_user(uid) for uid in casts if uid != first}
        per_user = max(searches // len(casts), 1)
        with httpx.Client(timeout=60) as client:
            for uid, cast in casts.items():
                auth = {"Authorization": f"Bearer {tokens[uid]}"}
                for query in queries(cast, per_user):
                    began = time.perf_counter()
                    answer = client.get(
                        f"{server.url}/api/search", params=_params(uid, query), headers=auth
                    )
                    size.search_ms.append((time.perf_counter() - began) * 1000)
                    size.failed += answer.status_code != 200
                    if answer.status_code == 200:
                        size.found += len(answer.json()["results"])
        size.rss_after_mb = rss_bytes(server.pid) / 2**20
    s = size.search_ms
    print(
        f"  start {size.start_s:.1f} s, RSS {size.rss_start_mb:.0f} / {size.rss_after_mb:.0f} MB,"
        f" search p50/p95/p99 {percentile(s, 50):.1f} / {percentile(s, 95):.1f} /"
        f" {percentile(s, 99):.1f} ms, {size.failed} failed",
        flush=True,
    )
    if not drift_too:
        return
    drifted = next(reversed(casts))
    drift(home, drifted)
    started = time.perf_counter()
    with served(home, start_within=START_WITHIN) as server:
        _first_search(server, tokens[drifted])  # answered from the saved index, checked
        size.drift_start_s = time.perf_counter() - started
        _repaired(server)
        size.drift_repair_s = time.perf_counter() - started


def _repaired(server: Served) -> None:
    """Wait until ``/health`` says start-up's background work is done: every search index
    held and every drifted projection (graph and search) repaired."""
    deadline = time.monotonic() + START_WITHIN
    while time.monotonic() < deadline:
        index = httpx.get(f"{server.url}/health", timeout=60).json()["index"]
        if index["warm"] and not index["repairing"]:
            return
        time.sleep(0.5)
    raise TimeoutError(f"the server was still repairing after {START_WITHIN} s")


def drift(home: Path, uid: str) -> None:
    """Archive one of ``uid``'s active memories behind the projections' back: its status
    changed in the store and the user's stamp moved, with no outbox entry and no
    projection told (what putting back a backup of the store leaves; kgmem's own writes
    cannot: the stamp moves in the same commit as the write, and the outbox entry with it)."""
    store = OxigraphStore(home / "store")
    try:
        kg, outbox, node = UserGraphs(uid).kg, UserGraphs(uid).outbox, stamp_node(uid)
        active = MemoryStatus.ACTIVE.iri
        found = next(iter(store.quads(kg, None, KGM.status, active)))
        archived = Quad(found.subject, KGM.status, MemoryStatus.ARCHIVED.iri, kg)
        stamp = Quad(node, KGM.stamp, Literal(time.time_ns()), outbox)
        store.commit(Changeset.of([archived, stamp], [found, *store.quads(outbox, node)]))
    finally:
        store.close()


def report(size: Size) -> list[str]:
    s = size.search_ms
    return [
        f"{size.memories:>9} {size.users:>5} {size.quads:>10} {size.load_s:>7.0f} "
        f"{size.projection_s:>7.0f} {size.disk_mb:>7.0f} {size.start_s:>7.1f} "
        f"{size.rss_start_mb:>7.0f} {size.rss_after_mb:>7.0f} {percentile(s, 50):>6.1f} "
        f"{percentile(s, 95):>6.1f} {percentile(s, 99):>6.1f} {size.failed:>4} "
        f"{size.found / max(len(s), 1):>5.1f} {size.drift_start_s:>7.1f} "
        f"{size.drift_repair_s:>8.1f} "
        f"{size.batch_ms:>6.0f} {size.floor_ms:>6.0f} {size.over_floor:>5.1f}"
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", default="100000")
    parser.add_argument("--users", type=int, default=1)
    parser.add_argument("--searches", type=int, default=1000)
    parser.add_argument(
        "--batches", type=int, default=20, help="timed 25-draft batches per size (0: none)"
    )
    parser.add_argument(
        "--home", type=Path, help="build here and keep it (one size; reused when built)"
    )
    parser.add_argument(
        "--no-drift",
        action="store_true",
        help="skip the forced drift (one user holding 1M: its repair rebuilds 1M memories)",
    )
    args = parser.parse_args()
    sizes = [Size(int(n), args.users) for n in args.memories.split(",")]
    header = (
        f"{'memories':>9} {'users':>5} {'quads':>10} {'load s':>7} {'graph s':>7} "
        f"{'disk MB':>7} {'start s':>7} {'RSS MB':>7} {'after':>7} {'p50 ms':>6} "
        f"{'p95':>6} {'p99':>6} {'fail':>4} {'hits':>5} {'drift s':>7} {'repair s':>8} "
        f"{'batch':>6} {'floor':>6} {'x':>5}"
    )
    for size in sizes:
        home = args.home or Path(tempfile.mkdtemp(prefix="kgmem-scale-"))
        try:
            print(f"N={size.memories} over {size.users} users in {home}", flush=True)
            built = {"memories": size.memories, "users": size.users}
            if kept(home, built) is not None:  # built before (--home): measured again as is
                casts = {uid: Cast(size.memories // size.users) for uid in user_ids(size.users)}
                size.projection_s = settle_digests(home, list(casts))
            else:
                casts = make_store(home, size)
                keep(home, built)
            print(
                f"  built: {size.quads} quads, load {size.load_s:.0f} s, graph "
                f"{size.projection_s:.0f} s, {size.disk_mb:.0f} MB",
                flush=True,
            )
            measure(home, size, casts, args.searches, drift_too=not args.no_drift)
            if args.batches:
                print("  the 25-draft batch at this size (batch_draft.py, in process):")
                samples, _, _, _, _, floor = batch_draft.run(
                    size.memories,
                    args.batches,
                    None,
                    None,
                    floor=True,
                    home=args.home / "batch" if args.home else None,
                )
                size.batch_ms = statistics.median(samples)
                size.floor_ms = floor.total_ms if floor is not None else 0.0
            print(header)
            print("\n".join(report(size)), flush=True)
        finally:
            if args.home is None:
                shutil.rmtree(home, ignore_errors=True)
    print(header)
    for size in sizes:
        print("\n".join(report(size)))
    last = sizes[-1]
    lines = {
        "rss_mb": last.rss_after_mb,
        "start_s": last.start_s,
        "search_p95_ms": percentile(last.search_ms, 95),
        "batch_over_floor": last.over_floor,
    }
    for suffix in ("", "_1m") if last.memories == 1_000_000 else ("",):
        for name, value in lines.items():
            print(f"scale_{name}{suffix}={value:.1f}")


if __name__ == "__main__":
    main()
