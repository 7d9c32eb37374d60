"""Helpers every subcommand shares."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import click

from kgmem.config import Settings
from kgmem.errors import StoreLocked
from kgmem.store import OxigraphStore

if TYPE_CHECKING:
    from kgmem.api.services import Services

__all__ = ["fail", "local_services", "local_store", "running_server"]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error and exit non-zero."""
    click.echo(f"kgmem: error: {message}", err=True)
    sys.exit(code)


def running_server(settings: Settings) -> dict[str, Any] | None:
    try:
        info: dict[str, Any] = json.loads(settings.server_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info


@contextmanager
def local_store(
    settings: Settings, purpose: str, *, create: bool = False, instead: str | None = None
) -> Iterator[OxigraphStore]:
    """Open the store when no server holds it; a one-line error when one does.

    ``purpose`` completes the sentence "... held by a running kgmem server; {purpose}
    through the server, or stop it first"; ``instead`` replaces what follows the semicolon.
    """
    if not create and not settings.store_dir.exists():
        fail(f"no store at {settings.store_dir} yet: run `kgmem serve` once to create it")
    if create:
        settings.store_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        store = OxigraphStore(settings.store_dir)
    except StoreLocked:
        server = running_server(settings)
        where = f" (the server at {server['url']}, pid {server['pid']})" if server else ""
        fail(
            f"the store at {settings.store_dir} is held by a running kgmem server{where}; "
            + (instead or f"{purpose} through the server, or stop it first")
        )
    try:
        yield store
    finally:
        store.close()


@contextmanager
def local_services(
    settings: Settings, purpose: str, *, create: bool = False, instead: str | None = None
) -> Iterator[Services]:
    """The services the server builds (gate, lifecycle, sources...) over the local store.

    Opens the store as :func:`local_store` does (same one-line errors), then wires it with
    :func:`kgmem.api.services.build_services`, so the CLI and the server decide alike.
    """
    from kgmem.api.services import build_services  # only the commands that write need it

    with local_store(settings, purpose, create=create, instead=instead) as store:
        services = build_services(settings, store=store)
        try:
            yield services
        finally:
            services.close()  # the feed and the projection; local_store closes the store
