"""``/api/openapi.json`` describes every REST route the app serves, its parameters, its
access and the one error shape; every route it lists answers. What the server does with
generated input, valid and not, is ``tests/hostile``'s."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.routing import BaseRoute, Mount, Route

from kgmem.api.browser import is_browser_path
from kgmem.api.rest.table import ENDPOINTS
from tests.api.support import ApiServer, api_server

# the other surfaces, each with a schema of its own (GraphQL's SDL, SPARQL, MCP's tool list)
OTHER_SURFACES = frozenset({"/graphql", "/sparql", "/mcp"})
ERROR = {"$ref": "#/components/schemas/Error"}


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    with api_server(tmp_path_factory, "rest-schema") as running:
        yield running


@pytest.fixture(scope="module")
def auth(rest: ApiServer) -> dict[str, str]:
    with rest.client("reader") as client:
        return dict(client.headers)


@pytest.fixture(scope="module")
def admin(rest: ApiServer) -> dict[str, str]:
    with rest.client(rest.app.state.services.settings.default_user) as client:
        return dict(client.headers)


@pytest.fixture(scope="module")
def document(rest: ApiServer, auth: dict[str, str]) -> dict[str, Any]:
    answer = httpx.get(f"{rest.base}/api/openapi.json", headers=auth, timeout=10)
    assert answer.status_code == 200
    doc: dict[str, Any] = answer.json()
    return doc


def served(routes: list[BaseRoute], prefix: str = "") -> Iterator[tuple[str, str]]:
    """Every (method, path) the app's router serves (mounts walked; HEAD, which Starlette
    adds to every GET, left out), paths as OpenAPI writes them (``{id:path}`` is ``{id}``),
    but for the other surfaces and the browser's static files."""
    for route in routes:
        if isinstance(route, Mount):
            yield from served(route.routes, prefix + route.path)
            continue
        assert isinstance(route, Route), f"a route of a kind this test cannot read: {route!r}"
        path = re.sub(r"\{(\w+):\w+\}", r"{\1}", prefix + route.path)
        if path in OTHER_SURFACES or is_browser_path(path, "GET"):
            continue
        methods = set(route.methods or ())
        if "GET" in methods:
            methods.discard("HEAD")
        for method in sorted(methods):
            yield method, path


def documented(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            yield method.upper(), path, operation


def test_the_document_lists_every_route_the_app_serves(
    rest: ApiServer, document: dict[str, Any]
) -> None:
    routes = set(served(rest.app.routes))
    listed = {(method, path) for method, path, _ in documented(document)}
    assert {("GET", "/api/me"), ("GET", "/health"), ("POST", "/api/admin/users")} <= routes
    assert sorted(routes - listed) == [], "served but not in /api/openapi.json"
    assert sorted(listed - routes) == [], "in /api/openapi.json but not served"
    assert len({op["operationId"] for _, _, op in documented(document)}) == len(listed)


def _path(path: str, operation: dict[str, Any]) -> str:
    """``path`` with each parameter filled: an enum's first value, else a name no user,
    memory, ontology or shapes file has."""
    for param in operation["parameters"]:
        if param["in"] == "path":
            value = param["schema"].get("enum", ["nothing-here"])[0]
            path = path.replace("{" + param["name"] + "}", value)
    return path


def test_every_documented_route_answers_as_documented(
    rest: ApiServer, document: dict[str, Any], admin: dict[str, str]
) -> None:
    """Called with an admin's key (and no body or query: nothing is changed), each answers
    one of its documented statuses, and none is routing's 404 or 405."""
    for method, path, operation in documented(document):
        url = f"{rest.base}{_path(path, operation)}"
        answer = httpx.request(method, url, headers=admin, timeout=30)
        shown = f"{method} {path}: {answer.status_code} {answer.text[:300]}"
        assert answer.status_code != 405, shown
        if answer.status_code == 404:
            assert not answer.json()["error"]["message"].startswith("no route"), shown
        assert str(answer.status_code) in operation["responses"], shown


def test_every_operation_says_who_may_call_it(
    rest: ApiServer, document: dict[str, Any], auth: dict[str, str]
) -> None:
    """Bearer everywhere; /health open; the admin routes say they need the admin role, and
    a plain user's key gets their 403."""
    assert document["security"] == [{"bearer": []}]
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    admin_only = set()
    for method, path, operation in documented(document):
        security = operation.get("security", document["security"])
        url = f"{rest.base}{_path(path, operation)}"
        if path == "/health":
            assert {} in security
            assert httpx.get(url, timeout=10).status_code == 200
            continue
        assert {} not in security and "401" in operation["responses"], path
        assert httpx.request(method, url, timeout=10).status_code == 401, (method, path)
        if path.startswith("/api/admin/"):
            admin_only.add((method, path))
            assert security == [{"bearer": ["admin"]}] and "403" in operation["responses"]
            refused = httpx.request(method, url, headers=auth, timeout=10)
            assert refused.status_code == 403, (method, path, refused.text)
        else:
            assert security == [{"bearer": []}], path
    assert len(admin_only) >= 11


def test_every_error_is_the_one_shape(document: dict[str, Any]) -> None:
    assert document["openapi"].startswith("3.1")
    assert document["components"]["schemas"]["Error"]["required"] == ["error"]
    for method, path, operation in documented(document):
        statuses = [s for s in operation["responses"] if s >= "400"]
        assert "422" in statuses or path == "/health", (method, path)
        for status in statuses:
            content = operation["responses"][status]["content"]["application/json"]
            assert content["schema"] == ERROR, (method, path, status)


def test_tool_routes_show_their_bodies_and_parameters(document: dict[str, Any]) -> None:
    for endpoint in ENDPOINTS:
        operation = document["paths"][endpoint.path][endpoint.method.lower()]
        assert ("requestBody" in operation) == endpoint.body
    search = document["paths"]["/api/search"]["get"]["parameters"]
    assert {p["name"] for p in search} >= {"q", "kind", "k"}


def test_admin_routes_show_the_bodies_and_parameters_they_check(
    rest: ApiServer, document: dict[str, Any], admin: dict[str, str]
) -> None:
    """What a body or parameter may hold is what the route takes: a field the schema lacks,
    or a value it refuses, is refused with a 422 naming the field (a JSON null body is no
    object, on any route)."""
    paths = document["paths"]
    add = paths["/api/admin/users"]["post"]["requestBody"]["content"]["application/json"]
    assert add["schema"]["required"] == ["user"]
    assert set(add["schema"]["properties"]) == {"user", "role", "name"}
    assert add["schema"]["additionalProperties"] is False
    reset = paths["/api/admin/users/{user}/reset"]["post"]
    assert reset["requestBody"]["required"] is True
    assert [p["name"] for p in reset["parameters"]] == ["user"]
    put = paths["/api/admin/ontologies/{ontology}"]["put"]
    assert {p["name"]: p["required"] for p in put["parameters"] if p["in"] == "query"} == {
        "format": True,
        "title": False,
    }
    assert "text/turtle" in paths["/api/admin/shapes/{name}"]["put"]["requestBody"]["content"]
    base = f"{rest.base}/api/admin"
    null = {"content": b"null", "headers": {**admin, "Content-Type": "application/json"}}
    cases: list[tuple[str, str, dict[str, Any], str | None]] = [
        ("POST", f"{base}/users", {"json": {"user": "x", "colour": "red"}}, "colour"),
        ("POST", f"{base}/users", {"json": {"user": "bad:id"}}, "user"),
        ("POST", f"{base}/users/bad:id/keys", {}, "user"),
        ("POST", f"{base}/users/nobody/revoke", {"json": {"key_id": 1}}, "key_id"),
        ("PUT", f"{base}/ontologies/pets", {"params": {"format": "docx"}}, "format"),
        ("PUT", f"{base}/ontologies/Pets", {"params": {"format": "turtle"}}, "ontology"),
        ("GET", f"{base}/users", {"params": {"user": "alice"}}, "user"),
        ("DELETE", f"{base}/shapes/.hidden", {}, "name"),
        ("POST", f"{base}/users/nobody/keys", null, None),
        ("POST", f"{rest.base}/api/memories/x/pin", null, None),
    ]
    for method, url, kwargs, field in cases:
        answer = httpx.request(method, url, **{"headers": admin, "timeout": 10, **kwargs})
        assert answer.status_code == 422, (method, url, answer.text)
        assert answer.json()["error"]["field"] == field, (method, url, answer.text)
