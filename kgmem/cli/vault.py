"""``kgmem vault``: where each user's vault is, what differs from the stored pages, and the
reconciliation that repairs it (the server does it at every start).

``status`` and ``reconcile`` open the store locally (they refuse while a server holds it);
``path`` reads only the settings.
"""

from __future__ import annotations

import click
from rdflib import URIRef

from kgmem.cli.common import fail, local_services, local_store
from kgmem.config import load_settings
from kgmem.index import StoreReader
from kgmem.pages import Vault, VaultReport
from kgmem.store import QueryRegistry, UserGraphs, check_id
from kgmem.vocab import KGM, RDF

__all__ = ["vault"]

_RENDER_BATCH = 200  # entities a commit


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
    """Each user's pages as Markdown files (an Obsidian vault): where, status, reconcile,
    render."""


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


@vault.command("render")
@click.option("--user", "uid", metavar="USER", help="Only this user (default: every user).")
def render(uid: str | None) -> None:
    """Write the page of every entity now (pages otherwise appear as changes touch their
    entities: a store written before pages were on, or a new page format, gets them all)."""
    settings = load_settings()
    if settings.vault != "on":
        fail("the vault is off (vault = off): set KGMEM_VAULT=on to write pages")
    purpose = "pages follow every change while the server runs; run this"
    with local_services(settings, purpose) as services:
        for user in _users(uid, StoreReader(services.store, services.queries).users()):
            typed = services.store.quads(UserGraphs(user).kg, None, RDF.type, KGM.Entity)
            entities = sorted(q.subject for q in typed if isinstance(q.subject, URIRef))
            written = 0
            for start in range(0, len(entities), _RENDER_BATCH):
                chunk = entities[start : start + _RENDER_BATCH]
                written += len(services.pages.write(user, chunk).written)
            services.settle()  # the files follow the pages
            click.echo(f"{user}: {len(entities)} entities, {written} pages written")
