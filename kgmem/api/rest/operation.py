"""The REST routes that are no agent tool's: ``/api/me``, ``/health``, ``/api/openapi.json`` and
the admin routes (:mod:`kgmem.api.rest.admin`).

Each is an :class:`Operation`: what the OpenAPI document (:mod:`kgmem.api.rest.openapi`) says
of it, and, served through :func:`checked`, what the route enforces. The route checks its path
parameters, its query and its JSON body against the very schemas the document shows, with
:class:`~kgmem.api.rest.schema_check.SchemaCheck`, so a refusal is a 422 naming the field as
the tools' routes do, and the document and the route cannot drift apart. A route with a raw
body (a Turtle or RDF file) takes its bytes as they come; what they must hold is the route's
to check (a 422 too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from kgmem.api.auth import principal_of, require_admin
from kgmem.api.errors import error_response
from kgmem.api.rest.body import BodyError, decode_json, read_capped
from kgmem.api.rest.schema_check import SchemaCheck
from kgmem.api.tools.args import ArgumentError, Fields, refuse_unreadable
from kgmem.api.tools.schema import obj

__all__ = ["Access", "Action", "Given", "Operation", "Schema", "checked", "user_id"]

Schema = dict[str, Any]


class Access(StrEnum):
    """Whose key a route takes."""

    OPEN = "open"  # none needed (``/health``; its detail takes an admin's key)
    KEY = "key"  # any live key
    ADMIN = "admin"  # an admin's key; any other is a 403


def user_id(description: str) -> Schema:
    """A user id as :func:`kgmem.store.check_id` takes it (so does a shapes file's name)."""
    return {
        "type": "string",
        "maxLength": 128,
        "pattern": "^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        "description": description + ": 1 to 128 of A-Z a-z 0-9 _ . - starting with a "
        "letter or digit",
    }


# the errors every route may answer, by what it takes
_GENERIC = {
    400: "Malformed request: the body is not JSON, or a body where none is taken",
    401: "Missing, malformed, unknown or revoked API key",
    403: "The key's user is not an admin",
    413: "The body is over max_body_bytes",
    415: "The body is not application/json",
    422: "A parameter or field is missing, of the wrong type, out of range or unknown",
}


@dataclass(frozen=True)
class Operation:
    """One route: its method, its path as OpenAPI writes it (``/api/admin/users/{user}``,
    which is also Starlette's), what it takes and what it answers. ``errors`` are the statuses
    it answers beyond those what it takes implies (a 404, a 409), each with its meaning.
    ``lenient``: unknown query parameters are ignored, not refused, and the route is not
    served through :func:`checked` (``/health``, which probes call with their own)."""

    method: str
    path: str
    operation_id: str
    summary: str
    answer: Schema  # the success answer's JSON
    status: int = 200
    access: Access = Access.ADMIN
    params: Mapping[str, Schema] = field(default_factory=dict)  # path parameters
    query: Mapping[str, Schema] = field(default_factory=dict)
    required_query: tuple[str, ...] = ()
    body: Schema | None = None  # a JSON body, exactly what it takes
    body_required: bool = False
    raw_body: Mapping[str, Schema] = field(default_factory=dict)  # media type -> its schema
    errors: Mapping[int, str] = field(default_factory=dict)
    description: str = ""
    lenient: bool = False

    @property
    def query_schema(self) -> Schema:
        return obj(dict(self.query), self.required_query)

    @property
    def params_schema(self) -> Schema:
        return obj(dict(self.params), tuple(self.params))

    @property
    def responses(self) -> dict[int, str]:
        """Every error status it may answer, with its meaning."""
        found: dict[int, str] = {}
        if self.access is not Access.OPEN:
            found[401] = _GENERIC[401]
        if self.access is Access.ADMIN:
            found[403] = _GENERIC[403]
        if not self.lenient:  # an unknown query parameter; a body where none is taken
            found.update({s: _GENERIC[s] for s in (400, 422)})
        if self.body is not None:
            found.update({s: _GENERIC[s] for s in (400, 413, 415, 422)})
        if self.raw_body:
            found.update({s: _GENERIC[s] for s in (413, 422)})
        found.update(self.errors)
        return dict(sorted(found.items()))


@dataclass(frozen=True)
class Given:
    """What a checked request gave: its JSON body (none: an empty object) and its query,
    each to be read field by field, and a raw body's bytes."""

    body: Fields
    query: Fields
    raw: bytes = b""


Action = Callable[[Request, Given], Awaitable[Response]]


def _query(request: Request, operation: Operation) -> dict[str, object]:
    out: dict[str, object] = {}
    for name in request.query_params:
        if name not in operation.query:
            raise ArgumentError(name, "unknown query parameter")
        values = request.query_params.getlist(name)
        if len(values) > 1:
            raise ArgumentError(name, "give it once")
        out[name] = values[0]
    return out


def checked(operation: Operation, action: Action) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint of ``operation``: the caller's access, then its path parameters, query
    and body against the schemas the document shows (refused before ``action`` runs)."""
    params_check = SchemaCheck(operation.params_schema)
    query_check = SchemaCheck(operation.query_schema)
    body_check = SchemaCheck(operation.body) if operation.body is not None else None

    async def endpoint(request: Request) -> Response:
        if operation.access is not Access.OPEN:
            principal = principal_of(request)
            if operation.access is Access.ADMIN:
                require_admin(principal)
        cap = request.app.state.services.settings.max_body_bytes
        try:
            raw = await read_capped(request, cap)
            if raw and body_check is None and not operation.raw_body:
                raise BodyError(400, "malformed", "this route takes no body", "body")
            decoded = None
            if body_check is not None:
                decoded = decode_json(raw, request.headers.get("content-type", ""))
        except BodyError as exc:
            return error_response(exc.status, exc.code, exc.message, exc.field)
        params_check.check(dict(request.path_params))
        query = _query(request, operation)
        query_check.check(query)
        body: object = {}
        if body_check is not None:
            body = decoded if raw else {}  # none given: an empty object; a JSON null is null
            if isinstance(body, dict):
                refuse_unreadable(body)
            body_check.check(body)
        return await action(request, Given(Fields(body), Fields(query), raw))

    endpoint.__name__ = operation.operation_id
    return endpoint
