"""Which methods a path takes, said the same way by ``OPTIONS`` and by a 405, and the one
error shape for what routing refuses (no such path, a method the path does not take).

Starlette answers a method a route does not take with the methods of the *first* route whose
path matched, so a path served by two routes (``GET`` and ``POST /api/admin/users``) said only
one of them, and ``/api/memories/{id}`` (whose id, an IRI, spans segments) matched
``/api/memories/0/pin`` and said ``GET, HEAD`` for a route that takes only ``POST``. Here the
methods are those of every route whose path matches, and an id in a path is one segment or a
kgmem node IRI (:class:`IdRoute`), so no route claims another's path.
"""

from __future__ import annotations

import re
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope

from kgmem.api.errors import error_response
from kgmem.store import USER_NODE_BASE

__all__ = ["IdRoute", "allowed_methods", "http_error"]

# a node IRI is <base><uid>/<kind>/<id>; any other id with a slash names no node
_NODE = re.compile(re.escape(USER_NODE_BASE) + r"[^/]+/[^/]+/[^/]+")


class IdRoute(Route):
    """A route whose ``{id:path}`` matches one segment (a short id) or a kgmem node IRI
    (URL-encoded, its slashes arrive decoded), never a path that goes on past the id, nor
    one of ``reserved`` (a sibling route's literal segment: ``/api/memories/batch-draft``)."""

    def __init__(self, *args: Any, reserved: frozenset[str] = frozenset(), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reserved = reserved

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match is Match.NONE:
            return match, child
        found = child.get("path_params", {}).get("id")
        if isinstance(found, str) and (
            found in self.reserved or ("/" in found and not _NODE.fullmatch(found))
        ):
            return Match.NONE, {}
        return match, child


def allowed_methods(routes: list[BaseRoute], scope: Scope) -> list[str]:
    """Every method some route takes at ``scope``'s path (and OPTIONS), sorted."""
    methods = {"OPTIONS"}
    for route in routes:
        if isinstance(route, Route) and route.methods:
            match, _ = route.matches(scope)
            if match is not Match.NONE:
                methods |= route.methods
    return sorted(methods)


async def http_error(request: Request, exc: Exception) -> Response:
    """Starlette exception handler for what routing raises: ``OPTIONS`` on a path is 204
    with ``Allow``; another method the path does not take is 405 with ``Allow``; the rest
    (404) in the one error shape."""
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        path = request.url.path
        return error_response(404, "not_found", f"no route {request.method} {path}", "path")
    if exc.status_code != 405:
        return error_response(exc.status_code, "http_error", exc.detail)
    allow = ", ".join(allowed_methods(request.app.router.routes, request.scope))
    if request.method == "OPTIONS":
        return Response(status_code=204, headers={"Allow": allow})
    answer: JSONResponse = error_response(
        405, "method_not_allowed", f"{request.method} is not taken here; use {allow}", "method"
    )
    answer.headers["Allow"] = allow
    return answer
