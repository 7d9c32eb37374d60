"""``kgmem vault``: where each user's vault is, what differs from the stored pages, and the
reconciliation that repairs it (the server does it at every start).

``status`` and ``reconcile`` open the store locally (they refuse while a server holds it);
``path`` reads only the settings.
"""

from __future__ import annotations

import click

from kgmem.cli.common import local_store
from kgmem.config import load_settings
from kgmem.index import StoreReader
from kgmem.pages import Vault, VaultReport
from kgmem.store import QueryRegistry, check_id

__all__ = ["vault"]


def _users(uid: str | None, known: set[str]) -> list[str]:
    return [check_id(uid, "user id")] if uid else sorted(known)


def _show(report: VaultReport) -> None:
    click.echo(f"{report.uid}: {report.root}: {report.summary()}")
    verb = "would " if report.dry_run else ""
    for path in report.written:
        click.echo(f"  {verb}write    {path}")
    for path in report.replaced:
        click.echo(f"  {verb}replace  {path} (a stale copy)")
    for old, new in report.moved:
        click.echo(f"  {verb}move     {old} -> {new}")
    for path in report.removed:
        click.echo(f"  {verb}remove   {path}")
    for path in report.edited:
        click.echo(f"  edited   {path} (read by the sync)")
    for path, reason in report.refused:
        click.echo(f"  refused  {path}: {reason}")


@click.group()
def vault() -> None:
    """Each user's pages as Markdown files (an Obsidian vault): where, status, reconcile."""


@vault.command("path")
@click.option("--user", "uid", metavar="USER", help="The user (default: default_user).")
def path(uid: str | None) -> None:
    """Print the user's vault directory (kgmem manages its Memory/ folder only)."""
    settings = load_settings()
    click.echo(settings.vault_dir(check_id(uid or settings.default_user, "user id")))


def _reconcile(uid: str | None, dry_run: bool) -> None:
    settings = load_settings()
    queries = QueryRegistry.load()
    purpose = "the server reconciles every vault when it starts; run this"
    with local_store(settings, purpose) as store:
        files = Vault(store, queries, settings.vault_dir)
        known = StoreReader(store, queries).users()
        for user in _users(uid, known):
            _show(files.reconcile(user, dry_run=dry_run))


@vault.command("status")
@click.option("--user", "uid", metavar="USER", help="Only this user (default: every user).")
def status(uid: str | None) -> None:
    """Compare each vault with the stored pages; change nothing."""
    _reconcile(uid, dry_run=True)


@vault.command("reconcile")
@click.option("--user", "uid", metavar="USER", help="Only this user (default: every user).")
def reconcile(uid: str | None) -> None:
    """Write missing pages, move misplaced ones back, replace stale copies, remove stale
    duplicates; edited files are left for the sync."""
    _reconcile(uid, dry_run=False)
