"""Accounts over HTTP for admins: list, add, another key, revoke; 403 for everyone else."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette

from kgmem.api.auth import key_file
from kgmem.config import Settings


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_an_admin_manages_accounts_and_their_keys(
    app: Starlette, base: str, settings: Settings
) -> None:
    admin = bearer(key_file(settings).read_text().strip())
    users = f"{base}/api/admin/users"
    made = httpx.post(users, json={"user": "alice", "name": "Alice"}, headers=admin, timeout=10)
    assert made.status_code == 201, made.text
    alice = made.json()["token"]
    assert httpx.get(f"{base}/api/me", headers=bearer(alice), timeout=10).json()["user"] == "alice"
    listed = httpx.get(users, headers=admin, timeout=10).json()["users"]
    assert {u["uid"]: (u["role"], u["keys"]) for u in listed} == {
        settings.default_user: ("admin", 1),
        "alice": ("user", 1),
    }
    second = httpx.post(f"{users}/alice/keys", json={"label": "ci"}, headers=admin, timeout=10)
    assert second.status_code == 201
    revoked = httpx.post(
        f"{users}/alice/revoke", json={"key_id": made.json()["key_id"]}, headers=admin, timeout=10
    )
    assert revoked.json()["revoked_keys"] == 1
    assert httpx.get(f"{base}/api/me", headers=bearer(alice), timeout=10).status_code == 401
    token = second.json()["token"]
    assert httpx.get(f"{base}/api/me", headers=bearer(token), timeout=10).status_code == 200
    assert httpx.post(f"{users}/alice/revoke", headers=admin, timeout=10).json()["revoked_keys"]
    assert httpx.get(f"{base}/api/me", headers=bearer(token), timeout=10).status_code == 401


def test_only_admins_and_only_well_formed_requests(
    app: Starlette, base: str, settings: Settings
) -> None:
    admin = bearer(key_file(settings).read_text().strip())
    plain = bearer(app.state.accounts.add("bob").token)
    users = f"{base}/api/admin/users"
    for call in (
        lambda h: httpx.get(users, headers=h, timeout=10),
        lambda h: httpx.post(users, json={"user": "mallory"}, headers=h, timeout=10),
        lambda h: httpx.post(f"{users}/bob/keys", json={}, headers=h, timeout=10),
        lambda h: httpx.post(f"{users}/bob/revoke", json={}, headers=h, timeout=10),
    ):
        refused = call(plain)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert [a.uid for a in app.state.accounts.all()] == ["bob", settings.default_user]
    for body, field in (
        ({}, "user"),
        ({"user": "carol", "colour": "red"}, "colour"),
        ({"user": "carol", "role": "root"}, "role"),
        ({"user": "bad:id"}, "user"),
        ({"user": "carol\n"}, "user"),
        ({"user": "carol", "name": None}, "name"),
    ):
        answer = httpx.post(users, json=body, headers=admin, timeout=10)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["error"]["field"] == field
    again = httpx.post(users, json={"user": "bob"}, headers=admin, timeout=10)
    assert again.status_code == 409
    missing = httpx.post(f"{users}/nobody/keys", json={}, headers=admin, timeout=10)
    assert missing.status_code == 404
    broken = httpx.post(users, content=b"{", headers={**admin, "Content-Type": "application/json"})
    assert broken.status_code == 400
    assert [a.uid for a in app.state.accounts.all()] == ["bob", settings.default_user]


TURTLE = b"""@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<https://example.org/pets#Dog> a owl:Class ; rdfs:label "dog"@en .
<https://example.org/pets#Cat> a owl:Class ; rdfs:label "cat"@en .
"""


def test_an_admin_adds_lists_and_removes_catalogue_ontologies(
    app: Starlette, base: str, settings: Settings
) -> None:
    admin = bearer(key_file(settings).read_text().strip())
    plain = bearer(app.state.accounts.add("bob").token)
    url = f"{base}/api/admin/ontologies"
    put = httpx.put(f"{url}/pets", params={"format": "turtle"}, content=TURTLE, headers=admin)
    assert put.status_code == 201 and put.json() == {"ontology": "pets", "triples": 4}
    listed = {o["ontology_id"] for o in httpx.get(url, headers=admin).json()["ontologies"]}
    assert {"pets", "kgmem"} <= listed
    sparql = httpx.get(
        f"{base}/sparql",
        params={"query": "ASK { <https://example.org/pets#Dog> a owl:Class }"},
        headers={**plain, "Accept": "application/sparql-results+json"},
    )
    assert sparql.json()["boolean"] is True  # the catalogue is everyone's
    for refused in (
        httpx.put(f"{url}/pets2", params={"format": "turtle"}, content=TURTLE, headers=plain),
        httpx.delete(f"{url}/pets", headers=plain),
        httpx.get(url, headers=plain),
    ):
        assert refused.status_code == 403
    bad = httpx.put(f"{url}/pets3", params={"format": "turtle"}, content=b"<x", headers=admin)
    assert bad.status_code == 422
    nofmt = httpx.put(f"{url}/pets3", content=TURTLE, headers=admin)
    assert nofmt.status_code == 422 and nofmt.json()["error"]["field"] == "format"
    assert httpx.delete(f"{url}/kgmem", headers=admin).status_code == 409  # protected
    assert httpx.delete(f"{url}/pets", headers=admin).status_code == 200
    assert httpx.delete(f"{url}/pets", headers=admin).status_code == 404
    listed = {o["ontology_id"] for o in httpx.get(url, headers=admin).json()["ontologies"]}
    assert "pets" not in listed and "pets3" not in listed
