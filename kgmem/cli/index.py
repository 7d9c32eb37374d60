"""``kgmem index``: rebuild the graph projection from the store, check it against the store, or
distil the static embedding model search can use.

Both open the store and the projection locally, so both refuse while a server holds them.
The projection lives in ``$KGMEM_HOME/index/kuzu``.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import click

from kgmem.cli.common import fail, local_store
from kgmem.cli.progress import shown
from kgmem.config import Settings, load_settings
from kgmem.errors import StoreLocked
from kgmem.index import TABLES, ChangeFeed, Fingerprint, KuzuProjection, StoreReader
from kgmem.index.dense import EmbedderUnavailable, distill_static
from kgmem.index.lexical.saved import ShardFiles
from kgmem.store import QueryRegistry, check_id

__all__ = ["index", "index_dir"]


def index_dir(settings: Settings) -> Path:
    """Where the graph projection lives."""
    return settings.home / "index" / "kuzu"


def _counts(fingerprint: Fingerprint) -> str:
    counts = fingerprint.counts
    return ", ".join(f"{table} {counts.get(table, 0)}" for table in TABLES)


class _Opened(NamedTuple):
    projection: KuzuProjection
    users: list[str]
    feed: ChangeFeed  # drains the outbox into the projection (not attached: writes nothing)


@contextmanager
def _projection(settings: Settings, purpose: str) -> Iterator[_Opened]:
    """The projection over the local store, and every user either of them knows."""
    queries = QueryRegistry.load()
    with local_store(settings, purpose) as store:
        try:
            projection = KuzuProjection(
                index_dir(settings),
                store,
                queries,
                buffer_megabytes=settings.graph_buffer_megabytes,
            )
        except StoreLocked as exc:
            fail(str(exc))
        with projection:
            opened = projection.opened
            if opened.recovered:
                click.echo(
                    f"index: {opened.path} was unusable ({opened.reason}); moved to "
                    f"{opened.moved_to or '(deleted)'}; rebuilt {len(opened.rebuilt)} users",
                    err=True,
                )
            users = sorted(StoreReader(store, queries).users() | set(projection.users()))
            yield _Opened(projection, users, ChangeFeed(store, queries, [projection]))


def _users(uid: str | None, known: list[str]) -> list[str]:
    return [check_id(uid, "user id")] if uid else known


@click.group()
def index() -> None:
    """The graph projection (Kùzu) of the store: rebuild or check it; the embedding model."""


@index.command("rebuild")
@click.option("--user", "uid", metavar="USER", help="Only this user (default: every user).")
def rebuild(uid: str | None) -> None:
    """Drop the projection's rows and load them again from the store; the saved search
    index of each user is deleted too (the next start rebuilds it from the store)."""
    settings = load_settings()
    with _projection(settings, "rebuild the index") as (projection, known, _):
        users = _users(uid, known)
        saved = ShardFiles(settings.search_dir)
        began = time.perf_counter()
        with shown() as display:
            everyone, tables = display.lane("users"), display.lane("tables")
            for done, user in enumerate(users):
                if everyone is not None:
                    everyone(user, done, len(users))
                started = time.perf_counter()
                fingerprint = projection.rebuild(user, tables)
                saved.drop(user)
                took = time.perf_counter() - started
                if everyone is not None:
                    everyone(user, done + 1, len(users))
                click.echo(f"{user}: {_counts(fingerprint)} ({took:.2f} s)")
            if users:
                display.summary = _rebuilt(len(users), time.perf_counter() - began)
        if not users:
            click.echo("no users in the store: nothing to rebuild")


def _rebuilt(users: int, seconds: float) -> str:
    return f"rebuilt the index of {users} user{'s' if users != 1 else ''} in {seconds:.1f} s"


@index.command("distill")
@click.option("--out", type=click.Path(path_type=Path), help="Default: the embedding_model dir.")
@click.option("--pca-dims", default=256, show_default=True, help="Dimensions of the vectors.")
def distill(out: Path | None, pca_dims: int) -> None:
    """Make the static embedding model search uses (once; needs torch and kgmem[distill])."""
    settings = load_settings()
    target = out or settings.embedding_dir
    started = time.perf_counter()
    try:
        distill_static(target, pca_dims)
    except EmbedderUnavailable as exc:
        fail(str(exc))
    took = time.perf_counter() - started
    click.echo(f"static model written to {target} ({took:.1f} s); install kgmem[embeddings]")


@index.command("check")
@click.option("--user", "uid", metavar="USER", help="Only this user (default: every user).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def check(uid: str | None, as_json: bool) -> None:
    """Compare the projection with the store; exit 1 on any difference, or on a value the
    store holds that kgmem cannot read (nothing is repaired). Changes a stopped process left
    in the outbox are applied first, as any start applies them: they are not drift."""
    settings = load_settings()
    if not index_dir(settings).exists():
        fail(f"no graph projection at {index_dir(settings)} yet: run `kgmem index rebuild`", 1)
    report: dict[str, Any] = {}
    with _projection(settings, "check the index") as (projection, known, feed):
        applied = _apply_outbox(feed)
        for user in _users(uid, known):
            found, expected = projection.fingerprint(user), projection.store_fingerprint(user)
            report[user] = {
                "matches": found == expected,
                "drift": list(found.drift(expected)),
                "projection": found.counts,
                "store": expected.counts,
                "applied": applied.get(user, 0),
                "unreadable": [dataclasses.asdict(u) for u in projection.unreadable(user)],
            }
    if as_json:
        click.echo(json.dumps({"users": report}, indent=2))
    else:
        _show(report)
    if not all(entry["matches"] and not entry["unreadable"] for entry in report.values()):
        raise SystemExit(1)


def _apply_outbox(feed: ChangeFeed) -> dict[str, int]:
    """Drain what a stopped or crashed process left in the outbox into the projection;
    entries applied per user."""
    reports = feed.drain_all()
    for failed in (r for r in reports if not r.ok):
        click.echo(f"{failed.uid}: the outbox could not be applied ({failed.failed})", err=True)
    return {r.uid: r.drained for r in reports if r.drained}


def _show(report: dict[str, Any]) -> None:
    if not report:
        click.echo("no users in the store or the projection")
    for user, entry in report.items():
        if entry["applied"]:
            click.echo(f"{user}: applied {entry['applied']} changes waiting in the outbox first")
        if entry["matches"]:
            counts = ", ".join(f"{t} {entry['store'][t]}" for t in TABLES)
            click.echo(f"{user}: projection matches the store ({counts})")
        else:
            click.echo(f"{user}: projection DIFFERS from the store in {', '.join(entry['drift'])}")
            click.echo(f"  {'table':<14}{'projection':>12}{'store':>8}")
            for table in entry["drift"]:
                click.echo(
                    f"  {table:<14}{entry['projection'][table]:>12}{entry['store'][table]:>8}"
                )
        for bad in entry["unreadable"]:
            what = "record" if bad["property"] == "*" else f"{bad['property']} {bad['value']!r}"
            click.echo(f"{user}: UNREADABLE {bad['node']}: {what} ({bad['reason']})")
