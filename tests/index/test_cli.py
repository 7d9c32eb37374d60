"""``kgmem index rebuild`` and ``kgmem index check``, run as real processes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgmem.config import load_settings
from kgmem.store import OxigraphStore, QueryRegistry
from tests.index.scenes import build_scene
from tests.index.test_kuzu_open import cypher
from tests.memory.world import World
from tests.test_cli import kgmem

pytestmark = pytest.mark.integration


@pytest.fixture
def seeded(home: Path, queries: QueryRegistry) -> Path:
    """A home whose store holds alice's and bob's memories (no index yet)."""
    store = OxigraphStore(home / "store")
    build_scene(World(store, queries, load_settings(env={"KGMEM_HOME": str(home)})))
    store.close()
    return home


def test_check_before_any_rebuild_says_so(seeded: Path) -> None:
    result = kgmem(seeded, "index", "check")
    assert result.returncode == 1
    assert "no graph projection" in result.stderr and "kgmem index rebuild" in result.stderr
    assert not (seeded / "index").exists()


def test_rebuild_then_check_then_drift(seeded: Path) -> None:
    built = kgmem(seeded, "index", "rebuild")
    assert built.returncode == 0, built.stderr
    lines = built.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["alice", "bob"]
    assert "Memory 6" in lines[0] and "Entity" in lines[0]
    checked = kgmem(seeded, "index", "check")
    assert checked.returncode == 0, checked.stderr
    assert "alice: projection matches the store" in checked.stdout

    cypher(seeded / "index" / "kuzu", "MATCH (e:Entity) WHERE e.uid = 'bob' DETACH DELETE e")
    drifted = kgmem(seeded, "index", "check", "--json")
    assert drifted.returncode == 1
    report = json.loads(drifted.stdout)["users"]
    assert report["alice"]["matches"] and not report["bob"]["matches"]
    assert "Entity" in report["bob"]["drift"] and report["bob"]["projection"]["Entity"] == 0
    assert "bob: projection DIFFERS" in kgmem(seeded, "index", "check").stdout

    saved = seeded / "index" / "search"
    saved.mkdir()
    for uid in ("alice", "bob"):
        (saved / f"{uid}.shard").write_bytes(b"a saved search index")
    only_bob = kgmem(seeded, "index", "rebuild", "--user", "bob")
    assert only_bob.returncode == 0 and only_bob.stdout.startswith("bob:")
    assert kgmem(seeded, "index", "check", "--user", "bob").returncode == 0
    # bob's saved search index goes with the rebuild (the next start makes it anew)
    assert sorted(p.name for p in saved.iterdir()) == ["alice.shard"]


def test_a_damaged_index_is_reported_and_rebuilt(seeded: Path) -> None:
    assert kgmem(seeded, "index", "rebuild").returncode == 0
    (seeded / "index" / "kuzu" / "graph.kuzu").write_bytes(b"garbage" * 1000)
    checked = kgmem(seeded, "index", "check")
    assert checked.returncode == 0, checked.stderr
    assert "was unusable" in checked.stderr and "rebuilt 2 users" in checked.stderr
    assert (seeded / "index" / "kuzu.broken-1").is_dir()


def test_a_bad_user_id_is_one_line(seeded: Path) -> None:
    result = kgmem(seeded, "index", "rebuild", "--user", "no:such")
    assert result.returncode == 2 and "user id" in result.stderr
    assert "Traceback" not in result.stderr


def test_distill_without_torch_says_what_to_install(home: Path) -> None:
    """The test environment has model2vec (the embeddings extra) but not torch, which only
    making the static model needs."""
    result = kgmem(home, "index", "distill", "--out", str(home / "static"))
    assert result.returncode != 0
    assert "pip install torch==2.13.0" in result.stderr and "kgmem[distill]" in result.stderr
    assert not (home / "static").exists()
