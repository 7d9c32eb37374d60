"""Accounts over HTTP, for admins: what ``kgmem users`` does locally, while a server runs.

    GET  /api/admin/users                      every account (role, live keys, dates)
    POST /api/admin/users                      {"user", "role"?, "name"?} -> a first key
    POST /api/admin/users/{user}/keys          {"label"?, "host"?} -> another key
    POST /api/admin/users/{user}/revoke        {"key_id"?} -> one key, or the account
    POST /api/admin/users/{user}/reset         {"confirm": user} -> a reset job (rest.resets)

    GET    /api/admin/shapes                    every shapes file (bundled, local)
    PUT    /api/admin/shapes/{name}             the body (Turtle) as the admin's shapes file
    DELETE /api/admin/shapes/{name}             drop one of the admin's (bundled: 409)

    GET    /api/admin/ontologies                the catalogue (origin, release, counts)
    PUT    /api/admin/ontologies/{id}?format=   the body (RDF) as ontology ``id``
    DELETE /api/admin/ontologies/{id}           drop it (bundled ones are protected)

A caller without the admin role gets 403; a new key is in the answer once and never again.
A reset keeps the account and its keys; ``confirm`` must repeat the user id, so a reset is
never one mistyped path away.

The routes are made from one table of :class:`~kgmem.api.rest.operation.Operation`\\ s, which
the OpenAPI document lists too: each route's path parameters, query and JSON body are checked
against the schemas the document shows (unknown fields and wrong types are 422 naming the
field) before its action runs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from kgmem.api.accounts import IssuedKey, Role
from kgmem.api.rest.operation import Action, Given, Operation, Schema, checked, user_id
from kgmem.api.rest.resets import RESET_TABLE
from kgmem.api.tools.args import jsonable
from kgmem.api.tools.schema import enum, obj, text
from kgmem.ontology import Catalogue, ShapesOrigin, load_manifest
from kgmem.ontology.manifest import ONTOLOGY_ID
from kgmem.store import RdfFormat

__all__ = ["ADMIN", "admin_routes"]


def _answer(properties: Schema, description: str = "") -> Schema:
    """An answer's JSON: these fields, each always there."""
    out: Schema = {"type": "object", "properties": properties, "required": list(properties)}
    if description:
        out["description"] = description
    return out


_STRING: Schema = {"type": "string"}
_COUNT: Schema = {"type": "integer", "minimum": 0}
_OR_NULL: Schema = {"type": ["string", "null"]}
_USER = user_id("a user id")
_PATH_USER = {"user": _USER}
_NO_USER = {404: "No such user"}
_ONTOLOGY: Schema = {
    "type": "string",
    "pattern": f"^{ONTOLOGY_ID.pattern}$",
    "description": "an ontology id: 1 to 64 of a-z 0-9 - starting with a letter or digit",
}
_SHAPES_NAME = user_id("a shapes file's name")
_ACCOUNT = _answer(
    {
        "uid": _STRING,
        "role": enum([r.value for r in Role]),
        "created_at": _STRING,
        "name": _OR_NULL,
        "revoked_at": _OR_NULL,
        "keys": {**_COUNT, "description": "How many live keys it has."},
    }
)
_ISSUED = _answer(
    {"user": _STRING, "key_id": _STRING, "token": _STRING},
    "The new key: its token is shown here once and never again.",
)
_FILE = _answer(
    {
        "path": _STRING,
        "sha256": _STRING,
        "size": _COUNT,
        "triples": _COUNT,
        "origin": _STRING,
        "graph": _STRING,
    }
)
_CATALOGUED = _answer(
    {
        "ontology_id": _STRING,
        "title": _STRING,
        "release": _STRING,
        "origin": _STRING,
        "triples": _COUNT,
        "classes": _COUNT,
        "properties": _COUNT,
        "files": {"type": "array", "items": _FILE},
    }
)
_SHAPES = _answer(
    {
        "name": _STRING,
        "origin": enum([o.value for o in ShapesOrigin]),
        "graph": _STRING,
        "triples": _COUNT,
        "shapes": _COUNT,
    }
)
_TURTLE: Schema = {"type": "string", "description": "A SHACL shapes file in Turtle."}
_RDF: Schema = {
    "type": "string",
    "format": "binary",
    "description": "The RDF file, in the syntax ?format= names (its Content-Type is not read).",
}


def _issued(issued: IssuedKey) -> JSONResponse:
    body = {"user": issued.uid, "key_id": issued.key_id, "token": issued.token}
    return JSONResponse(body, status_code=201)


async def _list(request: Request, given: Given) -> Response:
    found = await run_in_threadpool(request.app.state.accounts.all)
    return JSONResponse({"users": [jsonable(a) for a in found]})


async def _add(request: Request, given: Given) -> Response:
    f = given.body
    uid = f.required_text("user", maximum=128)
    role = f.choice("role", Role) or Role.USER
    name = f.text("name", maximum=200)
    f.done()
    accounts = request.app.state.accounts
    return _issued(await run_in_threadpool(lambda: accounts.add(uid, role=role, name=name)))


async def _key(request: Request, given: Given) -> Response:
    label = given.body.text("label", maximum=200)
    host = given.body.boolean("host") is True
    given.body.done()
    uid = request.path_params["user"]
    accounts = request.app.state.accounts
    return _issued(await run_in_threadpool(lambda: accounts.issue(uid, label, host=host)))


async def _revoke(request: Request, given: Given) -> Response:
    key_id = given.body.text("key_id", maximum=64)
    given.body.done()
    uid = request.path_params["user"]
    count = await run_in_threadpool(request.app.state.accounts.revoke, uid, key_id)
    return JSONResponse({"user": uid, "key_id": key_id, "revoked_keys": count})


def _catalogue(request: Request) -> Catalogue:
    services = request.app.state.services
    return Catalogue(services.store, services.queries, load_manifest())


async def _ontologies(request: Request, given: Given) -> Response:
    found = await run_in_threadpool(_catalogue(request).list)
    return JSONResponse({"ontologies": [jsonable(i) for i in found]})


async def _put_ontology(request: Request, given: Given) -> Response:
    """The body is the RDF file itself (not JSON): ``?format=`` names its syntax."""
    ontology_id = request.path_params["ontology"]
    fmt = given.query.choice("format", RdfFormat, required=True)
    title = given.query.text("title", maximum=200)
    given.query.done()
    catalogue, body = _catalogue(request), given.raw

    def add() -> dict[str, object]:
        with tempfile.TemporaryDirectory(prefix="kgmem-upload-") as tmp:
            path = Path(tmp) / f"{ontology_id}.upload"
            path.write_bytes(body)
            outcome = catalogue.add(path, ontology_id, fmt, replace=True, title=title)
        return {"ontology": outcome.ontology_id, "triples": outcome.triples}

    return JSONResponse(await run_in_threadpool(add), status_code=201)


async def _delete_ontology(request: Request, given: Given) -> Response:
    ontology_id = request.path_params["ontology"]
    dropped = await run_in_threadpool(_catalogue(request).remove, ontology_id)
    return JSONResponse({"ontology": ontology_id, "graphs": [str(g) for g in dropped]})


async def _shapes(request: Request, given: Given) -> Response:
    found = await run_in_threadpool(request.app.state.services.shapes.list)
    return JSONResponse({"shapes": [jsonable(i) for i in found]})


async def _put_shapes(request: Request, given: Given) -> Response:
    """The body is the Turtle file itself; it replaces the admin's file of that name."""
    shapes = request.app.state.services.shapes
    info = await run_in_threadpool(shapes.put, request.path_params["name"], given.raw)
    return JSONResponse(jsonable(info), status_code=201)


async def _delete_shapes(request: Request, given: Given) -> Response:
    shapes = request.app.state.services.shapes
    info = await run_in_threadpool(shapes.remove, request.path_params["name"])
    return JSONResponse(jsonable(info))


_TABLE: tuple[tuple[Operation, Action], ...] = (
    (
        Operation(
            "GET",
            "/api/admin/users",
            "admin_list_users",
            "Every account: role, live keys, dates",
            _answer({"users": {"type": "array", "items": _ACCOUNT}}),
        ),
        _list,
    ),
    (
        Operation(
            "POST",
            "/api/admin/users",
            "admin_add_user",
            "A new account and its first key",
            _ISSUED,
            status=201,
            body=obj(
                {
                    "user": _USER,
                    "role": enum([r.value for r in Role], "Its role (default user)."),
                    "name": text(200, "Its display name."),
                },
                ("user",),
            ),
            body_required=True,
            errors={409: "The account exists already"},
        ),
        _add,
    ),
    (
        Operation(
            "POST",
            "/api/admin/users/{user}/keys",
            "admin_issue_key",
            "Another key for a live account",
            _ISSUED,
            status=201,
            params=_PATH_USER,
            body=obj(
                {
                    "label": text(200, "What the key is for."),
                    "host": {
                        "type": "boolean",
                        "description": "A host key: the chats it hands over (reflect_session) "
                        "are first-hand.",
                    },
                }
            ),
            errors={**_NO_USER, 409: "The account is revoked"},
        ),
        _key,
    ),
    (
        Operation(
            "POST",
            "/api/admin/users/{user}/revoke",
            "admin_revoke",
            "Revoke one key of an account (key_id), or the account and every key",
            _answer({"user": _STRING, "key_id": _OR_NULL, "revoked_keys": _COUNT}),
            params=_PATH_USER,
            body=obj({"key_id": text(64, "The key to revoke (default: the account).")}),
            errors={**_NO_USER, 409: "The account has no such key"},
        ),
        _revoke,
    ),
    (
        Operation(
            "GET",
            "/api/admin/ontologies",
            "admin_list_ontologies",
            "The ontology catalogue: origin, release, counts",
            _answer({"ontologies": {"type": "array", "items": _CATALOGUED}}),
        ),
        _ontologies,
    ),
    (
        Operation(
            "PUT",
            "/api/admin/ontologies/{ontology}",
            "admin_put_ontology",
            "Add or replace an ontology of the catalogue from the body's RDF file",
            _answer({"ontology": _STRING, "triples": _COUNT}),
            status=201,
            params={"ontology": _ONTOLOGY},
            query={
                "format": enum([f.value for f in RdfFormat], "The body's RDF syntax."),
                "title": text(200, "Its title (default: its id)."),
            },
            required_query=("format",),
            raw_body={"application/octet-stream": _RDF},
            errors={
                409: "The id is kgmem's own vocabulary or a bundled ontology",
                422: "A parameter is wrong, or the body does not parse or holds no triples",
            },
        ),
        _put_ontology,
    ),
    (
        Operation(
            "DELETE",
            "/api/admin/ontologies/{ontology}",
            "admin_delete_ontology",
            "Drop an ontology's graphs from the catalogue",
            _answer({"ontology": _STRING, "graphs": {"type": "array", "items": _STRING}}),
            params={"ontology": _ONTOLOGY},
            errors={
                404: "No such ontology",
                409: "The id is kgmem's own vocabulary or a bundled ontology",
            },
        ),
        _delete_ontology,
    ),
    (
        Operation(
            "GET",
            "/api/admin/shapes",
            "admin_list_shapes",
            "Every SHACL shapes file: bundled, and the admins' own",
            _answer({"shapes": {"type": "array", "items": _SHAPES}}),
        ),
        _shapes,
    ),
    (
        Operation(
            "PUT",
            "/api/admin/shapes/{name}",
            "admin_put_shapes",
            "Add or replace an admin's shapes file from the body (Turtle); it applies to "
            "the next write",
            _SHAPES,
            status=201,
            params={"name": _SHAPES_NAME},
            raw_body={"text/turtle": _TURTLE},
            errors={
                409: "The name is a bundled shapes file's",
                422: "A parameter is wrong, or the body does not parse, holds no shape or "
                "does not compile with the other shapes",
            },
        ),
        _put_shapes,
    ),
    (
        Operation(
            "DELETE",
            "/api/admin/shapes/{name}",
            "admin_delete_shapes",
            "Drop an admin's shapes file",
            _SHAPES,
            params={"name": _SHAPES_NAME},
            errors={404: "No shapes file of this name was added", 409: "It is bundled"},
        ),
        _delete_shapes,
    ),
)

#: The admin routes as the OpenAPI document lists them.
_TABLE += RESET_TABLE
ADMIN: tuple[Operation, ...] = tuple(operation for operation, _ in _TABLE)


def admin_routes() -> list[Route]:
    return [Route(op.path, checked(op, action), methods=[op.method]) for op, action in _TABLE]
