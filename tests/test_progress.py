"""What long work tells a progress callback: steps, counted items, an ingest, a rebuild and
an ontology install."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from kgmem.clock import FixedClock
from kgmem.index import KuzuProjection
from kgmem.memory.source_inputs import MessageIn, NoteIn
from kgmem.memory.sources import SourceStore
from kgmem.ontology.outcomes import InstallProgress
from kgmem.progress import Steps, counted
from kgmem.store import OxigraphStore, QueryRegistry
from tests.ontology.test_catalogue import setup

Told = list[tuple[str, int, int]]


def listener() -> tuple[Told, Steps]:
    told: Told = []
    return told, Steps(lambda what, done, total: told.append((what, done, total)), 2)


def test_steps_tell_each_as_it_begins() -> None:
    told, steps = listener()
    assert steps.run("read", lambda: 7) == 7
    steps.start("write")
    assert told == [("read", 0, 2), ("write", 1, 2)]
    Steps(None, 2).start("read")  # silent without a callback


def test_counted_tells_an_item_once_the_caller_is_done_with_it() -> None:
    told: Told = []
    seen = []
    for item in counted(["a", "b"], "files", lambda *event: told.append(event)):
        seen.append((item, len(told)))
    assert seen == [("a", 0), ("b", 1)] and told == [("files", 1, 2), ("files", 2, 2)]
    assert list(counted(["a"], "files", None)) == ["a"]


def test_an_ingest_counts_its_messages_then_writes(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    sources = SourceStore(store, queries, FixedClock(datetime(2026, 1, 1, tzinfo=UTC)))
    told: Told = []
    msgs = [MessageIn(chat="c1", turn=i, role="user", text=f"m{i}") for i in range(3)]
    results = sources.ingest_messages("alice", msgs, lambda *event: told.append(event))
    assert len(results) == 3
    assert told == [("messages", 1, 3), ("messages", 2, 3), ("messages", 3, 3), ("writing", 0, 0)]
    told.clear()
    sources.ingest_notes("alice", [NoteIn(path="a.md", text="a")], lambda *e: told.append(e))
    assert told == [("notes", 1, 1), ("writing", 0, 0)]


def test_a_rebuild_tells_each_table_as_it_begins(
    store: OxigraphStore, queries: QueryRegistry, tmp_path: Path
) -> None:
    sources = SourceStore(store, queries, FixedClock(datetime(2026, 1, 1, tzinfo=UTC)))
    sources.ingest_messages("alice", [MessageIn(chat="c1", turn=0, role="user", text="hi")])
    told: Told = []
    with KuzuProjection(tmp_path / "kuzu", store, queries) as projection:
        fingerprint = projection.rebuild("alice", lambda *event: told.append(event))
    assert fingerprint.counts["Source"] == 1
    tables = ["Entity", "Memory", "Page", "Source", "RELATES", "ABOUT", "EVIDENCE", "PAGE_OF"]
    tables.append("SHARES_MEMORY")
    assert told == [(f"write {t}", i, 9) for i, t in enumerate(tables)]


def test_an_install_names_the_ontology_under_way(
    tmp_path: Path, store: OxigraphStore, queries: QueryRegistry
) -> None:
    catalogue, mirror = setup(tmp_path, store, queries)
    events: list[InstallProgress] = []
    catalogue.install(mirror=mirror, progress=events.append, download=False)
    begun = [(e.step, e.ontology_id, e.done) for e in events if e.step.endswith("ing")]
    assert begun[0] == ("fetching", "alpha", 0)  # before its first file, not after
    loads = [(e.step, e.ontology_id) for e in events if e.step.startswith("load")]
    assert loads == [
        (s, o) for o in ("alpha", "beta", "gamma", "delta") for s in ("loading", "load")
    ]
    assert events[-1].done == events[-1].total == 10  # the begun ones count nothing
