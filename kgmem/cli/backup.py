"""``kgmem backup [DIR]``: a consistent copy of the store (a RocksDB checkpoint: hard links
where the disk allows), by default under ``$KGMEM_HOME/backups/``. While a server runs, ask
it instead (``POST /api/admin/backup``). To go back to a backup: stop the server and put the
directory in place of ``$KGMEM_HOME/store``."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from kgmem.cli.common import fail, local_store
from kgmem.config import load_settings
from kgmem.errors import KgmemError

__all__ = ["backup"]


@click.command()
@click.argument("target", metavar="[DIR]", required=False, type=click.Path(path_type=Path))
def backup(target: Path | None) -> None:
    """Copy the store to DIR (a new directory; default $KGMEM_HOME/backups/<time>)."""
    settings = load_settings()
    at = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = target or settings.home / "backups" / at
    if target.exists():
        fail(f"{target} exists: a backup goes to a new directory")
    target.parent.mkdir(parents=True, exist_ok=True)
    with local_store(settings, "back it up (POST /api/admin/backup)") as store:
        try:
            store.snapshot(target)
        except KgmemError as exc:
            fail(str(exc))
    size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    click.echo(f"backup of {settings.store_dir} in {target} ({size / 1e6:.1f} MB)")
    click.echo(f"to go back to it: stop the server, put it in place of {settings.store_dir}")
