"""Retrieval fixtures: the memory world (real store and gate) and a search over it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgmem.config import load_settings
from kgmem.retrieval import MemorySearch
from kgmem.store import OxigraphStore, QueryRegistry
from tests.memory.world import World
from tests.retrieval.support import searcher


@pytest.fixture
def world(store: OxigraphStore, queries: QueryRegistry, home: Path) -> World:
    return World(store, queries, load_settings(env={"KGMEM_HOME": str(home)}))


@pytest.fixture
def search(world: World) -> MemorySearch:
    return searcher(world)
