"""How ``kgmem demo`` reaches a user's memory: the store opened here, or the running server.

Either way the demo calls the same agent tools with the same arguments and reads the same
JSON back: locally through the tool registry the server dispatches to, remotely through the
REST routes made from that registry (:data:`kgmem.api.rest.table.ENDPOINTS`). It acts as the
demo user, with a key of the user's own kept in ``$KGMEM_HOME/api-key.<user>`` (mode 0600),
so the commands the demo prints work as they are: the server's admin key (``api-key``) only
makes the account or a key for it, through ``POST /api/admin/users``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx

from kgmem.api.accounts import Accounts, Principal, write_key_file
from kgmem.api.rest.table import ENDPOINTS, Endpoint
from kgmem.api.tools.registry import call
from kgmem.cli.common import fail, local_services, running_server
from kgmem.config import Settings
from kgmem.errors import KgmemError, Unauthenticated

if TYPE_CHECKING:
    from kgmem.api.services import Services

__all__ = ["DemoClient", "demo_key_file", "find_server", "local_client", "server_client"]

_LABEL = "kgmem demo"
_PAGE_WAIT = 5.0  # seconds the server's pages may take to follow the drafts


class DemoClient(Protocol):
    """One agent tool call as the demo user, answered with the tool's JSON."""

    @property
    def server(self) -> str | None:
        """The server's base URL (None: the store is opened here)."""

    def call(self, tool: str, args: Mapping[str, object]) -> dict[str, Any]: ...

    def page(self, entity: str) -> dict[str, Any] | None:
        """The entity's page once it follows the drafts (None: none yet)."""


def demo_key_file(settings: Settings, uid: str) -> Path:
    """Where the demo keeps ``uid``'s API key, beside the admin's ``api-key``."""
    return settings.home / f"api-key.{uid}"


def _read_key(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


# -- the store, opened here ------------------------------------------------------------


@dataclass(frozen=True)
class LocalClient:
    services: Services
    principal: Principal

    @property
    def server(self) -> str | None:
        return None

    def call(self, tool: str, args: Mapping[str, object]) -> dict[str, Any]:
        return call(self.services, self.principal, tool, dict(args))

    def page(self, entity: str) -> dict[str, Any] | None:
        self.services.settle()  # pages follow the commits through the change feed
        try:
            return self.call("read_page", {"entity": entity})
        except KgmemError:
            return None


def _local_principal(services: Services, settings: Settings, uid: str) -> Principal:
    from kgmem.api.auth import default_admin_key  # the web surfaces load only when used

    accounts = Accounts(services.store, services.queries)
    default_admin_key(accounts, settings)  # as a server's start would
    path = demo_key_file(settings, uid)
    token = _read_key(path)
    if token is not None:
        try:
            principal = accounts.authenticate(token)
        except Unauthenticated:
            principal = None
        if principal is not None and principal.uid == uid:
            return principal
    if any(account.uid == uid for account in accounts.all()):
        issued = accounts.issue(uid, _LABEL)
    else:
        issued = accounts.add(uid, label=_LABEL)
    write_key_file(path, issued.token)
    return accounts.authenticate(issued.token)


@contextmanager
def local_client(settings: Settings, uid: str) -> Iterator[DemoClient]:
    """The demo user's tools over the store, opened here (a one-line error if a server
    holds it); a fresh home gets a store, as ``kgmem ingest`` makes one."""
    with local_services(settings, "run the demo", create=True) as services:
        yield LocalClient(services, _local_principal(services, settings, uid))


# -- the running server ----------------------------------------------------------------


def find_server(settings: Settings) -> str | None:
    """The base URL of the server holding this home's store, if one runs and answers."""
    info = running_server(settings)
    if info is None or not isinstance(info.get("url"), str):
        return None
    url: str = info["url"]
    try:
        answered = httpx.get(f"{url}/health", timeout=5).status_code == 200
    except httpx.HTTPError:
        return None  # a server file a stopped server left behind
    return url if answered else None


def _route(tool: str, args: Mapping[str, object]) -> Endpoint:
    """The REST route of ``tool`` that takes ``args`` (read_page: by entity or by path)."""
    for endpoint in ENDPOINTS:
        if endpoint.tool != tool or endpoint.path_params or endpoint.fixed:
            continue
        if endpoint.body or set(args) <= {p.arg for p in endpoint.query}:
            return endpoint
    raise LookupError(f"no REST route for {tool}({', '.join(args)})")


def _answer(response: httpx.Response) -> dict[str, Any]:
    """The JSON of a 2xx answer; otherwise a one-line error with the server's message."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if response.is_success and isinstance(body, dict):
        return body
    error = body.get("error") if isinstance(body, dict) else None
    said = error.get("message") if isinstance(error, dict) else response.text[:200]
    request = response.request
    fail(f"the server answered {response.status_code} to {request.method} {request.url}: {said}")


@dataclass(frozen=True)
class ServerClient:
    http: httpx.Client  # the base URL and the demo user's key

    @property
    def server(self) -> str | None:
        return str(self.http.base_url).rstrip("/")

    def _send(self, tool: str, args: Mapping[str, object]) -> httpx.Response:
        endpoint = _route(tool, args)
        names = {p.arg: p.name for p in endpoint.query}
        try:
            if endpoint.body:
                return self.http.request(endpoint.method, endpoint.path, json=dict(args))
            params = {names[k]: str(v) for k, v in args.items()}
            return self.http.request(endpoint.method, endpoint.path, params=params)
        except httpx.HTTPError as exc:
            fail(f"the server at {self.server} does not answer: {exc}")

    def call(self, tool: str, args: Mapping[str, object]) -> dict[str, Any]:
        return _answer(self._send(tool, args))

    def page(self, entity: str) -> dict[str, Any] | None:
        deadline = time.monotonic() + _PAGE_WAIT
        while True:  # the server's pages follow the commits in the background
            answer = self._send("read_page", {"entity": entity})
            if answer.is_success:
                return _answer(answer)
            if time.monotonic() > deadline:
                return None
            time.sleep(0.2)


def _server_key(http: httpx.Client, settings: Settings, uid: str) -> str:
    """The demo user's key: the one kept from an earlier run while the server accepts it,
    else a new one the admin's key asks for (a new account's first key, or another)."""
    path = demo_key_file(settings, uid)
    token = _read_key(path)
    if token is not None:
        me = http.get("/api/me", headers={"Authorization": f"Bearer {token}"})
        if me.is_success and me.json().get("user") == uid:
            return token
    from kgmem.api.auth import key_file  # the web surfaces load only when used

    admin = _read_key(key_file(settings))
    if admin is None:
        fail(f"a server runs at {http.base_url}, but there is no admin key in {key_file(settings)}")
    headers = {"Authorization": f"Bearer {admin}"}
    made = http.post("/api/admin/users", json={"user": uid}, headers=headers)
    if made.status_code == 409:  # the account exists: another key for it
        made = http.post(f"/api/admin/users/{uid}/keys", json={"label": _LABEL}, headers=headers)
    token = str(_answer(made)["token"])
    write_key_file(path, token)
    return token


@contextmanager
def server_client(settings: Settings, url: str, uid: str) -> Iterator[DemoClient]:
    """The demo user's tools over HTTP, on the server at ``url``."""
    with httpx.Client(base_url=url, timeout=60) as http:
        try:
            token = _server_key(http, settings, uid)
        except httpx.HTTPError as exc:
            fail(f"the server at {url} does not answer: {exc}")
        http.headers["Authorization"] = f"Bearer {token}"
        yield ServerClient(http)
