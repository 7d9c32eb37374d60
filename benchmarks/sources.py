"""Sources: ingest 100k messages, then time ``get`` of 25 ids and ``short_memory`` over 1k notes.

    .venv/bin/python benchmarks/sources.py [--messages 100000] [--notes 1000] [--runs 200]

Runs on an on-disk Oxigraph store in a temporary directory (as the server does). Messages are
ingested through ``SourceStore.ingest_messages`` in batches of 1000 (each batch one commit, with
the idempotence check per message). ``get`` fetches 25 random message ids (one index lookup
per id on the user's sources graph) plus 5 ids of another user, which must come back absent.
Prints a table, then ``sources_get25_ms=<p50>``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kgmem.clock import FixedClock
from kgmem.memory.model import Role
from kgmem.memory.source_inputs import MessageIn
from kgmem.memory.sources import SourceStore
from kgmem.store import NodeKind, OxigraphStore, QueryRegistry, UserGraphs, stable_node

USER, OTHER = "alice", "bob"
BATCH = 1000
TURNS = 50  # messages per chat


def message(i: int) -> MessageIn:
    role = (Role.USER, Role.ASSISTANT, Role.TOOL)[i % 3]
    return MessageIn(
        chat=f"chat-{i // TURNS}",
        turn=i % TURNS,
        role=role,
        text=f"message {i}: I moved to Lisbon in March and work at Acme on project {i % 97}.",
        timestamp=datetime(2025, 1, 1, tzinfo=UTC) + timedelta(seconds=i),
        tool_name="shell" if role is Role.TOOL else None,
        tool_outcome="success" if role is Role.TOOL else None,
    )


def ingest(sources: SourceStore, count: int) -> float:
    started = time.perf_counter()
    for start in range(0, count, BATCH):
        batch = [message(i) for i in range(start, min(start + BATCH, count))]
        sources.ingest_messages(USER, batch)
    return time.perf_counter() - started


def timed(runs: int, action: Callable[[], object]) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def p(samples: list[float], q: float) -> float:
    return sorted(samples)[min(int(q * len(samples)), len(samples) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        store = OxigraphStore(Path(tmp) / "store")
        clock = FixedClock(datetime(2026, 1, 1, tzinfo=UTC))
        sources = SourceStore(store, QueryRegistry.load(), clock)
        ingest_s = ingest(sources, args.messages)
        for i in range(args.notes):
            clock.current = datetime(2025, 6, 1, tzinfo=UTC) + timedelta(hours=5 * i)
            sources.remember(USER, f"short note {i}: prefers tea over coffee")
        clock.current = datetime(2025, 6, 1, tzinfo=UTC) + timedelta(hours=5 * args.notes)
        sources.ingest_messages(OTHER, [message(i) for i in range(5)])

        def ids() -> list[str]:
            picks = [rng.randrange(args.messages) for _ in range(25)]
            mine = [str(stable_node(USER, NodeKind.MESSAGE, *_key(i))) for i in picks]
            theirs = [str(stable_node(OTHER, NodeKind.MESSAGE, *_key(i))) for i in range(5)]
            return mine + theirs

        batches = [ids() for _ in range(args.runs)]
        got = [len(sources.get(USER, batch)) for batch in batches[:5]]
        assert all(n <= 25 for n in got), got  # the other user's five are never returned
        it = iter(batches)
        get25 = timed(args.runs, lambda: sources.get(USER, next(it)))
        short = timed(args.runs, lambda: sources.short_memory(USER))
        triples = store.count(UserGraphs(USER).sources)
        store.close()
    rate = args.messages / ingest_s
    print("| operation | p50 ms | p95 ms | notes |")
    print("|---|---|---|---|")
    print(f"| ingest {args.messages} messages | | | {ingest_s:.1f} s, {rate:,.0f} msg/s |")
    get_p50, get_p95 = p(get25, 0.5), p(get25, 0.95)
    print(f"| get 25 (+5 foreign) ids | {get_p50:.2f} | {get_p95:.2f} | {triples:,} triples |")
    print(
        f"| short_memory over {args.notes} notes | {p(short, 0.5):.2f} | {p(short, 0.95):.2f} | "
        f"mean {statistics.fmean(short):.2f} ms |"
    )
    print(f"sources_get25_ms={p(get25, 0.5):.3f}")


def _key(i: int) -> tuple[str, str]:
    return f"chat-{i // TURNS}", str(i % TURNS)


if __name__ == "__main__":
    main()
