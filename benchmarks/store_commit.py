"""Store-layer costs: start-up parse of every named query, atomic commits, bound selects.

    .venv/bin/python benchmarks/store_commit.py [--memories 10000] [--disk DIR]

Prints a table, then `store_commit_p50_ms=<value>` (one 25-memory changeset commit).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs
from kgmem.store.queries import parse_query
from kgmem.vocab import KGM

GRAPHS = UserGraphs("bench")


def memory_quads(i: int) -> list[Quad]:
    m = URIRef(f"urn:kgmem:bench:memory:{i}")
    g = GRAPHS.kg
    return [
        Quad(m, RDF.type, KGM.Memory, g),
        Quad(m, KGM.kind, KGM.semantic, g),
        Quad(m, KGM.status, KGM.active, g),
        Quad(m, KGM.title, Literal(f"memory number {i}"), g),
        Quad(m, KGM.confidence, Literal("0.9", datatype=XSD.double), g),
        Quad(m, KGM.tag, Literal(f"tag{i % 50}"), g),
    ]


def timed(fn, repeat: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append((time.perf_counter() - start) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--disk", type=Path, default=None)
    args = parser.parse_args()
    directory = args.disk or Path(tempfile.mkdtemp()) / "store"

    registry_ms = timed(QueryRegistry.load, 5)
    store = OxigraphStore(directory)
    for start in range(0, args.memories, 1000):
        quads = [q for i in range(start, min(start + 1000, args.memories)) for q in memory_quads(i)]
        store.commit(Changeset.of(quads))

    counter = iter(range(args.memories, args.memories + 10_000))

    def commit_batch() -> None:
        quads = [q for _ in range(25) for q in memory_quads(next(counter))]
        store.commit(Changeset.of(quads))

    def update_batch() -> None:
        i = next(counter)
        store.commit(Changeset.of(memory_quads(i), memory_quads(i - 1)))

    by_id = parse_query(
        "bench/by_id", "SELECT ?g ?m ?title WHERE { GRAPH ?g { ?m kgm:title ?title } }", "bench"
    )

    def select_one() -> None:
        store.select(by_id, {"g": GRAPHS.kg, "m": URIRef("urn:kgmem:bench:memory:42")})

    rows = [
        ("parse every named query", registry_ms),
        ("commit 25 memories (150 quads, extend)", timed(commit_batch, 50)),
        ("commit remove+add one memory (update)", timed(update_batch, 50)),
        ("select one memory by bound IRI", timed(select_one, 200)),
    ]
    print(f"store: {directory}  memories: {args.memories}  triples: {store.count()}")
    print(f"{'operation':<42} {'p50 ms':>8} {'p95 ms':>8}")
    for name, samples in rows:
        p95 = statistics.quantiles(samples, n=20)[18] if len(samples) >= 20 else max(samples)
        print(f"{name:<42} {statistics.median(samples):>8.2f} {p95:>8.2f}")
    store.close()
    print(f"store_commit_p50_ms={statistics.median(rows[1][1]):.2f}")


if __name__ == "__main__":
    main()
