"""Index fixtures: a real on-disk store with memories written through the real gate, and a
Kùzu projection of it on disk."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgmem.config import load_settings
from kgmem.index import KuzuProjection
from kgmem.store import OxigraphStore, QueryRegistry
from tests.index.scenes import Scene, build_scene
from tests.memory.world import World


@pytest.fixture
def world(tmp_path: Path, queries: QueryRegistry, home: Path) -> Iterator[World]:
    store = OxigraphStore(tmp_path / "store")
    yield World(store, queries, load_settings(env={"KGMEM_HOME": str(home)}))
    store.close()


@pytest.fixture
def scene(world: World) -> Scene:
    return build_scene(world)


@pytest.fixture
def projection(
    scene: Scene, world: World, queries: QueryRegistry, tmp_path: Path
) -> Iterator[KuzuProjection]:
    """Opened after the scene was written: a new database, so it loads every user."""
    opened = KuzuProjection(tmp_path / "kuzu", world.store, queries)
    yield opened
    opened.close()
