"""Helpers every subcommand shares."""

from __future__ import annotations

import sys
from typing import NoReturn

import click

__all__ = ["fail"]


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error and exit non-zero."""
    click.echo(f"kgmem: error: {message}", err=True)
    sys.exit(code)
