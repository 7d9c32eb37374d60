"""A running server for API tests: real uvicorn, keys made per user, store snapshots."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from kgmem.api import create_app
from kgmem.config import load_settings
from tests.conftest import free_port, serve_app


@dataclass(frozen=True)
class SparqlUsers:
    """A served API as two users and an admin see it, with ``/sparql`` at hand."""

    url: str
    alice: str
    bob: str
    admin: str

    @property
    def endpoint(self) -> str:
        return f"{self.url}/sparql"

    def get(self, token: str | None, **params: Any) -> httpx.Response:
        """``GET /sparql`` (``accept=`` sets the Accept header)."""
        accept = params.pop("accept", None)
        headers = {} if token is None else {"Authorization": f"Bearer {token}"}
        if accept:
            headers["Accept"] = accept
        return httpx.get(self.endpoint, params=params, headers=headers, timeout=30)

    def post(self, token: str, **kwargs: Any) -> httpx.Response:
        """``POST /sparql``."""
        headers = {"Authorization": f"Bearer {token}", **kwargs.pop("headers", {})}
        return httpx.post(self.endpoint, headers=headers, timeout=30, **kwargs)


@dataclass
class ApiServer:
    """A running server and what a test needs of it."""

    app: Starlette
    base: str

    def client(self, uid: str, timeout: float = 60) -> httpx.Client:
        """A client with a fresh key of ``uid`` (the account is made on first use)."""
        accounts = self.app.state.accounts
        known = {a.uid for a in accounts.all()}
        token = (accounts.issue(uid) if uid in known else accounts.add(uid)).token
        return httpx.Client(
            base_url=self.base, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    def snapshot(self) -> set[Any]:
        """Every stored quad but the projections' outbox, once the projections (pages
        too) have caught up with every commit."""
        assert self.app.state.services.settle(), "the outbox did not empty"
        quads = self.app.state.services.store.quads()
        return {q for q in quads if not str(q.graph).endswith(":outbox")}


@contextmanager
def api_server(
    tmp_path_factory: pytest.TempPathFactory, name: str, **settings_: Any
) -> Iterator[ApiServer]:
    """A server on a new home (a module's tests share one: each uses users of its own),
    with ``settings_`` over the defaults."""
    home = tmp_path_factory.mktemp(name)
    settings = load_settings(env={"KGMEM_HOME": str(home)}, port=free_port(), **settings_)
    app = create_app(settings)
    with serve_app(app, settings) as base:
        yield ApiServer(app, base)
