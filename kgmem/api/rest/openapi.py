"""``GET /api/openapi.json``: the OpenAPI 3.1 document of the REST surface, made from the
endpoint table (:data:`kgmem.api.rest.table.ENDPOINTS`) and the tools' argument schemas, and
from the operations of the other routes (:data:`OPERATIONS`: ``/api/me``, ``/health``, this
document, the admin routes), whose routes check what they take against the schemas shown
here, so a route, a parameter or a body field cannot be added without appearing here
(``tests/api/test_rest_schema.py`` walks the app's routes to hold it to that)."""

from __future__ import annotations

import copy
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from kgmem import __version__
from kgmem.api.rest.admin import ADMIN
from kgmem.api.rest.health import HEALTH
from kgmem.api.rest.me import ME
from kgmem.api.rest.operation import Access, Given, Operation, checked
from kgmem.api.rest.table import ENDPOINTS, Endpoint
from kgmem.api.tools.registry import TOOLS
from kgmem.api.tools.schema import ERROR, MEMORY_ID
from kgmem.config import Settings

__all__ = ["OPERATIONS", "body_schema", "openapi_document", "openapi_route"]

Schema = dict[str, Any]

_ERRORS = {
    "400": "Malformed request: the body is not JSON, or a body where none is taken",
    "401": "Missing, malformed, unknown or revoked API key",
    "404": "No such memory or decision for the caller",
    "409": "The memory's state does not allow the action, or a conflicting source",
    "413": "The body is over max_body_bytes",
    "415": "The body is not application/json",
    "422": "An argument is missing, of the wrong type, out of range or unknown",
}


def _error(description: str) -> Schema:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


def _path_param(endpoint: Endpoint, name: str) -> Schema:
    values = endpoint.path_enums.get(name)
    given = TOOLS[endpoint.tool].schema["properties"].get(name, MEMORY_ID)
    schema: Schema = {"type": "string", "enum": list(values)} if values else dict(given)
    return {"name": name, "in": "path", "required": True, "schema": schema}


def body_schema(endpoint: Endpoint, settings: Settings) -> Schema:
    """What ``endpoint``'s JSON body takes: its own schema, else the tool's arguments but
    those the path gives; the batch and tag caps as ``settings`` has them."""
    given = endpoint.body_schema or TOOLS[endpoint.tool].schema
    schema = copy.deepcopy(dict(given))
    for name in (*endpoint.path_params, *endpoint.fixed):
        schema["properties"].pop(name, None)
        if name in schema.get("required", []):
            schema["required"].remove(name)
    if not schema.get("required"):
        schema.pop("required", None)
    if endpoint.tool == "draft_memory":
        drafts = schema["properties"]["drafts"]
        drafts["maxItems"] = settings.batch_max
        drafts["items"]["properties"]["tags"]["maxItems"] = settings.max_tags
    return schema


def _body(endpoint: Endpoint, settings: Settings) -> Schema:
    return {
        "required": endpoint.body_required,
        "content": {"application/json": {"schema": body_schema(endpoint, settings)}},
    }


def _operation(endpoint: Endpoint, settings: Settings) -> Schema:
    tool = TOOLS[endpoint.tool]
    params = [_path_param(endpoint, n) for n in endpoint.path_params]
    for p in endpoint.query:
        schema: Schema = dict(p.schema)
        if p.many:
            schema = {"type": "array", "items": schema, "minItems": 1, "maxItems": 20}
        param: Schema = {"name": p.name, "in": "query", "required": p.required or p.name == "q"}
        param.update(schema=schema, description=p.description, style="form", explode=True)
        params.append(param)
    statuses = ["400", "401", "404", "409", "422"]
    if endpoint.body:
        statuses += ["413", "415"]
    operation: Schema = {
        "operationId": endpoint.operation_id,
        "summary": endpoint.summary,
        "description": tool.description,
        "parameters": params,
        "responses": {
            "200": {
                "description": "Done",
                "content": {"application/json": {"schema": {"type": "object"}}},
            },
            **{s: _error(_ERRORS[s]) for s in sorted(statuses)},
        },
    }
    if endpoint.body:
        operation["requestBody"] = _body(endpoint, settings)
    return operation


OPENAPI = Operation(
    "GET",
    "/api/openapi.json",
    "openapi",
    "This document",
    {"type": "object", "required": ["openapi", "info", "paths"]},
    access=Access.KEY,
)

#: Every route that is no tool's, as the document lists it.
OPERATIONS: tuple[Operation, ...] = (ME, OPENAPI, *ADMIN, HEALTH)


def _parameter(name: str, where: str, schema: Schema, required: bool) -> Schema:
    out: Schema = {"name": name, "in": where, "required": required, "schema": dict(schema)}
    if "description" in schema:
        out["description"] = schema["description"]
    return out


def _described(op: Operation) -> Schema:
    """The document's entry for a route that is no tool's."""
    params = [_parameter(n, "path", s, True) for n, s in op.params.items()]
    params += [_parameter(n, "query", s, n in op.required_query) for n, s in op.query.items()]
    answer = {"application/json": {"schema": op.answer}}
    operation: Schema = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "parameters": params,
        "responses": {
            str(op.status): {"description": "Done", "content": answer},
            **{str(s): _error(meaning) for s, meaning in op.responses.items()},
        },
    }
    description = op.description
    if op.access is Access.ADMIN:
        operation["tags"] = ["admin"]
        operation["security"] = [{"bearer": ["admin"]}]
        description = f"{description} An admin's key only (403 for any other).".strip()
    elif op.access is Access.OPEN:
        operation["security"] = [{}, {"bearer": ["admin"]}]
    if description:
        operation["description"] = description
    if op.body is not None:
        content = {"application/json": {"schema": op.body}}
        operation["requestBody"] = {"required": op.body_required, "content": content}
    elif op.raw_body:
        content = {media: {"schema": schema} for media, schema in op.raw_body.items()}
        operation["requestBody"] = {"required": True, "content": content}
    return operation


def openapi_document(settings: Settings) -> Schema:
    """The OpenAPI 3.1 document of every REST route."""
    paths: Schema = {}
    for endpoint in ENDPOINTS:
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = _operation(
            endpoint, settings
        )
    for op in OPERATIONS:
        paths.setdefault(op.path, {})[op.method.lower()] = _described(op)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "kgmem REST API",
            "version": __version__,
            "description": "Long-term memory for agents. Every route but /health takes an API "
            "key as a Bearer token; the key alone decides whose memory a request reads and "
            "writes. The admin routes (security bearer: [admin]) take an admin's key only.",
        },
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "schemas": {"Error": ERROR},
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


async def _serve(request: Request, given: Given) -> JSONResponse:
    return JSONResponse(openapi_document(request.app.state.services.settings))


def openapi_route() -> Route:
    return Route(OPENAPI.path, checked(OPENAPI, _serve), methods=[OPENAPI.method])
