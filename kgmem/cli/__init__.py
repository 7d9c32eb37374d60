"""The ``kgmem`` command line: one group, one module of subcommands per concern."""

from __future__ import annotations

import logging
import sys

import click

from kgmem import __version__
from kgmem.cli import terms as _terms  # noqa: F401 - attaches `ontology search/disjoint`
from kgmem.cli.agent import mcp
from kgmem.cli.backup import backup
from kgmem.cli.common import fail
from kgmem.cli.consolidate import consolidate
from kgmem.cli.core import serve, sparql, status
from kgmem.cli.index import index
from kgmem.cli.ingest import ingest
from kgmem.cli.memories import memories, review
from kgmem.cli.ontology import ontology
from kgmem.cli.users import users
from kgmem.cli.vault import vault
from kgmem.errors import KgmemError

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show debug logs and the traceback of a failure.")
@click.version_option(__version__, prog_name="kgmem")
def cli(debug: bool) -> None:
    """kgmem: long-term memory for LLM agents that believes nothing without evidence.

    Settings come from $KGMEM_HOME/kgmem.toml and KGMEM_* environment variables.
    """
    if debug:
        logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger("kgmem").setLevel(logging.DEBUG)


for command in (serve, status, sparql, ontology):
    cli.add_command(command)
cli.add_command(ingest)
cli.add_command(memories)
cli.add_command(review)
cli.add_command(consolidate)
cli.add_command(index)
cli.add_command(users)
cli.add_command(mcp)
cli.add_command(vault)
cli.add_command(backup)


def main(argv: list[str] | None = None) -> None:
    """Entry point: one-line errors, non-zero exit, no traceback for expected failures."""
    try:
        cli.main(args=argv, prog_name="kgmem", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        fail("aborted", 130)
    except KgmemError as exc:
        fail(str(exc))
