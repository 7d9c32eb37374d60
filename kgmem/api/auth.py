"""Bearer API keys on every surface but ``/health``; the caller's user id is the only scope.

:class:`KeyAuth` is plain ASGI middleware, so GraphQL, REST, SPARQL and the MCP transport
mounted under the app are all behind it: a request without an accepted key gets a 401 in
the one error shape and never reaches a surface. Surfaces read the caller with
:func:`principal_of`; none accepts a user id from the caller as authority.

Every start: :func:`default_admin_key` keeps ``$KGMEM_HOME/api-key`` (mode 0600) holding a
live admin key, so the single-user embedded default works with
``$(cat ~/.local/share/kgmem/api-key)``: with no admin in the store (a new store, or only
users made with ``kgmem users add`` before the first start) it creates the default user as
an admin with one key; a default admin whose key file is gone gets a new key there.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send

from kgmem.api.accounts import Accounts, IssuedKey, Principal, Role, write_key_file
from kgmem.api.browser import is_browser_path
from kgmem.api.errors import error_response
from kgmem.config import Settings
from kgmem.errors import Forbidden, Unauthenticated

__all__ = ["KeyAuth", "default_admin_key", "key_file", "principal_of", "require_admin"]

OPEN_PATHS = frozenset({"/health"})


def key_file(settings: Settings) -> Path:
    """Where the default admin's key is kept for the single-user default."""
    return settings.home / "api-key"


def default_admin_key(accounts: Accounts, settings: Settings) -> IssuedKey | None:
    """Make sure :func:`key_file` holds a live admin key; the key written, if one was.

    While the file's key works, nothing happens (a start never makes a second key). Else,
    with no live admin in the store, the default user is created as one; if the default user
    already is a live admin (its file was deleted, or its key revoked), it gets a new key
    (an older one is not revoked: an agent's configuration may hold a copy). Admins made by
    hand, or a default user made by hand as a plain or revoked account, are left alone.
    """
    path = key_file(settings)
    if _admin_key_in(accounts, path):
        return None
    uid = settings.default_user
    existing = {a.uid: a for a in accounts.all()}
    default = existing.get(uid)
    if default is None:
        if any(a.role is Role.ADMIN and a.revoked_at is None for a in existing.values()):
            return None
        issued = accounts.add(uid, role=Role.ADMIN, label="first start")
    elif default.role is Role.ADMIN and default.revoked_at is None:
        issued = accounts.issue(uid, label="api-key file")
    else:
        return None
    write_key_file(path, issued.token)
    return issued


def _admin_key_in(accounts: Accounts, path: Path) -> bool:
    try:
        return accounts.authenticate(path.read_text(encoding="utf-8")).admin
    except (OSError, UnicodeDecodeError, Unauthenticated):
        return False


def _bearer(header: str | None) -> str:
    if not header:
        raise Unauthenticated("missing API key: send 'Authorization: Bearer <key>'")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated("the Authorization header must be 'Bearer <key>'")
    return token.strip()


def _ide_page(scope: Scope) -> bool:
    """A browser asking for the GraphiQL page itself: static HTML with no data, which a
    browser cannot fetch with a Bearer header; the key goes in its Headers tab, and every
    query it sends is authenticated. The test is strawberry's own for rendering the IDE
    (GET, no ``query`` parameter, HTML accepted), so nothing else gets through."""
    if scope["path"] != "/graphql" or scope["method"] != "GET":
        return False
    headers = Headers(scope=scope)
    if "authorization" in headers:  # a client with a key: authenticated like any request
        return False
    if "query" in parse_qs(scope.get("query_string", b"").decode("latin-1")):
        return False
    accept = headers.get("accept", "")
    return "text/html" in accept or "*/*" in accept


def _open(scope: Scope) -> bool:
    """A request that needs no key: liveness (``/health`` without its admin-only detail),
    the GraphiQL page and the memory browser's static files (:mod:`kgmem.api.browser`)."""
    if is_browser_path(scope["path"], scope["method"]):
        return True
    if scope["path"] in OPEN_PATHS:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        return "detail" not in query
    return _ide_page(scope)


class KeyAuth:
    """Authenticate every HTTP request but the open ones (:func:`_open`)."""

    def __init__(self, app: ASGIApp, accounts: Accounts) -> None:
        self.app, self.accounts = app, accounts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or _open(scope):
            await self.app(scope, receive, send)
            return
        try:
            token = _bearer(Headers(scope=scope).get("authorization"))
            principal = self.accounts.authenticate(token)
        except Unauthenticated as exc:
            response = error_response(401, "unauthenticated", exc.reason, "Authorization")
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


def principal_of(connection: HTTPConnection) -> Principal:
    """The caller of a request that passed :class:`KeyAuth`."""
    principal = connection.scope.get("state", {}).get("principal")
    if not isinstance(principal, Principal):  # only when a route is mounted outside KeyAuth
        raise Unauthenticated("this request was not authenticated")
    return principal


def require_admin(principal: Principal) -> Principal:
    if not principal.admin:
        raise Forbidden(f"user {principal.uid} is not an admin")
    return principal
