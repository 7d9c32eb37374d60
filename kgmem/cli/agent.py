"""``kgmem mcp``: the agent tools over MCP on stdin/stdout, for agents that launch kgmem.

It opens the store locally (so it refuses while a server holds it: connect to the server's
``/mcp`` with an API key instead) and acts for one user, ``--user`` or ``default_user``.
Only MCP messages go to stdout; logs go to stderr.
"""

from __future__ import annotations

import anyio
import click

from kgmem.config import apply_offline_env, load_settings
from kgmem.store import check_id

__all__ = ["mcp"]


@click.command("mcp")
@click.option("--user", "uid", metavar="USER", help="Act for this user (default: default_user).")
def mcp(uid: str | None) -> None:
    """Serve the agent tools over MCP on stdio."""
    apply_offline_env()
    from mcp.server.stdio import stdio_server

    from kgmem.api.accounts import Principal, Role
    from kgmem.api.mcp.server import mcp_server
    from kgmem.cli.common import local_services

    settings = load_settings()
    user = check_id(uid or settings.default_user, "user id")
    principal = Principal(user, Role.USER, "stdio")
    instead = "point the agent at its /mcp with an API key instead, or stop it first"
    with local_services(settings, "serve MCP", create=True, instead=instead) as services:
        server = mcp_server(services, lambda ctx: principal)

        async def serve() -> None:
            async with stdio_server() as (read, write):
                await server.run(read, write, server.create_initialization_options())

        anyio.run(serve)
