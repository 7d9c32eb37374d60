"""Accounts over HTTP, for admins: what ``kgmem users`` does locally, while a server runs.

    GET  /api/admin/users                      every account (role, live keys, dates)
    POST /api/admin/users                      {"user", "role"?, "name"?} -> a first key
    POST /api/admin/users/{user}/keys          {"label"?} -> another key
    POST /api/admin/users/{user}/revoke        {"key_id"?} -> one key, or the account

A caller without the admin role gets 403; a new key is in the answer once and never again.
Arguments are checked like every tool's (:class:`~kgmem.api.tools_args.Fields`): unknown
fields and wrong types are 422 naming the field.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kgmem.api.accounts import Accounts, IssuedKey, Role
from kgmem.api.auth import principal_of, require_admin
from kgmem.api.errors import error_response
from kgmem.api.rest_body import BodyError, read_json
from kgmem.api.tools_args import Fields, jsonable

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


def admin_routes() -> list[Route]:
    return [
        Route("/api/admin/users", _admin(_list), methods=["GET"]),
        Route("/api/admin/users", _admin(_add), methods=["POST"]),
        Route("/api/admin/users/{user}/keys", _admin(_key), methods=["POST"]),
        Route("/api/admin/users/{user}/revoke", _admin(_revoke), methods=["POST"]),
    ]
