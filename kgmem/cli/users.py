"""``kgmem users``: accounts and API keys (add, list, revoke, token), and reset.

They open the store locally, so they refuse while a server holds it: stop the server, or
(later) use the admin API. A new key is printed once; only its hash is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict

import click

from kgmem.api.accounts import Accounts, IssuedKey, Principal, Role
from kgmem.api.services import RESET_STEPS
from kgmem.api.tools.write import ReviewModeArgs, review_mode
from kgmem.cli.common import fail, local_services, local_store
from kgmem.cli.progress import Lane, shown
from kgmem.config import load_settings
from kgmem.errors import KgmemError
from kgmem.memory import WriteMode, user_graphs
from kgmem.store import QueryRegistry, UserGraphs

__all__ = ["users"]


def _show_key(issued: IssuedKey) -> None:
    click.echo(f"user {issued.uid}: new API key {issued.key_id} (shown once; store it now)")
    click.echo(issued.token)


@click.group()
def users() -> None:
    """Accounts and their API keys."""


@users.command("add")
@click.argument("uid", metavar="USER")
@click.option("--admin", is_flag=True, help="May manage the catalogue, shapes and other users.")
@click.option("--name", help="A display name.")
def add(uid: str, admin: bool, name: str | None) -> None:
    """Create USER with a first API key."""
    settings = load_settings()
    with local_store(settings, "add users", create=True) as store:
        try:
            issued = Accounts(store, QueryRegistry.load()).add(
                uid, role=Role.ADMIN if admin else Role.USER, name=name
            )
        except KgmemError as exc:
            fail(str(exc))
    _show_key(issued)


@users.command("token")
@click.argument("uid", metavar="USER")
@click.option("--label", help="What the key is for (shown by list).")
@click.option(
    "--host",
    is_flag=True,
    help="For the application the agent runs in: the chats it hands over (reflect_session) "
    "are first-hand, not agent-reported.",
)
def token(uid: str, label: str | None, host: bool) -> None:
    """Issue another API key for USER."""
    settings = load_settings()
    with local_store(settings, "issue keys") as store:
        try:
            issued = Accounts(store, QueryRegistry.load()).issue(uid, label, host=host)
        except KgmemError as exc:
            fail(str(exc))
    _show_key(issued)


@users.command("revoke")
@click.argument("uid", metavar="USER")
@click.option("--key", "key_id", help="Only this key (default: the account and every key).")
def revoke(uid: str, key_id: str | None) -> None:
    """Revoke USER (every key) or one of its keys."""
    settings = load_settings()
    with local_store(settings, "revoke keys") as store:
        try:
            count = Accounts(store, QueryRegistry.load()).revoke(uid, key_id)
        except KgmemError as exc:
            fail(str(exc))
    what = f"key {key_id}" if key_id else "account"
    click.echo(f"user {uid}: {what} revoked ({count} live keys revoked)")


@users.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_users(as_json: bool) -> None:
    """Every account: role, live keys, when created and revoked."""
    settings = load_settings()
    with local_store(settings, "list users") as store:
        accounts = Accounts(store, QueryRegistry.load())
        found = [(a, accounts.keys(a.uid)) for a in accounts.all()]
    if as_json:
        out = [
            {**asdict(a), "key_ids": [k.key_id for k in keys if k.revoked_at is None]}
            for a, keys in found
        ]
        click.echo(json.dumps({"users": out}, indent=2, default=str))
        return
    if not found:
        click.echo("no users yet (kgmem serve creates the first)")
    for account, keys in found:
        state = f"revoked {account.revoked_at:%Y-%m-%d}" if account.revoked_at else "active"
        live = ", ".join(k.key_id for k in keys if k.revoked_at is None) or "no live keys"
        click.echo(f"{account.uid}\t{account.role.value}\t{state}\t{live}")


@users.command("mode")
@click.argument("uid", metavar="USER")
@click.argument(
    "mode", metavar="[MODE]", required=False, type=click.Choice([m.value for m in WriteMode])
)
def mode(uid: str, mode: str | None) -> None:
    """Show USER's review mode, or set it: autonomous (confident or user-backed agent drafts
    become active) or review (every agent draft waits in the review inbox)."""
    settings = load_settings()
    args = ReviewModeArgs(None if mode is None else WriteMode(mode))
    with local_services(settings, "set the review mode") as services:
        found = review_mode(services, Principal(uid, Role.USER, "cli"), args)  # the tool's own
    changed = " (changed)" if found["changed"] else ""
    click.echo(f"user {uid}: {found['mode']}{changed}")


def _steps(lane: Lane | None) -> Callable[[str], None]:
    """Each step of a reset as it begins: a line, and on a terminal the lane (``1/4``:
    steps finished of all)."""

    def step(name: str) -> None:
        click.echo(f"  {name}")
        if lane is not None:
            lane(name, RESET_STEPS.index(name), len(RESET_STEPS))

    return step


@users.command("reset")
@click.argument("uid", metavar="USER")
@click.option("--yes", is_flag=True, help="Do it (without it, only say what would go).")
def reset(uid: str, yes: bool) -> None:
    """Drop what kgmem derived for USER (memories, entities, pages, decisions, passes); their
    chats, notes, task records, queued drafts, review mode, account and keys stay, and the
    sources are consolidated again. It cannot be undone: `kgmem backup` first. Without
    --yes, only say what would go."""
    settings = load_settings()
    with local_services(settings, "reset a user") as services:
        try:
            sources = services.store.count(UserGraphs(uid).sources)
            graphs = [g for g in user_graphs(services.store, uid) if g != UserGraphs(uid).sources]
            if not yes:
                triples = sum(services.store.count(g) for g in graphs)
                click.echo(f"user {uid}: would drop {len(graphs)} graphs, {triples} triples")
                click.echo(f"their sources stay ({sources} triples) and are consolidated again")
                click.echo("a reset cannot be undone: `kgmem backup` first; then --yes to reset")
                return
            with shown() as display:
                report = services.reset_user(uid, _steps(display.lane(f"reset {uid}")))
        except KgmemError as exc:
            fail(str(exc))
    click.echo(
        f"user {uid}: reset ({len(report.graphs)} graphs, {report.triples} triples dropped; "
        f"{report.sources} sources wait for consolidation again)"
    )
