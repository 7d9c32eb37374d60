"""The REST surface under ``/api``: one declarative table of endpoints over the agent tools.

Each :class:`Endpoint` names the tool it calls (:mod:`kgmem.api.tools.registry`), its path and query
parameters and whether it takes a JSON body; the routes and the OpenAPI document
(:mod:`kgmem.api.rest.openapi`, served at ``/api/openapi.json``) are both made from the table, so
they cannot drift apart. A request's arguments are its body's fields, its query parameters
and its path parameters (and what the route fixes, such as a lifecycle action). A body is
checked against the schema the document shows for it, then everything is parsed once by the
tool: an unknown field or parameter is refused with its name, and every refusal happens
before anything is read or written.

Memory ids in paths are the full IRI (URL-encoded) or the short id; the caller's key decides
whose memory it is, so another user's id is a 404.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kgmem.api.accounts import Principal
from kgmem.api.auth import principal_of
from kgmem.api.errors import error_response
from kgmem.api.rest.body import BodyError, decode_json, read_capped
from kgmem.api.rest.openapi import body_schema, openapi_route
from kgmem.api.rest.schema_check import SchemaCheck
from kgmem.api.rest.table import ENDPOINTS, Endpoint
from kgmem.api.routing import IdRoute
from kgmem.api.services import Services
from kgmem.api.tools.args import refuse_unreadable
from kgmem.api.tools.registry import ArgumentError, call
from kgmem.config import Settings
from kgmem.errors import KgmemError

__all__ = ["rest_routes"]


@dataclass(frozen=True)
class _Given:
    """What a request gave, read on the event loop; decoded and checked on a worker thread."""

    body: bytes | None  # None: the route takes no body
    content_type: str
    query: dict[str, object]
    path: dict[str, object]


async def _given(request: Request, endpoint: Endpoint, cap: int) -> _Given:
    body = await read_capped(request, cap)
    if body and not endpoint.body:
        raise BodyError(400, "malformed", "this route takes no body", "body")
    content_type = request.headers.get("content-type", "")
    query = _query(request, endpoint)
    return _Given(body if endpoint.body else None, content_type, query, dict(request.path_params))


def _arguments(endpoint: Endpoint, body_check: SchemaCheck, given: _Given) -> dict[str, object]:
    raw: dict[str, object] = {}
    if given.body is not None:
        if not given.body and endpoint.body_required:
            raise BodyError(400, "malformed", "this route needs a JSON object body", "body")
        if given.body:  # a JSON null is a body, and no object
            body = decode_json(given.body, given.content_type)
            _check_body(endpoint, body_check, body)
            assert isinstance(body, dict)
            raw.update(body)
    raw.update(given.query)
    raw.update(given.path)
    raw.update(endpoint.fixed)
    return raw


def _check_body(endpoint: Endpoint, body_check: SchemaCheck, body: object) -> None:
    """Refuse a body the OpenAPI document refuses, naming the field (what nothing can store,
    a lone surrogate or a null, first)."""
    if not isinstance(body, dict):
        raise ArgumentError(None, "the body must be a JSON object")
    refuse_unreadable(body)
    for name in (*endpoint.path_params, *endpoint.fixed):
        if name in body:
            raise ArgumentError(name, "unknown field (it is given by the URL)")
    body_check.check(body)


def _query(request: Request, endpoint: Endpoint) -> dict[str, object]:
    params = {p.name: p for p in endpoint.query}
    out: dict[str, object] = {}
    for name in request.query_params:
        param = params.get(name)
        if param is None:
            raise ArgumentError(name, "unknown query parameter")
        values = request.query_params.getlist(name)
        if not param.many and len(values) > 1:
            raise ArgumentError(name, "give it once")
        out[param.arg] = values if param.many else values[0]
    return out


def _rename(exc: KgmemError, endpoint: Endpoint) -> None:
    """Name a query parameter as the URL does (``q``, not the tool's ``query``)."""
    names = {p.arg: p.name for p in endpoint.query}
    current = getattr(exc, "field", None)
    if isinstance(current, str) and current in names:
        exc.field = names[current]  # type: ignore[attr-defined]


def _call(
    services: Services,
    principal: Principal,
    endpoint: Endpoint,
    body_check: SchemaCheck,
    given: _Given,
) -> dict[str, Any]:
    """Check the arguments and run the tool, on this worker thread (a large body takes a
    while to decode and check). A failure's tracebacks are dropped here: their frames may
    hold store cursors, which must be freed on the thread that opened them."""
    try:
        raw = _arguments(endpoint, body_check, given)
        return call(services, principal, endpoint.tool, raw)
    except Exception as exc:
        seen: BaseException | None = exc
        while seen is not None:
            seen.__traceback__ = None
            seen = seen.__cause__ or seen.__context__
        raise


def _handler(endpoint: Endpoint, settings: Settings) -> Callable[[Request], Awaitable[Response]]:
    body_check = SchemaCheck(body_schema(endpoint, settings) if endpoint.body else {})

    async def handle(request: Request) -> Response:
        principal = principal_of(request)
        services: Services = request.app.state.services
        try:
            given = await _given(request, endpoint, settings.max_body_bytes)
            result = await run_in_threadpool(
                _call, services, principal, endpoint, body_check, given
            )
        except BodyError as exc:
            return error_response(exc.status, exc.code, exc.message, exc.field)
        except KgmemError as exc:
            _rename(exc, endpoint)
            raise
        return JSONResponse(result)

    handle.__name__ = endpoint.operation_id
    return handle


def _route(endpoint: Endpoint, settings: Settings) -> Route:
    handler = _handler(endpoint, settings)
    if "id" not in endpoint.path_params:
        return Route(endpoint.route, handler, methods=[endpoint.method])
    prefix = endpoint.path.split("{id}", 1)[0]
    siblings = (
        e.path[len(prefix) :].split("/", 1)[0] for e in ENDPOINTS if e.path.startswith(prefix)
    )
    reserved = frozenset(s for s in siblings if s and not s.startswith("{"))
    return IdRoute(endpoint.route, handler, methods=[endpoint.method], reserved=reserved)


def rest_routes(settings: Settings) -> list[Route]:
    """The REST routes and ``GET /api/openapi.json``; a body is checked against the schema
    the document shows for it (:mod:`kgmem.api.rest.schema_check`)."""
    routes = [_route(e, settings) for e in ENDPOINTS]
    return [*routes, openapi_route()]
