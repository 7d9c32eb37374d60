"""Users' queries on a store on disk run in worker processes: a query past its time is
stopped (its process killed, its CPU freed), one that outgrows its memory budget is stopped
without growing the server, one user's runaway query does not hold up another user's, and
every query still reads exactly what was acknowledged before it started."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from rdflib import Literal, URIRef

from kgmem.errors import Forbidden, QueryRefused, QueryTimeout, QueryTooLarge, ResultLimitExceeded
from kgmem.store import (
    AskResult,
    Changeset,
    GraphResult,
    OxigraphStore,
    Quad,
    SelectResult,
    UserGraphs,
    UserQueries,
)
from kgmem.store.isolated import QueryProcesses, child
from kgmem.vocab import KGM
from tests.regressions.tripwire import tripwire

ALICE, BOB = UserGraphs("alice"), UserGraphs("bob")
# 300 triples: a four-way product is 8.1 billion rows (never ends), a three-way one sorted
# needs gigabytes
PRODUCT = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
SORTED = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?c ?f ?i LIMIT 1"
MB = 1024 * 1024


def _title(graph: URIRef, text: str) -> Quad:
    return Quad(URIRef(f"urn:x:{text}"), KGM.title, Literal(text), graph)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[OxigraphStore]:
    store = OxigraphStore(tmp_path / "store")
    quads = [_title(ALICE.kg, f"a{i}") for i in range(300)] + [_title(BOB.kg, "bob-kg")]
    store.commit(Changeset.of(quads))
    yield store
    store.close()


def _queries(store: OxigraphStore, *, timeout: float = 30, memory: int = 64 * MB) -> UserQueries:
    assert store.path is not None
    processes = QueryProcesses(store, store.path.with_name("snapshots"), memory_bytes=memory)
    return UserQueries(store, limit=100, timeout=timeout, processes=processes)


def _workers() -> list[int]:
    """Pids of this process's query workers that are still alive."""
    mine = str(os.getpid())
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if fields[1] == mine and fields[0] != "Z" and b"isolated/child.py" in cmdline:
            found.append(int(stat.parent.name))
    return found


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _resident(pid: int) -> int:
    return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_answers_match_the_store_and_stay_in_the_users_graphs(disk: OxigraphStore) -> None:
    queries = _queries(disk)
    try:
        titles = queries.run("alice", "SELECT ?t WHERE { ?m kgm:title ?t } ORDER BY ?t LIMIT 3")
        assert isinstance(titles, SelectResult)
        assert [str(r["t"]) for r in titles.rows] == ["a0", "a1", "a10"]
        assert queries.run("alice", "ASK { ?m kgm:title 'bob-kg' }") == AskResult(False)
        assert queries.run("bob", "ASK { ?m kgm:title 'bob-kg' }") == AskResult(True)
        graph = queries.run("bob", "CONSTRUCT WHERE { ?m kgm:title ?t }")
        assert isinstance(graph, GraphResult)
        assert graph.triples == ((URIRef("urn:x:bob-kg"), KGM.title, Literal("bob-kg")),)
        optional = queries.run(
            "bob", "SELECT ?m ?x WHERE { ?m kgm:title ?t OPTIONAL { ?m kgm:no ?x } }"
        )
        assert isinstance(optional, SelectResult) and optional.rows == (
            {"m": URIRef("urn:x:bob-kg")},
        )
        with pytest.raises(ResultLimitExceeded, match="more than 100"):
            queries.run("alice", "SELECT * WHERE { ?s ?p ?o }")
        with pytest.raises(Forbidden):
            queries.run("alice", f"SELECT * FROM <{BOB.kg}> WHERE {{ ?s ?p ?o }}")
        with pytest.raises(QueryRefused):
            queries.run("alice", f"CLEAR GRAPH <{ALICE.kg}>")
    finally:
        queries.close()
    assert disk.count(ALICE.kg) == 300


def test_a_query_reads_every_write_acknowledged_before_it(
    disk: OxigraphStore, tmp_path: Path
) -> None:
    queries = _queries(disk)
    ask = "ASK { ?m kgm:title 'late' }"
    try:
        assert queries.run("alice", ask) == AskResult(False)
        copies = sorted(p.name for p in (tmp_path / "snapshots").iterdir())
        assert queries.run("alice", ask) == AskResult(False)  # no write: the same copy
        assert sorted(p.name for p in (tmp_path / "snapshots").iterdir()) == copies
        disk.commit(Changeset.of([_title(ALICE.kg, "late")]))
        assert queries.run("alice", ask) == AskResult(True)
        # the superseded copy is gone once no query reads it
        assert sorted(p.name for p in (tmp_path / "snapshots").iterdir()) != copies
        assert len(list((tmp_path / "snapshots").iterdir())) == 1
    finally:
        queries.close()
    assert not (tmp_path / "snapshots").exists()
    assert _workers() == []


def test_a_timed_out_query_is_stopped_and_frees_its_cpu(disk: OxigraphStore) -> None:
    queries = _queries(disk, timeout=1.0)
    try:
        queries.run("alice", "ASK { }")  # a worker is up
        (worker,) = _workers()
        started = time.monotonic()
        with pytest.raises(QueryTimeout, match=r"did not finish within 1 s") as stopped:
            queries.run("alice", PRODUCT)
        assert time.monotonic() - started < 2.0  # the timeout plus one second at most
        assert not stopped.value.waited
        assert worker not in _workers()  # killed, not abandoned
        for _ in range(2):  # both slots are free again: nothing is left running
            assert queries.run("alice", "ASK { ?s ?p ?o }") == AskResult(True)
        (replacement,) = _workers()
        before = _cpu_seconds(replacement)
        time.sleep(0.5)
        assert _cpu_seconds(replacement) - before < 0.1  # an idle worker burns nothing
    finally:
        queries.close()


def test_a_query_that_outgrows_its_memory_is_stopped_not_the_server(
    disk: OxigraphStore,
) -> None:
    queries = _queries(disk, timeout=30, memory=64 * MB)
    server_before = _resident(os.getpid())
    try:
        started = time.monotonic()
        with pytest.raises(QueryTooLarge, match="more than the 64 MB"):
            queries.run("alice", SORTED)
        assert time.monotonic() - started < 5  # stopped as it grew, long before its timeout
        assert _resident(os.getpid()) - server_before < 64 * MB
        assert _workers() == []
        assert queries.run("alice", "ASK { ?s ?p ?o }") == AskResult(True)
        (worker,) = _workers()
        assert _resident(worker) < 100 * MB
    finally:
        queries.close()


def test_one_users_runaway_query_does_not_hold_up_another(disk: OxigraphStore) -> None:
    queries = _queries(disk, timeout=3.0)
    outcome: list[BaseException] = []

    def runaway() -> None:
        try:
            queries.run("alice", PRODUCT)
        except QueryTimeout as exc:
            outcome.append(exc)

    try:
        first = threading.Thread(target=runaway)
        first.start()
        time.sleep(0.3)
        # alice's second query waits for her first; bob's is answered meanwhile
        started = time.monotonic()
        assert queries.run("bob", "ASK { ?m kgm:title 'bob-kg' }") == AskResult(True)
        assert time.monotonic() - started < 1.0
        queries.timeout = 0.5
        with pytest.raises(QueryTimeout, match="waited") as waited:
            queries.run("alice", "ASK { }")
        assert waited.value.waited
        first.join(10)
        assert len(outcome) == 1
    finally:
        queries.close()


def _kernel_gives_network_namespaces() -> bool:
    probe = (
        "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
        "ok = libc.unshare(0x10000000 | 0x40000000) == 0 or "
        "(os.geteuid() == 0 and libc.unshare(0x40000000) == 0); print(ok)"
    )
    ran = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True)
    return ran.stdout.strip() == "True"


def test_a_worker_has_no_network_where_the_kernel_allows(disk: OxigraphStore) -> None:
    """Defence in depth behind the parse-tree check: a worker that left the network cannot
    connect anywhere, not even to a listener on this machine's loopback."""
    assert disk.path is not None
    processes = QueryProcesses(disk, disk.path.with_name("snapshots"), memory_bytes=64 * MB)
    queries = UserQueries(disk, limit=10, timeout=30, processes=processes)
    try:
        assert queries.run("alice", "ASK { }") == AskResult(True)
        assert processes.offline is _kernel_gives_network_namespaces()
    finally:
        queries.close()
    if processes.offline:  # what the worker did to itself, done again: the wire stays quiet
        with tripwire() as wire:
            port = wire.url.split(":")[2].split("/")[0]
            probe = (
                "import socket, sys; sys.path.insert(0, sys.argv[1]); import child; "
                "assert child._leave_the_network(); s = socket.socket(); s.settimeout(2); "
                f"s.connect(('127.0.0.1', {port}))"
            )
            ran = subprocess.run(
                [sys.executable, "-I", "-c", probe, str(Path(child.__file__).parent)],
                capture_output=True,
                text=True,
            )
            time.sleep(0.3)
        assert ran.returncode != 0 and "unreachable" in ran.stderr, ran.stderr
        assert wire.connections == []
