"""API fixtures: an app over a new home, and the same app served by a real uvicorn."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.applications import Starlette

from kgmem.api import create_app
from kgmem.config import Settings
from tests.conftest import serve_app


@pytest.fixture
def app(settings: Settings) -> Starlette:
    return create_app(settings)


@pytest.fixture
def base(app: Starlette, settings: Settings) -> Iterator[str]:
    """The base URL of ``app`` running on a loopback port."""
    with serve_app(app, settings) as url:
        yield url
