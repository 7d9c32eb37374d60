"""The digests of every user's nodes, and the repair after a drift they make cheap.

Real services on a real home (on-disk Oxigraph, Kùzu, SQLite, the feed draining), closed and
opened again as a server restarts. The drift is the one people cause: a backup of the store
put back after more writes were made (the projections hold writes the store no longer has,
and the outbox of the backup cannot say which), plus edits made with the store open in
another program (no outbox entry at all).
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import RDF, XSD

from kgmem.api.services import Services, build_services
from kgmem.api.startup import settle_digests
from kgmem.clock import FixedClock
from kgmem.config import Settings
from kgmem.index.digests import Digests
from kgmem.index.lexical.docs import FIELD_WEIGHTS
from kgmem.index.lexical.read import LexicalReader
from kgmem.index.lexical.saved import ShardFiles
from kgmem.store import Changeset, OxigraphStore, Quad, QueryRegistry, UserGraphs
from kgmem.vocab import KGM
from tests.index.wired import NOW, in_sync, remember, settled, wired

NAME = URIRef(KGM.name)


def _ids(services: Services, query: str, uid: str = "alice") -> list[str]:
    return [hit.id for hit in services.search.memory_search(uid, query)]


def _level(services: Services, uid: str = "alice") -> None:
    """Drained, and the digests level with the store (as after a server's warm-up)."""
    settled(services, uid)
    services.feed.drain(uid)
    services.digests.settle(uid)


def _settle_all(services: Services) -> int:
    """What the server runs after its warm-up."""
    return settle_digests(services.digests, services.store, services.queries)


def _kept_equals_store(services: Services, uid: str = "alice") -> None:
    held, fresh = services.digests.held(uid), services.digests.of_store(uid)
    differ = sorted(k for k in held.keys() | fresh.keys() if held.get(k) != fresh.get(k))
    assert not differ, differ[:5]
    assert services.digests.recorded(uid) == (True, services.feed.stamp(uid))


def _entity(services: Services, name: str, uid: str = "alice") -> URIRef:
    [quad] = list(services.store.quads(UserGraphs(uid).kg, None, NAME, Literal(name)))
    assert isinstance(quad.subject, URIRef)
    return quad.subject


def _backup_then_more_writes(settings: Settings, backup: Path) -> dict[str, str]:
    """Alice works at Acme and Globex, Bob at Initech; the store is backed up; then Alice
    also works at Umbrella and Hooli, Globex is archived, and the server stops. Every
    projection (graph, search, digests) is saved level with the later store."""
    services = wired(settings)
    try:
        ids = {"acme": remember(services, 0), "globex": remember(services, 1, "Globex")}
        remember(services, 0, "Initech", uid="bob")
        for uid in ("alice", "bob"):
            _level(services, uid)
            assert services.lexical.open(uid)
        services.store.snapshot(backup)
        ids["umbrella"] = remember(services, 2, "Umbrella")
        ids["hooli"] = remember(services, 3, "Hooli")
        services.lifecycle.archive("alice", ids["globex"])
        _level(services)
        _kept_equals_store(services)
        assert _ids(services, "Umbrella")[0] == str(ids["umbrella"])
        assert str(ids["globex"]) not in _ids(services, "Globex")
    finally:
        services.close()
    return {name: str(iri) for name, iri in ids.items()}


def _put_back(settings: Settings, backup: Path) -> None:
    shutil.rmtree(settings.store_dir)
    shutil.copytree(backup, settings.store_dir)


def _refuse_whole_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading a user's search documents whole from the store fails the test."""

    def whole(self: LexicalReader, *args: Any) -> Any:
        raise AssertionError("the search index was rebuilt from the store")

    monkeypatch.setattr(LexicalReader, "build", whole)


def test_the_digests_follow_every_write_and_cost_nothing_before_a_first_reading(
    settings: Settings,
) -> None:
    services = wired(settings)
    try:
        acme = remember(services, 0)
        settled(services)
        assert services.digests.recorded("alice") == (False, None)
        assert services.digests.refresh("alice", [acme]) == 0  # none kept: nothing read
        assert services.digests.held("alice") == {}
        assert _settle_all(services) == 1  # what the server runs after its warm-up
        assert services.digests.settle("alice") is False  # level already
        _kept_equals_store(services)
        globex = remember(services, 1, "Globex")
        remember(services, 2, "Initech")
        services.lifecycle.archive("alice", acme)
        services.lifecycle.forget("alice", globex)
        _level(services)
        _kept_equals_store(services)
        # the forgotten memory and its parts are gone from the digests too
        assert not [k for k in services.digests.held("alice") if str(globex).endswith(k[1])]
        assert services.digests.users() == ["alice"]
        remember(services, 3, "Hooli", uid="bob")
        _level(services, "bob")
        services.reset_user("alice")  # what was derived goes; her chat turns stay
        _level(services)
        assert {k[1].split("/")[0] for k in services.digests.held("alice")} == {"msg"}
        _kept_equals_store(services)
        _kept_equals_store(services, "bob")
        assert services.digests.held("bob")
    finally:
        services.close()


def test_a_backup_put_back_is_repaired_from_the_digests_without_reading_all(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph projection re-reads only the nodes the digests name; the search index
    loads its saved shard and re-reads the same nodes; nothing is rebuilt whole."""
    backup = tmp_path / "backup"
    ids = _backup_then_more_writes(settings, backup)
    _put_back(settings, backup)
    # and an edit with the store open in another program: Acme renamed, no outbox entry
    store = OxigraphStore(settings.store_dir)
    try:
        kg = UserGraphs("alice").kg
        [old] = list(store.quads(kg, None, NAME, Literal("Acme")))
        store.commit(Changeset.of([Quad(old.subject, NAME, Literal("Acme Rockets"), kg)], [old]))
    finally:
        store.close()
    _refuse_whole_reads(monkeypatch)
    services = wired(settings)
    try:
        [report] = services.index.reconciled
        assert report.uid == "alice" and report.repaired
        nodes = sum(1 for _ in services.store.quads(UserGraphs("alice").kg))
        assert report.caught_up is not None and 0 < report.caught_up < nodes / 2
        assert in_sync(services.projection)  # the whole compare agrees
        assert in_sync(services.projection, "bob")
        assert services.lexical.open("alice") and services.lexical.origin("alice") == "saved"
        assert _ids(services, "Umbrella") == [] and _ids(services, "Hooli") == []
        assert _ids(services, "Globex")[0] == ids["globex"]  # active again, as backed up
        assert _ids(services, "Rockets")[0] == ids["acme"]  # the new name is searched
        acme = _entity(services, "Acme Rockets")
        linked = services.projection.neighbourhood("alice", _entity(services, "Alice"))
        assert acme in {n.entity for n in linked}
        assert {n.name for n in linked} >= {"Acme Rockets", "Globex"}
        _kept_equals_store(services)
        later = remember(services, 5, "Vandelay")  # and writes go on as usual
        settled(services)
        assert _ids(services, "Vandelay")[0] == str(later)
        assert in_sync(services.projection)
    finally:
        services.close()


def test_the_server_answers_from_the_stale_index_and_catches_it_up_from_the_digests(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backup = tmp_path / "backup"
    ids = _backup_then_more_writes(settings, backup)
    _put_back(settings, backup)
    _refuse_whole_reads(monkeypatch)
    server = build_services(settings, clock=FixedClock(NOW), repair=False)
    try:
        assert server.lexical.open("alice")
        assert server.repairing()["graph"] == ["alice"]
        server.warm()  # what the server's warm-up thread runs: graph, then the rest
        deadline = time.monotonic() + 30
        while server.repairing()["search"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.repairing() == {"graph": [], "search": []}
        assert server.lexical.origin("alice") == "saved"
        [repair] = server.repairs
        assert repair.caught_up
        assert _settle_all(server) == 0  # caught up, so level: nothing to read again
        assert _ids(server, "Hooli") == []
        assert _ids(server, "Globex")[0] == ids["globex"]
        assert in_sync(server.projection)
        # the caught-up index is saved level with the store
        server.feed.drain("alice")
        server.lexical.flush()
        header = ShardFiles(settings.search_dir).header("alice", dict(FIELD_WEIGHTS))
        assert header is not None and header.stamp == server.feed.stamp("alice")
        _kept_equals_store(server)
    finally:
        server.close()


def test_digests_level_with_another_stamp_fall_back_to_the_whole_compare(
    settings: Settings, tmp_path: Path
) -> None:
    """Digests that are not level with the projection's stamp cannot say what changed
    since it: the projection compares the user in full, as without digests."""
    backup = tmp_path / "backup"
    _backup_then_more_writes(settings, backup)
    _put_back(settings, backup)
    with sqlite3.connect(settings.digests_path) as db:  # digests of some other moment
        db.execute("UPDATE users SET stamp = 42 WHERE uid = 'alice'")
    db.close()
    services = wired(settings)
    try:
        [report] = services.index.reconciled
        assert report.repaired and report.caught_up is None
        assert report.drift  # compared in full: the fingerprints say what differed
        assert in_sync(services.projection)
        assert _ids(services, "Umbrella") == []
        assert services.digests.suspect() == ["alice"]
        services.feed.drain("alice")
        assert services.digests.recorded("alice") == (True, 42)  # drains do not vouch
        assert services.digests.settle("alice") is True
        assert services.digests.suspect() == []
        _kept_equals_store(services)
    finally:
        services.close()


def test_a_digest_file_put_back_from_before_is_read_whole_not_trusted(
    settings: Settings, tmp_path: Path
) -> None:
    """The digests' own file put back from an older copy (the store and the other
    projections went on): drains must not mark it level; the next settle reads it whole."""
    services = wired(settings)
    try:
        remember(services, 0)
        _level(services)
    finally:
        services.close()
    old = tmp_path / "digests.sqlite3"
    shutil.copy(settings.digests_path, old)
    services = wired(settings)
    try:
        remember(services, 1, "Globex")
        _level(services)
    finally:
        services.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{settings.digests_path}{suffix}").unlink(missing_ok=True)
    shutil.copy(old, settings.digests_path)
    services = wired(settings)
    try:
        assert services.index.reconciled == ()  # the graph projection is level
        assert services.digests.suspect() == ["alice"]
        remember(services, 2, "Initech")
        settled(services)
        services.feed.drain("alice")
        present, stamp = services.digests.recorded("alice")
        assert present and stamp != services.feed.stamp("alice")
        assert services.digests.settle("alice") is True
        _kept_equals_store(services)
    finally:
        services.close()


def test_a_write_before_the_repair_leaves_a_drifted_user_unlevel_until_repaired(
    settings: Settings, tmp_path: Path
) -> None:
    """A backup put back, then a write drained before the repair ran (the server serves at
    once) and the process stopped: the user must still look drifted at the next start (not
    level because the write moved the stamp), and the digests still say what changed."""
    backup = tmp_path / "backup"
    _backup_then_more_writes(settings, backup)
    _put_back(settings, backup)
    server = build_services(settings, clock=FixedClock(NOW), repair=False)
    try:
        assert server.repairing()["graph"] == ["alice"]
        stark = remember(server, 7, "Stark")
        settled(server)
        server.feed.drain("alice")
        assert "alice" in server.projection.unlevel()
    finally:
        server.close()  # stopped before the warm-up repaired anything
    services = wired(settings)
    try:
        [report] = services.index.reconciled
        assert report.uid == "alice" and report.caught_up
        assert in_sync(services.projection)
        assert _ids(services, "Stark")[0] == str(stark)
        # in the search index itself (a search also finds memories by an entity's name)
        assert services.lexical.origin("alice") == "saved"
        assert str(stark) in [doc for doc, _ in services.lexical.search("alice", "Stark", 5)]
        assert _ids(services, "Umbrella") == []
        _kept_equals_store(services)
    finally:
        services.close()


def test_a_whole_reading_digests_each_node_as_the_store_digests_it_alone(
    tmp_path: Path, queries: QueryRegistry
) -> None:
    """The whole reading makes each digest from the graph's statements in Python; a refresh
    asks ``index/digest_node`` for one node. Both must agree on every kind of term, or every
    refreshed node would look changed at the next compare."""
    store = OxigraphStore(tmp_path / "store")
    try:
        g = UserGraphs("alice")
        note, memory = URIRef(f"{g.node_base}note/1"), URIRef(f"{g.node_base}memory/1")
        quads = [
            Quad(note, RDF.type, KGM.ExternalNote, g.sources),
            Quad(note, KGM.text, Literal("Grüße aus Köln\nzweite Zeile"), g.sources),
            Quad(note, KGM.title, Literal("Reise", lang="de"), g.sources),
            Quad(memory, RDF.type, KGM.Memory, g.kg),
            Quad(memory, KGM.confidence, Literal("0.90", datatype=XSD.decimal), g.kg),
            Quad(
                memory, KGM.recordedAt, Literal("2026-01-01T00:00:00Z", datatype=XSD.dateTime), g.kg
            ),
            Quad(memory, KGM.evidence, BNode("e1"), g.kg),
            Quad(BNode("e1"), KGM.source, note, g.kg),
            Quad(memory, KGM.title, Literal('a "quoted" title ^ @ with\ttab'), g.quarantine),
        ]
        store.commit(Changeset.of(quads))
        digests = Digests(store, queries, None)
        whole = digests.of_store("alice")
        assert len(whole) == 4  # the note; the memory in two graphs; the blank evidence node
        one = digests._of_nodes("alice", {note, memory})
        alone = {(code, str(node)): d for node, found in one.items() for code, d in found.items()}
        assert {k: v for k, v in whole.items() if not k[1].startswith("<")} == {
            (code, node[len(g.node_base) :]): d for (code, node), d in alone.items()
        }
        digests.close()
    finally:
        store.close()
