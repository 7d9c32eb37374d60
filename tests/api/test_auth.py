"""API keys: the first account, Bearer authentication on a real server, revocation, the CLI."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from kgmem.api import create_app
from kgmem.api.accounts import Accounts, Role
from kgmem.api.auth import key_file
from kgmem.config import Settings
from kgmem.errors import AccountError, Unauthenticated
from kgmem.store import ACCOUNTS_GRAPH, GraphKind, OxigraphStore, QueryRegistry, parse_graph
from tests.test_cli import kgmem


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_the_first_start_makes_an_admin_and_keeps_its_key_private(
    app: Starlette, settings: Settings, base: str
) -> None:
    path = key_file(settings)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = path.read_text().strip()
    answer = httpx.get(f"{base}/api/me", headers=bearer(token), timeout=5)
    assert answer.status_code == 200
    assert answer.json()["user"] == settings.default_user and answer.json()["role"] == "admin"
    accounts: Accounts = app.state.accounts
    assert [a.uid for a in accounts.all()] == [settings.default_user]
    secret = token.rsplit("_", 1)[1]
    stored = " ".join(str(q.object) for q in app.state.services.store.quads(ACCOUNTS_GRAPH))
    assert "secretHash" in " ".join(
        str(q.predicate) for q in app.state.services.store.quads(ACCOUNTS_GRAPH)
    )
    assert secret not in stored  # only the hash is stored


def test_requests_without_an_accepted_key_get_401_in_the_error_shape(
    app: Starlette, base: str
) -> None:
    issued = app.state.accounts.add("alice")
    unknown = f"kgm_{'0' * 12}_{issued.token.rsplit('_', 1)[1]}"
    wrong_secret = issued.token[:-4] + ("AAAA" if not issued.token.endswith("AAAA") else "BBBB")
    for headers in (
        {},
        {"Authorization": "Basic YWxpY2U6cHc="},
        {"Authorization": "Bearer"},
        bearer("not-a-key"),
        bearer(unknown),
        bearer(wrong_secret),
    ):
        answer = httpx.get(f"{base}/api/me", headers=headers, timeout=5)
        assert answer.status_code == 401, headers
        error = answer.json()["error"]
        assert error["code"] == "unauthenticated" and error["field"] == "Authorization"
        assert error["message"]
        assert answer.headers["www-authenticate"].startswith("Bearer")
    assert httpx.get(f"{base}/health", timeout=5).status_code == 200  # open


def test_a_key_acts_only_as_its_own_user(app: Starlette, base: str) -> None:
    accounts: Accounts = app.state.accounts
    alice, bob = accounts.add("alice"), accounts.add("bob")
    for token, uid in ((alice.token, "alice"), (bob.token, "bob")):
        answer = httpx.get(
            f"{base}/api/me",
            headers={**bearer(token), "X-User": "carol", "X-Kgmem-User": "carol"},
            timeout=5,
        )
        assert answer.json() == {"user": uid, "role": "user", "key_id": answer.json()["key_id"]}
        named = httpx.get(
            f"{base}/api/me", params={"user": "carol"}, headers=bearer(token), timeout=5
        )  # a user in the query is no parameter of any route's
        assert named.status_code == 422 and named.json()["error"]["field"] == "user"


def test_revoking_a_key_or_an_account_stops_it_at_once(app: Starlette, base: str) -> None:
    accounts: Accounts = app.state.accounts
    first = accounts.add("alice")
    second = accounts.issue("alice", "laptop")
    assert httpx.get(f"{base}/api/me", headers=bearer(first.token), timeout=5).status_code == 200
    assert accounts.revoke("alice", first.key_id) == 1
    assert httpx.get(f"{base}/api/me", headers=bearer(first.token), timeout=5).status_code == 401
    assert httpx.get(f"{base}/api/me", headers=bearer(second.token), timeout=5).status_code == 200
    assert accounts.revoke("alice") == 1
    assert httpx.get(f"{base}/api/me", headers=bearer(second.token), timeout=5).status_code == 401
    with pytest.raises(AccountError, match="is revoked"):
        accounts.issue("alice")
    assert accounts.get("alice").revoked_at is not None


def test_the_registry_refuses_duplicates_unknowns_and_malformed_ids(
    store: OxigraphStore, queries: QueryRegistry
) -> None:
    accounts = Accounts(store, queries)
    accounts.add("alice", role=Role.ADMIN, name="Alice")
    with pytest.raises(AccountError, match="already exists"):
        accounts.add("alice")
    with pytest.raises(AccountError, match="no such account"):
        accounts.issue("nobody")
    with pytest.raises(AccountError, match="has no key"):
        accounts.revoke("alice", "ffffffffffff")
    with pytest.raises(Exception, match="user id"):
        accounts.add("alice:kg")
    with pytest.raises(Unauthenticated):
        accounts.authenticate("kgm_short_x")
    assert parse_graph(str(ACCOUNTS_GRAPH)).kind is GraphKind.ACCOUNTS
    [alice] = accounts.all()
    assert (alice.role, alice.name, alice.keys) == (Role.ADMIN, "Alice", 1)


def test_a_second_start_keeps_the_first_account(settings: Settings) -> None:
    create_app(settings).state.services.close()
    token = key_file(settings).read_text()
    again = create_app(settings)
    try:
        assert [a.uid for a in again.state.accounts.all()] == [settings.default_user]
        assert key_file(settings).read_text() == token
    finally:
        again.state.services.close()


@pytest.mark.integration
def test_the_users_commands(home: Path) -> None:
    added = kgmem(home, "users", "add", "alice", "--name", "Alice")
    assert added.returncode == 0, added.stderr
    token = added.stdout.splitlines()[-1]
    assert token.startswith("kgm_")
    again = kgmem(home, "users", "add", "alice")
    assert again.returncode == 2 and "already exists" in again.stderr
    issued = kgmem(home, "users", "token", "alice", "--label", "ci")
    key_id = issued.stdout.split("new API key ")[1].split()[0]
    listed = kgmem(home, "users", "list")
    assert listed.returncode == 0 and "alice\tuser\tactive" in listed.stdout
    assert key_id in listed.stdout
    revoked = kgmem(home, "users", "revoke", "alice", "--key", key_id)
    assert revoked.returncode == 0 and "1 live keys revoked" in revoked.stdout
    assert key_id not in kgmem(home, "users", "list").stdout
    assert kgmem(home, "users", "revoke", "alice").returncode == 0
    assert "revoked" in kgmem(home, "users", "list").stdout
    store = OxigraphStore(home / "store")
    try:
        accounts = Accounts(store, QueryRegistry.load())
        with pytest.raises(Unauthenticated):
            accounts.authenticate(token)
    finally:
        store.close()
