"""Fixtures of the end-to-end consolidation tests: a fixed clock at the first session, and
services on a real on-disk store with alice's own single-valued ``currentJobAt``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgmem.api.services import Services
from kgmem.clock import FixedClock
from kgmem.config import Settings
from tests.pipeline.passes import T1, open_services


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(T1)


@pytest.fixture
def services(settings: Settings, clock: FixedClock) -> Iterator[Services]:
    built = open_services(settings, clock)
    yield built
    built.close()
