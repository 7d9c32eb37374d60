"""#22: ``OPTIONS /api/memories/0/pin`` advertised ``GET, HEAD`` (the memory route, whose id
spans segments, claimed the path), and a path two routes share (``GET`` and ``POST
/api/admin/users``) advertised only the first one's methods. ``OPTIONS`` now answers 204 with
the methods the path takes, and any other method it does not take is a 405 in the one error
shape with the same ``Allow``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.api.support import api_server

_METHODS = ("get", "put", "post", "delete", "patch")


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with api_server(tmp_path_factory, "options") as running, running.client("olga") as c:
        yield c


def _allow(answer: httpx.Response) -> set[str]:
    return {m.strip() for m in answer.headers.get("allow", "").split(",") if m.strip()}


def _documented(client: httpx.Client) -> dict[str, set[str]]:
    """Each documented path (with a memory id filled in) and the methods it takes."""
    answer = client.get("/api/openapi.json")
    assert answer.status_code == 200, answer.text
    paths: dict[str, dict[str, Any]] = answer.json()["paths"]
    out = {}
    for path, operations in paths.items():
        url = path.replace("{id}", "0").replace("{verdict}", "approve")
        methods = {m.upper() for m in operations if m in _METHODS}
        out[url] = methods | {"OPTIONS"} | ({"HEAD"} if "GET" in methods else set())
    return out


def test_options_on_a_post_only_route_says_post(client: httpx.Client) -> None:
    for path in ("/api/memories/0/pin", "/api/memories/batch-draft", "/api/remember"):
        answer = client.options(path)
        assert answer.status_code == 204, (path, answer.text)
        assert _allow(answer) == {"OPTIONS", "POST"}, path


def test_every_documented_path_says_its_methods(client: httpx.Client) -> None:
    for url, methods in _documented(client).items():
        assert _allow(client.options(url)) == methods, url
        wrong = next(m for m in ("PUT", "PATCH", "DELETE") if m not in methods)
        refused = client.request(wrong, url)
        assert refused.status_code == 405, (wrong, url, refused.text)
        assert _allow(refused) == methods, (wrong, url)
        assert refused.json()["error"]["code"] == "method_not_allowed"


def test_a_path_two_routes_share_says_both(client: httpx.Client) -> None:
    assert {"GET", "POST"} <= _allow(client.options("/api/admin/users"))
    assert client.get("/api/memories/0/pin").status_code == 405
