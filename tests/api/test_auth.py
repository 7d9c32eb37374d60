"""API keys: the first account, Bearer authentication on a real server, revocation, the CLI."""

from __future__ import annotations

import os
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
from tests.helpers import kgmem_serve
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
    # the hint works whether or not a server holds the store (#28: `kgmem users token`
    # alone cannot run while one does)
    with pytest.raises(AccountError, match="already exists") as refused:
        accounts.add("alice")
    assert "`kgmem users token alice`" in str(refused.value)
    assert "POST /api/admin/users/alice/keys" in str(refused.value)
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


def _accounts_before_the_first_start(settings: Settings, *accounts: tuple[str, Role]) -> None:
    store = OxigraphStore(settings.store_dir)
    try:
        made = Accounts(store, QueryRegistry.load())
        for uid, role in accounts:
            made.add(uid, role=role)
    finally:
        store.close()


@pytest.mark.parametrize(
    "accounts",
    [(("bob", Role.ADMIN),), (("me", Role.USER), ("bob", Role.USER))],
    ids=["an admin made by hand", "the default user made by hand"],
)
def test_a_start_leaves_accounts_made_by_hand_alone(
    settings: Settings, accounts: tuple[tuple[str, Role], ...]
) -> None:
    """Admins made before the first start get no default admin beside them; a default user
    made by hand as a plain user is not made an admin. Neither gets an api-key file."""
    _accounts_before_the_first_start(settings, *accounts)
    app = create_app(settings)
    try:
        found = {(a.uid, a.role, a.keys) for a in app.state.accounts.all()}
        assert found == {(uid, role, 1) for uid, role in accounts}
        assert app.state.default_key is None and not key_file(settings).exists()
    finally:
        app.state.services.close()


def _me(url: str, token: str) -> tuple[str, str] | int:
    """Who ``token`` acts as (user, role), or the status code that refused it."""
    answer = httpx.get(f"{url}/api/me", headers=bearer(token), timeout=5)
    if not answer.is_success:
        return answer.status_code
    return answer.json()["user"], answer.json()["role"]


@pytest.mark.integration
def test_users_added_before_the_first_start_still_get_the_default_admin(home: Path) -> None:
    """#28: `kgmem users add alice` on a new home, then `kgmem serve`: the start made the
    default admin only when the store had no account at all, so there was no admin and no
    api-key file for the README's first curl."""
    added = kgmem(home, "users", "add", "alice")
    assert added.returncode == 0, added.stderr
    alice, path = added.stdout.splitlines()[-1], home / "api-key"
    env = {**os.environ, "KGMEM_HOME": str(home)}
    with kgmem_serve(env, home.parent / "serve.log") as served:
        token = path.read_text().strip()
        assert _me(served.url, token) == ("me", "admin")
        assert _me(served.url, alice) == ("alice", "user")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    said = "\n".join(served.output())
    assert f"new API key {token.split('_')[1]} of admin me, in {path}" in said


def test_a_lost_key_file_gets_a_new_key_and_a_kept_one_none(settings: Settings) -> None:
    """Every start checks the file: while its key works nothing is made; once it is gone the
    default admin gets a new key (the old one stays live: a copy may be in use)."""
    path = key_file(settings)
    create_app(settings).state.services.close()
    token = path.read_text().strip()
    again = create_app(settings)
    try:
        assert again.state.default_key is None and path.read_text().strip() == token
    finally:
        again.state.services.close()
    path.unlink()
    lost = create_app(settings)
    try:
        accounts: Accounts = lost.state.accounts
        renewed = path.read_text().strip()
        assert lost.state.default_key.token == renewed != token
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        for key in (renewed, token):
            assert accounts.authenticate(key).uid == settings.default_user
            assert accounts.authenticate(key).admin
        assert [(a.uid, a.keys) for a in accounts.all()] == [(settings.default_user, 2)]
    finally:
        lost.state.services.close()


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
