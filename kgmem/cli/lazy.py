"""A click group whose subcommands are imported when they run, not when ``kgmem`` starts.

Every subcommand module pulls in what it needs (the API services, the pipeline, DSPy...),
which takes about a second in all; a command that needs little (``kgmem ontology search``)
should not wait for the rest. ``kgmem --help`` still lists every command (it imports them).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import click

__all__ = ["LazyGroup"]


class LazyGroup(click.Group):
    """``lazy`` maps a command's name to ``"module:attribute"``, imported on first use."""

    def __init__(self, *args: Any, lazy: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self._lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        spec = self._lazy.get(cmd_name)
        if spec is None or cmd_name in self.commands:
            return super().get_command(ctx, cmd_name)
        module, _, attribute = spec.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{spec} is not a click command")
        self.add_command(command, cmd_name)
        return command
