"""Accounts over HTTP, for admins: what ``kgmem users`` does locally, while a server runs.

    GET  /api/admin/users                      every account (role, live keys, dates)
    POST /api/admin/users                      {"user", "role"?, "name"?} -> a first key
    POST /api/admin/users/{user}/keys          {"label"?} -> another key
    POST /api/admin/users/{user}/revoke        {"key_id"?} -> one key, or the account
    POST /api/admin/users/{user}/reset         {"confirm": user} -> drop all their memory

    GET    /api/admin/shapes                    every shapes file (bundled, local)
    PUT    /api/admin/shapes/{name}             the body (Turtle) as the admin's shapes file
    DELETE /api/admin/shapes/{name}             drop one of the admin's (bundled: 409)

    GET    /api/admin/ontologies                the catalogue (origin, release, counts)
    PUT    /api/admin/ontologies/{id}?format=   the body (RDF) as ontology ``id``
    DELETE /api/admin/ontologies/{id}           drop it (bundled ones are protected)

A caller without the admin role gets 403; a new key is in the answer once and never again.
A reset keeps the account and its keys; ``confirm`` must repeat the user id, so a reset is
never one mistyped path away.
Arguments are checked like every tool's (:class:`~kgmem.api.tools.args.Fields`): unknown
fields and wrong types are 422 naming the field.
"""

from __future__ import annotations

import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kgmem.api.accounts import Accounts, IssuedKey, Role
from kgmem.api.auth import principal_of, require_admin
from kgmem.api.errors import error_response
from kgmem.api.rest.body import BodyError, read_json
from kgmem.api.tools.args import Fields, jsonable
from kgmem.errors import AccountError, ArgumentError
from kgmem.memory import user_graphs
from kgmem.ontology import Catalogue, load_manifest
from kgmem.store import RdfFormat

__all__ = ["admin_routes"]


Action = Callable[[Accounts, Request, Fields], Awaitable[Response]]


def _admin(action: Action) -> Callable[[Request], Awaitable[Response]]:
    """An endpoint for admins only, with the request's JSON body read as :class:`Fields`
    (none: an empty object); a refused body is answered before the action runs."""

    async def endpoint(request: Request) -> Response:
        require_admin(principal_of(request))
        cap = request.app.state.services.settings.max_body_bytes
        try:
            raw = await read_json(request, cap) if request.method == "POST" else None
        except BodyError as exc:
            return error_response(exc.status, exc.code, exc.message, exc.field)
        return await action(request.app.state.accounts, request, Fields(raw or {}))

    return endpoint


def _issued(issued: IssuedKey) -> JSONResponse:
    body = {"user": issued.uid, "key_id": issued.key_id, "token": issued.token}
    return JSONResponse(body, status_code=201)


async def _list(accounts: Accounts, request: Request, f: Fields) -> Response:
    f.done()
    found = await run_in_threadpool(accounts.all)
    return JSONResponse({"users": [jsonable(a) for a in found]})


async def _add(accounts: Accounts, request: Request, f: Fields) -> Response:
    uid = f.required_text("user", maximum=128)
    role = f.choice("role", Role) or Role.USER
    name = f.text("name", maximum=200)
    f.done()
    return _issued(await run_in_threadpool(lambda: accounts.add(uid, role=role, name=name)))


async def _key(accounts: Accounts, request: Request, f: Fields) -> Response:
    label = f.text("label", maximum=200)
    f.done()
    uid = request.path_params["user"]
    return _issued(await run_in_threadpool(accounts.issue, uid, label))


async def _revoke(accounts: Accounts, request: Request, f: Fields) -> Response:
    key_id = f.text("key_id", maximum=64)
    f.done()
    uid = request.path_params["user"]
    count = await run_in_threadpool(accounts.revoke, uid, key_id)
    return JSONResponse({"user": uid, "key_id": key_id, "revoked_keys": count})


def _catalogue(request: Request) -> Catalogue:
    services = request.app.state.services
    return Catalogue(services.store, services.queries, load_manifest())


async def _ontologies(accounts: Accounts, request: Request, f: Fields) -> Response:
    f.done()
    found = await run_in_threadpool(_catalogue(request).list)
    return JSONResponse({"ontologies": [jsonable(i) for i in found]})


async def _reset(accounts: Accounts, request: Request, f: Fields) -> Response:
    uid = request.path_params["user"]
    if f.required_text("confirm", maximum=128) != uid:
        raise ArgumentError("confirm", f"must repeat the user id {uid!r} to reset it")
    f.done()
    services = request.app.state.services
    known = {a.uid for a in await run_in_threadpool(accounts.all)}
    graphs = await run_in_threadpool(user_graphs, services.store, uid)
    if uid not in known and not graphs:
        raise AccountError(uid, "no such user")
    report = await run_in_threadpool(services.reset_user, uid)
    return JSONResponse(jsonable(report))


async def _raw_body(request: Request) -> bytes | Response:
    """The request body up to the configured cap (over it: the 413 answer)."""
    cap = request.app.state.services.settings.max_body_bytes
    too_large = error_response(413, "too_large", f"the body is over the {cap}-byte cap", "body")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        return too_large
    body = await request.body()
    return too_large if len(body) > cap else body


async def _put_ontology(request: Request) -> Response:
    """The body is the RDF file itself (not JSON): ``?format=`` names its syntax."""
    require_admin(principal_of(request))
    ontology_id = request.path_params["ontology"]
    f = Fields(dict(request.query_params))
    fmt = f.choice("format", RdfFormat, required=True)
    title = f.text("title", maximum=200)
    f.done()
    body = await _raw_body(request)
    if isinstance(body, Response):
        return body
    catalogue = _catalogue(request)

    def add() -> dict[str, object]:
        with tempfile.TemporaryDirectory(prefix="kgmem-upload-") as tmp:
            path = Path(tmp) / f"{ontology_id}.upload"
            path.write_bytes(body)
            outcome = catalogue.add(path, ontology_id, fmt, replace=True, title=title)
        return {"ontology": outcome.ontology_id, "triples": outcome.triples}

    return JSONResponse(await run_in_threadpool(add), status_code=201)


async def _delete_ontology(request: Request) -> Response:
    require_admin(principal_of(request))
    ontology_id = request.path_params["ontology"]
    dropped = await run_in_threadpool(_catalogue(request).remove, ontology_id)
    return JSONResponse({"ontology": ontology_id, "graphs": [str(g) for g in dropped]})


async def _shapes(accounts: Accounts, request: Request, f: Fields) -> Response:
    f.done()
    found = await run_in_threadpool(request.app.state.services.shapes.list)
    return JSONResponse({"shapes": [jsonable(i) for i in found]})


async def _put_shapes(request: Request) -> Response:
    """The body is the Turtle file itself; it replaces the admin's file of that name."""
    require_admin(principal_of(request))
    Fields(dict(request.query_params)).done()
    body = await _raw_body(request)
    if isinstance(body, Response):
        return body
    shapes = request.app.state.services.shapes
    info = await run_in_threadpool(shapes.put, request.path_params["name"], body)
    return JSONResponse(jsonable(info), status_code=201)


async def _delete_shapes(request: Request) -> Response:
    require_admin(principal_of(request))
    shapes = request.app.state.services.shapes
    info = await run_in_threadpool(shapes.remove, request.path_params["name"])
    return JSONResponse(jsonable(info))


def admin_routes() -> list[Route]:
    return [
        Route("/api/admin/users", _admin(_list), methods=["GET"]),
        Route("/api/admin/users", _admin(_add), methods=["POST"]),
        Route("/api/admin/users/{user}/keys", _admin(_key), methods=["POST"]),
        Route("/api/admin/users/{user}/revoke", _admin(_revoke), methods=["POST"]),
        Route("/api/admin/users/{user}/reset", _admin(_reset), methods=["POST"]),
        Route("/api/admin/ontologies", _admin(_ontologies), methods=["GET"]),
        Route("/api/admin/ontologies/{ontology}", _put_ontology, methods=["PUT"]),
        Route("/api/admin/ontologies/{ontology}", _delete_ontology, methods=["DELETE"]),
        Route("/api/admin/shapes", _admin(_shapes), methods=["GET"]),
        Route("/api/admin/shapes/{name}", _put_shapes, methods=["PUT"]),
        Route("/api/admin/shapes/{name}", _delete_shapes, methods=["DELETE"]),
    ]
