"""The search index on disk and the stamps that say when a projection can be trusted.

Real services on a real home (on-disk Oxigraph and Kùzu, the feed draining), closed and
built again the way a server restarts; files damaged the way disks and people damage them.
"""

from __future__ import annotations

import itertools
import pickle
import struct
import threading
import time
import zlib
from array import array
from pathlib import Path
from typing import Any

import pytest
from rdflib import Literal, URIRef

from kgmem.api.services import Services, build_services
from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.index import LexicalIndex
from kgmem.index.feed_outbox import stamp_node
from kgmem.index.lexical.docs import FIELD_WEIGHTS
from kgmem.index.lexical.held import Block
from kgmem.index.lexical.read import LexicalReader
from kgmem.index.lexical.saved import Dumped, ShardFiles
from kgmem.store import Changeset, Quad, UserGraphs
from kgmem.vocab import KGM
from tests.index.wired import NOW, remember, settled, wired


def _ids(services: Services, query: str, uid: str = "alice") -> list[str]:
    return [hit.id for hit in services.search.memory_search(uid, query)]


def _seed(settings: Settings) -> tuple[str, str]:
    services = wired(settings)
    try:
        acme, globex = remember(services, 0), remember(services, 1, "Globex")
        remember(services, 0, "Initech", uid="bob")
        settled(services)
        settled(services, "bob")
        assert _ids(services, "Globex")[0] == str(globex)
        assert _ids(services, "Initech", "bob")
    finally:
        services.close()
    return str(acme), str(globex)


def test_every_write_moves_the_users_stamp_and_only_theirs(settings: Settings) -> None:
    services = wired(settings)
    try:
        assert services.feed.stamp("alice") is None
        remember(services, 0)
        first = services.feed.stamp("alice")
        assert isinstance(first, int)
        remember(services, 0, "Initech", uid="bob")
        assert services.feed.stamp("alice") == first  # bob's write is not alice's
        memory = remember(services, 1, "Globex")
        second = services.feed.stamp("alice")
        assert second is not None and second > first
        services.lifecycle.archive("alice", memory)
        assert services.feed.stamp("alice") not in (first, second)
        # one stamp per user, in the outbox graph, and never an entry waiting by itself
        held = list(services.store.quads(UserGraphs("alice").outbox, stamp_node("alice")))
        assert len(held) == 1
        settled(services)
        settled(services, "bob")
        assert services.feed.waiting() == []
    finally:
        services.close()


def test_a_clean_restart_loads_the_saved_search_index_and_answers_the_same(
    settings: Settings,
) -> None:
    acme, globex = _seed(settings)
    assert ShardFiles(settings.search_dir).header("alice", _weights()) is not None
    services = wired(settings)
    try:
        assert services.lexical.intact("alice") and services.lexical.intact("bob")
        assert _ids(services, "Globex")[0] == globex
        assert set(_ids(services, "work")) >= {acme, globex}
        assert services.lexical.origin("alice") == "saved"  # loaded, not read from the store
        # and it is kept current like a rebuilt one
        later = remember(services, 2, "Umbrella")
        assert _ids(services, "Umbrella")[0] == str(later)
    finally:
        services.close()


def test_a_write_to_a_user_not_in_memory_loads_the_saved_index_and_catches_it_up(
    settings: Settings,
) -> None:
    """The file is behind the store by that write, and the outbox holds the write: the
    file is loaded and the write's nodes read again, no rebuild (a rebuild at 100k
    memories takes minutes); the next save makes the file level again."""
    _seed(settings)
    services = wired(settings)
    try:
        services.feed.stop()  # nothing drains: the entry stays in the outbox
        assert services.lexical.origin("alice") is None
        later = remember(services, 2, "Umbrella")
        assert services.lexical.origin("alice") == "saved"
        assert _ids(services, "Umbrella")[0] == str(later)
    finally:
        services.close()
    again = wired(settings)
    try:
        assert again.lexical.intact("alice")
        assert _ids(again, "Umbrella")[0] == str(later)
        assert again.lexical.origin("alice") == "saved"
    finally:
        again.close()


def test_a_damaged_or_foreign_file_is_rebuilt_and_never_run(
    settings: Settings, tmp_path: Path
) -> None:
    _, globex = _seed(settings)
    files = ShardFiles(settings.search_dir)
    whole = files.path("alice").read_bytes()
    marker = tmp_path / "ran"
    evil = pickle.dumps(_Payload(f"touch {marker}"))
    payload = whole.index(b"}", whole.index(b'"tail"')) + 1  # the payload after the header
    cases = {
        "truncated": whole[: len(whole) // 2],
        "flipped": whole[: payload + 40]
        + bytes(b ^ 0xFF for b in whole[payload + 40 : payload + 50])
        + whole[payload + 50 :],
        "a byte more": whole + b"\0",
        "empty": b"",
        "not ours": b"# my notes\n",
        "a pickle": evil,
    }
    # whole headers over payloads: one that runs a command, framed as a shard's (no
    # buffers) and not; buffers whose lengths do not add up
    framed = struct.pack("<IQ", 0, len(evil)) + evil
    signed: dict[str, bytes] = {
        "signed code": framed,
        "signed code, unframed": evil,
        "lying lengths": struct.pack("<IQQ", 1, 1 << 40, len(evil)) + evil,
        "too many buffers": struct.pack("<I", 1 << 30) + evil,
    }
    for name, damaged in [*cases.items(), *((n, None) for n in signed)]:
        services = wired(settings)
        try:
            if damaged is None:
                stamp = services.feed.stamp("alice")
                files.write("alice", Dumped(signed[name]), stamp, _weights(), 1)
                assert files.header("alice", _weights()) is not None  # it passes every check
            else:
                files.path("alice").write_bytes(damaged)
            assert _ids(services, "Globex")[0] == globex, name
            assert services.lexical.origin("alice") == "store", name
        finally:
            services.close()
        assert not marker.exists(), name
        assert files.path("alice").read_bytes() != damaged  # saved again, whole


def test_a_saved_document_that_would_run_code_is_never_run(
    settings: Settings, tmp_path: Path
) -> None:
    """A shard's documents are bytes read when a search first needs them: one written by
    someone else (under a header and digest that pass) is left out, its code never run."""
    _, globex = _seed(settings)
    files = ShardFiles(settings.search_dir)
    services = wired(settings)
    try:
        stamp = services.feed.stamp("alice")
        shard = files.load("alice", stamp, _weights())
        assert shard is not None and globex in shard.docs
        marker = tmp_path / "ran"
        state = shard.docs.__getstate__()
        ids, block, ends = state["ids"], state["block"], state["ends"]
        assert isinstance(ids, list) and isinstance(ends, bytes)
        assert isinstance(block, Block)  # in the file's tail
        stops = array("q", ends)
        held = {i: block[stops[n - 1] if n else 0 : stops[n]] for n, i in enumerate(ids)}
        held[globex] = pickle.dumps(_Payload(f"touch {marker}"))
        shard.docs.__setstate__(
            {
                "ids": list(held),
                "block": b"".join(held.values()),
                "ends": array("q", itertools.accumulate(map(len, held.values()))).tobytes(),
                "crcs": array("I", map(zlib.crc32, held.values())).tobytes(),  # they pass
            }
        )
        payload = files.dump(shard)
        files.write("alice", payload, stamp, _weights(), len(shard.docs))
    finally:
        services.close()
    services = wired(settings)
    try:
        assert services.lexical.open("alice") and services.lexical.origin("alice") == "saved"
        assert globex not in _ids(services, "Globex")  # left out, the search answered
        assert services.lexical.doc("alice", globex) is None
    finally:
        services.close()
    assert not marker.exists()


def test_a_document_damaged_in_the_file_is_left_out_and_its_user_rebuilt(
    settings: Settings,
) -> None:
    """A load leaves the documents in the file and checks each one's CRC-32 when a search
    reads it: a document whose bytes changed on disk after the load passed is never made,
    the search answers without it, and the user is rebuilt from the store behind (the file
    deleted at once), after which it is found again."""
    acme, globex = _seed(settings)
    files = ShardFiles(settings.search_dir)
    whole = bytearray(files.path("alice").read_bytes())
    services = wired(settings)
    try:
        assert services.lexical.open("alice") and services.lexical.origin("alice") == "saved"
        # the tail is the documents' block, in the order they were saved: every byte of it
        # flipped (the file, opened by the load, is changed in place)
        shard = services.lexical._shards["alice"]
        tail = sum(len(shard.docs._bytes(n)) for n in range(len(shard.docs)))
        with files.path("alice").open("r+b") as fh:
            fh.seek(len(whole) - tail)
            fh.write(bytes(b ^ 0xFF for b in whole[-tail:]))
        assert globex not in _ids(services, "Globex")  # left out, never made
        assert services.lexical.origin("alice") in ("stale", "store")
        assert not files.path("alice").exists() or files.path("alice").read_bytes() != whole
        deadline = time.monotonic() + 30
        while services.lexical.origin("alice") != "store" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert services.lexical.origin("alice") == "store"
        assert _ids(services, "Globex")[0] == globex and _ids(services, "Acme")[0] == acme
    finally:
        services.close()


def test_a_forget_leaves_no_copy_of_the_memory_in_the_saved_index(settings: Settings) -> None:
    """The memory's own text (its title) and id leave the file with the forget itself, not
    at the next save (the entity it named and the message stay in the store, as a forget
    leaves them)."""
    _seed(settings)
    services = wired(settings)
    try:
        assert _ids(services, "Acme")  # alice is in memory: her writes are kept there
        secret = remember(services, 3, "Zanzibar Holdings")
        settled(services)
        services.close()
        path = ShardFiles(settings.search_dir).path("alice")
        gone = (b"Works at Zanzibar", str(secret).encode())
        assert all(text in path.read_bytes() for text in gone)  # saved at close
        services = wired(settings)
        assert _ids(services, "Zanzibar")[0] == str(secret)  # loaded from the file
        services.lifecycle.forget("alice", secret)
        assert not path.exists() or not any(text in path.read_bytes() for text in gone)
        assert str(secret) not in _ids(services, "Zanzibar")
    finally:
        services.close()
    assert not any(text in path.read_bytes() for text in gone)


def test_a_forget_of_a_user_not_in_memory_leaves_no_copy_either(settings: Settings) -> None:
    """bob's write loads his saved index (he is active); the forget right after removes the
    memory from it and from the file at once (deleted, or saved again without it)."""
    _seed(settings)
    services = wired(settings)
    try:
        path = ShardFiles(settings.search_dir).path("bob")
        assert path.exists() and services.lexical.origin("bob") is None
        secret = remember(services, 1, "Zanzibar Holdings", uid="bob")
        assert services.lexical.origin("bob") == "saved"
        services.lifecycle.forget("bob", secret)
        assert not path.exists() or b"Works at Zanzibar" not in path.read_bytes()
        assert str(secret) not in _ids(services, "Zanzibar", "bob")
        assert _ids(services, "Initech", "bob")
    finally:
        services.close()
    assert b"Works at Zanzibar" not in path.read_bytes()  # saved again at close, without it


def test_past_the_resident_bound_the_least_used_user_is_let_go_saved_if_changed(
    settings: Settings,
) -> None:
    _seed(settings)
    services = wired(settings)
    try:
        # documents: alice's 2 memories and 3 pages (alice, Acme, Globex); bob's 1 and 2
        index = LexicalIndex(
            services.store, services.queries, directory=settings.search_dir, resident=5
        )
        assert index.open("alice") == 5 and list(index.resident()) == ["alice"]
        assert index.open("bob") == 3
        assert list(index.resident()) == ["bob"]  # alice (5) + bob (3) > 5: alice goes
        assert index.search("alice", "Globex", 1)  # loaded again from its file
        assert index.origin("alice") == "saved" and list(index.resident()) == ["alice"]
        files = ShardFiles(settings.search_dir)
        written = files.path("bob").stat().st_mtime_ns
        assert index.open("bob") and list(index.resident()) == ["bob"]
        assert index.open("alice") and list(index.resident()) == ["alice"]
        assert files.path("bob").stat().st_mtime_ns == written  # let go unchanged: not saved
        services.feed.stop()  # this index is told of the write by hand
        later = remember(services, 7, "Initech")
        assert (
            index.refresh("alice", [later]) and b"Initech" not in files.path("alice").read_bytes()
        )
        index.level("alice", services.feed.stamp("alice"))
        assert index.open("bob") and list(index.resident()) == ["bob"]  # alice goes, saved
        assert b"Initech" in files.path("alice").read_bytes()
        assert str(later) in [d for d, _ in index.search("alice", "Initech", 3)]
    finally:
        services.close()


def test_the_graph_projection_compares_only_users_whose_stamp_moved(
    settings: Settings,
) -> None:
    """A store put back from a backup (here: alice's stamp moved with no outbox entry and no
    projection told) is compared and repaired for that user alone."""
    acme, _ = _seed(settings)
    services = wired(settings)
    try:
        assert services.index.reconciled == ()
        services.feed.detach()  # behind every projection's back
        graph, node = UserGraphs("alice").outbox, stamp_node("alice")
        old = list(services.store.quads(graph, node))
        services.store.commit(Changeset.of([Quad(node, URIRef(KGM.stamp), Literal(7), graph)], old))
    finally:
        services.close()
    again = wired(settings)
    try:
        assert [r.uid for r in again.index.reconciled] == ["alice"]
        assert again.index.repaired == ()  # compared: the rows were right after all
        assert again.projection.unlevel() == []
        # the search index cannot catch up either (no entry moved on from its stamp)
        assert again.lexical.origin("alice") is None and not again.lexical.intact("alice")
        assert _ids(again, "Acme")[0] == acme
        assert again.lexical.origin("alice") == "store"
    finally:
        again.close()


def test_a_server_searches_a_stale_saved_index_while_it_is_rebuilt(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backup put back (globex archived and the stamp moved, no outbox entry): the server
    answers from the saved index at once, each hit checked with the store, and rebuilds it
    behind; nothing saves the stale index as if it were level."""
    acme, globex = _seed(settings)
    services = wired(settings)
    try:
        services.feed.detach()
        services.lifecycle.archive("alice", URIRef(globex))
        graph, node = UserGraphs("alice").outbox, stamp_node("alice")
        old = list(services.store.quads(graph, node))
        services.store.commit(Changeset.of([Quad(node, URIRef(KGM.stamp), Literal(7), graph)], old))
    finally:
        services.close()
    release = threading.Event()
    build = LexicalReader.build

    def held(self: LexicalReader, *args: Any) -> Any:
        assert release.wait(30), "the test never released the rebuild"
        return build(self, *args)

    monkeypatch.setattr(LexicalReader, "build", held)
    files, weights = ShardFiles(settings.search_dir), _weights()
    saved = files.header("alice", weights)
    assert saved is not None
    server = build_services(settings, clock=FixedClock(NOW), repair=False)
    try:
        assert _ids(server, "Acme")[0] == acme  # answered while the rebuild waits
        assert server.lexical.origin("alice") == "stale"
        assert server.repairing() == {"graph": ["alice"], "search": ["alice"]}
        server.repair()  # the graph projection: what the server's warm-up thread runs
        assert server.repairing() == {"graph": [], "search": ["alice"]}
        assert globex not in _ids(server, "Globex")  # archived: the store said so
        assert server.lexical.flush() == 0  # bob's was level already; alice's is stale
        assert files.header("alice", weights) == saved
        later = remember(server, 2, "Umbrella")  # a write meanwhile reaches both
        release.set()
        deadline = time.monotonic() + 30
        while server.lexical.origin("alice") != "store" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.lexical.origin("alice") == "store"
        assert server.repairing() == {"graph": [], "search": []}
        assert _ids(server, "Umbrella")[0] == str(later)
        assert globex not in _ids(server, "Globex")
        remember(server, 3, "Hooli")  # the next drain makes the rebuilt index level
        server.feed.drain("alice")
        assert server.lexical.flush() == 1
        header = files.header("alice", weights)
        assert header is not None and header.stamp == server.feed.stamp("alice")
    finally:
        release.set()
        server.close()


class _Payload:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.system, (self.command,))


def _weights() -> dict[str, int]:
    return dict(FIELD_WEIGHTS)


def test_a_loaded_shard_ranks_exactly_as_the_one_rebuilt_from_the_store(
    settings: Settings,
) -> None:
    """Same documents, same postings, same norms: every score of every query is equal."""
    services = wired(settings)
    try:
        for turn, company in enumerate(("Acme", "Globex", "Initech", "Umbrella", "Acme Labs")):
            remember(services, turn, company)
        settled(services)
        queries = ["Acme", "work", "Globex Initech", "labs", "where do I work", "nothing"]
        built = LexicalIndex(services.store, services.queries, directory=settings.search_dir)
        # 5 memories and 6 pages (alice and each company)
        assert built.rebuild("alice") == 11 and built.origin("alice") == "store"
        loaded = LexicalIndex(services.store, services.queries, directory=settings.search_dir)
        assert loaded.open("alice") == 11 and loaded.origin("alice") == "saved"
        for query in queries:
            assert loaded.search("alice", query, 50) == built.search("alice", query, 50), query
            terms = query.lower().split()
            assert loaded.chat_scores("alice", terms) == built.chat_scores("alice", terms)
        assert loaded.named_entities("alice", ["acm"]) == built.named_entities("alice", ["acm"])
        ids = sorted(built._shards["alice"].docs.ids())
        assert [loaded.doc("alice", i) for i in ids] == [built.doc("alice", i) for i in ids]
    finally:
        services.close()
