"""The ``kgmem`` command line: one group, one module of subcommands per concern."""

from __future__ import annotations

import logging
import sys

import click

from kgmem import __version__
from kgmem.cli.common import fail
from kgmem.cli.lazy import LazyGroup
from kgmem.errors import KgmemError

__all__ = ["cli", "main"]


COMMANDS = {
    "serve": "kgmem.cli.core:serve",
    "status": "kgmem.cli.core:status",
    "sparql": "kgmem.cli.core:sparql",
    # kgmem.cli.terms attaches `search` and `disjoint` to the group it imports
    "ontology": "kgmem.cli.terms:ontology",
    "ingest": "kgmem.cli.ingest:ingest",
    "memories": "kgmem.cli.memories:memories",
    "review": "kgmem.cli.memories:review",
    "consolidate": "kgmem.cli.consolidate:consolidate",
    "index": "kgmem.cli.index:index",
    "users": "kgmem.cli.users:users",
    "mcp": "kgmem.cli.agent:mcp",
    "vault": "kgmem.cli.vault:vault",
    "backup": "kgmem.cli.backup:backup",
    "demo": "kgmem.cli.demo:demo",
}


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option("--debug", is_flag=True, help="Show debug logs and the traceback of a failure.")
@click.version_option(__version__, prog_name="kgmem")
def cli(debug: bool) -> None:
    """kgmem: long-term memory for LLM agents that believes nothing without evidence.

    Settings come from $KGMEM_HOME/kgmem.toml and KGMEM_* environment variables.
    """
    if debug:
        logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
        logging.getLogger("kgmem").setLevel(logging.DEBUG)


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
