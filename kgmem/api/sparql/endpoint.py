"""``/sparql``: the SPARQL 1.1 Protocol, read-only, over the caller's own graphs.

Requests: ``GET ?query=``, ``POST`` of ``application/x-www-form-urlencoded`` (``query=``), or
``POST`` of ``application/sparql-query`` (the body is the query). ``default-graph-uri`` and
``named-graph-uri`` (in the URL, or in the form) may narrow the dataset to some of the
caller's own standing graphs and catalogue graphs; naming any other graph is a 403 (see
:mod:`kgmem.store.user_query`, which also fixes the dataset whatever ``FROM``, ``FROM NAMED``
or ``GRAPH <iri>`` the query says). Answers are negotiated (:mod:`kgmem.api.sparql.formats`).

Refused, with nothing run and nothing changed: an update (an ``update=`` field, an
``application/sparql-update`` body, or update text as the query), ``LOAD``, ``SERVICE``
(400 ``query_refused``); a body of another content type (415); a body over
``max_body_bytes`` (413). A result over ``sparql_result_limit`` is a 413
``result_too_large``; a query still running after ``sparql_timeout_seconds`` is stopped
and answered 400 ``query_timeout``, one that outgrows its memory 400 ``query_too_large``
(:mod:`kgmem.store.isolated`).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

import anyio.to_thread
from rdflib import URIRef
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from kgmem.api.auth import principal_of
from kgmem.api.errors import error_response
from kgmem.api.rest.body import BodyError, read_capped
from kgmem.api.services import Services
from kgmem.api.sparql.formats import NotAcceptable, render
from kgmem.errors import QueryRefused
from kgmem.store import DatasetRequest, QueryResult

__all__ = ["ProtocolQuery", "SparqlEndpoint", "read_query"]
_FORM = "application/x-www-form-urlencoded"
_QUERY = "application/sparql-query"
_UPDATE = "application/sparql-update"


class _BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        self.status, self.code, self.message, self.field = status, code, message, field
        super().__init__(message)


@dataclass(frozen=True)
class ProtocolQuery:
    """One protocol request: the query text and the graphs its parameters name."""

    text: str
    graphs: DatasetRequest


class SparqlEndpoint:
    """The ``/sparql`` ASGI endpoint; one per app, holding the app's query runner."""

    def __init__(self, services: Services) -> None:
        self.max_body = services.settings.max_body_bytes
        self.queries = services.sparql

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.respond(Request(scope, receive))
        await response(scope, receive, send)

    async def respond(self, request: Request) -> Response:
        uid = principal_of(request).uid
        try:
            query = await read_query(request, self.max_body)
        except _BadRequest as exc:
            return error_response(exc.status, exc.code, exc.message, exc.field)
        result = await anyio.to_thread.run_sync(self.queries.run, uid, query.text, query.graphs)
        accept = request.headers.get("accept")
        try:
            return await anyio.to_thread.run_sync(_response, result, accept)
        except NotAcceptable as exc:
            return error_response(406, "not_acceptable", str(exc), "Accept")


def _response(result: QueryResult, accept: str | None) -> Response:
    chosen, body = render(result, accept)
    media_type = chosen.media_type
    if not media_type.endswith(("+json", "/json")):
        media_type += "; charset=utf-8"
    return Response(body, headers={"Content-Type": media_type, "Vary": "Accept"})


async def read_query(request: Request, max_body: int) -> ProtocolQuery:
    """The query and graph parameters of a GET or POST, as the protocol sends them."""
    params: dict[str, list[str]] = {}
    for key, value in request.query_params.multi_items():
        params.setdefault(key, []).append(value)
    if request.method == "POST":
        for key, values in (await _posted(request, max_body)).items():
            params.setdefault(key, []).extend(values)
    if "update" in params:
        raise QueryRefused("updates are not accepted: this endpoint is read-only")
    texts = params.get("query", [])
    if len(texts) != 1 or not texts[0].strip():
        raise _BadRequest(
            400,
            "invalid",
            "send exactly one query: ?query=..., a form field query=..., or a body of "
            f"type {_QUERY}",
            "query",
        )
    graphs = DatasetRequest(
        tuple(URIRef(g) for g in params.get("default-graph-uri", [])),
        tuple(URIRef(g) for g in params.get("named-graph-uri", [])),
    )
    return ProtocolQuery(texts[0], graphs)


async def _posted(request: Request, max_body: int) -> dict[str, list[str]]:
    """The parameters a POST body carries: form fields, or the query itself."""
    content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if content_type == _UPDATE:
        raise QueryRefused("updates are not accepted: this endpoint is read-only")
    if content_type not in (_FORM, _QUERY):
        raise _BadRequest(
            415,
            "unsupported_media_type",
            f"a POST to /sparql must be {_FORM} or {_QUERY}, not {content_type or 'untyped'}",
            "Content-Type",
        )
    body = _text(await _body(request, max_body))
    if content_type == _QUERY:
        return {"query": [body]}
    return parse_qs(body, keep_blank_values=True)


async def _body(request: Request, cap: int) -> bytes:
    try:
        return await read_capped(request, cap)
    except BodyError as exc:
        raise _BadRequest(exc.status, exc.code, exc.message, exc.field) from None


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _BadRequest(400, "invalid", f"the body is not UTF-8: {exc.reason}") from exc
