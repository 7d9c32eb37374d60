"""Memory fixtures: a world with a gate and a lifecycle on a real store."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgmem.config import load_settings
from kgmem.store import OxigraphStore, QueryRegistry
from tests.memory.world import World


@pytest.fixture
def world(store: OxigraphStore, queries: QueryRegistry, home: Path) -> World:
    return World(store, queries, load_settings(env={"KGMEM_HOME": str(home)}))
