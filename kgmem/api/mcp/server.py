"""MCP: the agent tools of :mod:`kgmem.api.tools.registry` over stdio and streamable HTTP.

One low-level MCP server lists :data:`~kgmem.api.tools.registry.TOOLS` (names, descriptions written
for models, JSON Schemas) and runs a call through :func:`~kgmem.api.tools.registry.call` in a worker
thread (the tools do blocking store work). A tool's answer is its JSON as text and as
structured content; an expected failure (bad argument, unknown memory, a refused lifecycle
action) is a tool error in the one error shape, so the model can read and correct it;
anything else is logged and masked.

Who calls: over HTTP (``/mcp``, behind :class:`~kgmem.api.auth.KeyAuth`) the Bearer key's
user, read from the HTTP request of each call; over stdio (``kgmem mcp``) the user the local
process was started for. No tool takes a user id.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Collection
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import quote, unquote

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from starlette.datastructures import Headers
from starlette.requests import HTTPConnection
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kgmem import __version__
from kgmem.api.accounts import Principal
from kgmem.api.auth import principal_of
from kgmem.api.errors import error_response, status_of
from kgmem.api.services import Services
from kgmem.api.tools.registry import TOOLS, call
from kgmem.config import Settings
from kgmem.errors import ArgumentError, KgmemError, Unauthenticated
from kgmem.pages import PageView

__all__ = ["McpEndpoint", "mcp_server"]

log = logging.getLogger("kgmem.api")

_INSTRUCTIONS = (
    "Long-term memory that stores only what evidence supports. Search before you answer "
    "(memory_search, or retrieve_memory for a task), cite what you used (memory_cite), "
    "record whether it helped (record_outcome). Write with memory_remember (a short note) or "
    "draft_memory (typed memories, each quoting the message it comes from, which "
    "ingest_messages stores first)."
)

Caller = Callable[[Any], Principal]

#: Pages are resources: ``file://`` + the file's absolute path (what search and the playbook
#: index show), or ``kgmem://page/`` + the vault path. At most MAX_RESOURCES are listed.
PAGE_URI = "kgmem://page/"
MARKDOWN = "text/markdown"
MAX_RESOURCES = 1000
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
INVALID_PARAMS = -32602  # JSON-RPC's code for bad arguments

#: The prompt context (the prompt_context tool) as a prompt and as a resource.
CONTEXT_TOOL = "prompt_context"
CONTEXT_URI = "kgmem://prompt-context"
CONTEXT_PROMPT = types.Prompt(
    name="memory_context",
    title="What memory knows to keep in mind",
    description="The user's profile, recent short notes and playbook index, as Markdown "
    "within a token budget (what a cap or the budget left out is said, not dropped).",
    arguments=[
        types.PromptArgument(name="account_name", description="The account's name."),
        types.PromptArgument(name="timezone", description="An IANA timezone: Europe/Berlin."),
        types.PromptArgument(name="budget_tokens", description="Tokens it may take."),
    ],
)


def _result(payload: dict[str, Any], error: bool = False) -> types.CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=payload,
        is_error=error,
    )


def _error(status: int, code: str, message: str, field: str | None) -> types.CallToolResult:
    body = {"error": {"code": code, "status": status, "message": message, "field": field}}
    return _result(body, error=True)


def mcp_server(services: Services, caller: Caller) -> Server[Any]:
    """The MCP server over ``services``; ``caller(ctx)`` says whom a request acts for."""

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=dict(t.schema))
                for t in TOOLS.values()
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            principal = caller(ctx)
            found = await anyio.to_thread.run_sync(
                call, services, principal, params.name, dict(params.arguments or {})
            )
        except KgmemError as exc:
            status, code = status_of(exc)
            if status >= 500:
                log.error("MCP tool %s failed", params.name, exc_info=exc)
                return _error(500, "internal", "internal error (logged on the server)", None)
            field = getattr(exc, "field", None)
            return _error(status, code, str(exc), field if isinstance(field, str) else None)
        except Exception as exc:
            log.error("MCP tool %s failed", params.name, exc_info=exc)
            return _error(500, "internal", "internal error (logged on the server)", None)
        return _result(found)

    async def pushed(ctx: Any, arguments: dict[str, Any]) -> str:
        """The prompt context's Markdown for the caller (a bad argument: invalid params)."""
        principal = caller(ctx)
        try:
            found = await anyio.to_thread.run_sync(
                call, services, principal, CONTEXT_TOOL, arguments
            )
        except ArgumentError as exc:
            raise MCPError(INVALID_PARAMS, str(exc)) from exc
        return str(found["markdown"])

    async def list_prompts(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[CONTEXT_PROMPT])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != CONTEXT_PROMPT.name:
            raise MCPError(INVALID_PARAMS, f"no prompt named {params.name[:100]!r}")
        text = await pushed(ctx, dict(params.arguments or {}))
        return types.GetPromptResult(
            description=CONTEXT_PROMPT.description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        uid = caller(ctx).uid
        found = await anyio.to_thread.run_sync(services.page_reader.pages, uid, MAX_RESOURCES)
        context = types.Resource(
            uri=CONTEXT_URI,
            name="prompt-context",
            title="What to keep in mind in every turn",
            mime_type=MARKDOWN,
        )
        return types.ListResourcesResult(
            resources=[
                context,
                *(
                    types.Resource(
                        uri=_uri(page), name=page.path, title=page.title, mime_type=MARKDOWN
                    )
                    for page in found
                ),
            ]
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uid, uri = caller(ctx).uid, str(params.uri)
        if uri == CONTEXT_URI:
            text = await pushed(ctx, {})
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type=MARKDOWN, text=text)]
            )
        path = unquote(uri.removeprefix("file://")) if uri.startswith("file:///") else None
        if uri.startswith(PAGE_URI):
            path = unquote(uri.removeprefix(PAGE_URI))
        found = None
        if path is not None:
            found = await anyio.to_thread.run_sync(services.page_reader.by_path, uid, path)
        if found is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"no such page or note for this user: {uri[:200]}")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=MARKDOWN, text=found.markdown)]
        )

    return Server(
        "kgmem",
        version=__version__,
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _uri(page: PageView) -> str:
    """A page's resource: its file (the path a search hit gives) or, with no vault, its
    vault path under ``kgmem://page/``."""
    return f"file://{quote(page.file)}" if page.file else PAGE_URI + quote(page.path)


def _http_caller(ctx: Any) -> Principal:
    request = getattr(ctx, "request", None)
    if not isinstance(request, HTTPConnection):
        raise Unauthenticated("an MCP call over HTTP without its HTTP request")
    return principal_of(request)


class _SessionOwners:
    """Bind each MCP session to the key that opened it: a request naming another key's
    session is answered 404, as if the session did not exist (so B can neither call tools in
    A's session nor end it with ``DELETE``)."""

    def __init__(self, app: ASGIApp, live: Callable[[], Collection[str]]) -> None:
        """``live()``: the sessions the session manager still holds (it ends idle ones)."""
        self.app, self._live = app, live
        self.owners: dict[str, str] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key_id = principal_of(HTTPConnection(scope)).key_id
        session = Headers(scope=scope).get("mcp-session-id")
        if session is not None:
            owner = self.owners.get(session)
            if owner is not None and owner != key_id:
                await error_response(404, "not_found", "no such MCP session", "mcp-session-id")(
                    scope, receive, send
                )
                return
            if owner is not None and scope["method"] == "DELETE":
                self.owners.pop(session, None)
            await self.app(scope, receive, send)
            return

        async def recording(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = Headers(raw=message.get("headers", [])).get("mcp-session-id")
                if opened is not None:
                    self._forget_ended()
                    self.owners.setdefault(opened, key_id)
            await send(message)

        await self.app(scope, receive, recording)

    def _forget_ended(self) -> None:
        """Drop the owners of sessions that ended without a DELETE (timed out, crashed), so
        the map holds no more than the live sessions (the manager caps those)."""
        live = self._live()
        for session in [s for s in self.owners if s not in live]:
            del self.owners[session]


class McpEndpoint:
    """Streamable HTTP at ``/mcp``: :attr:`route` for the app, :meth:`running` for its
    lifespan (the session manager's task group lives there)."""

    def __init__(self, services: Services, settings: Settings) -> None:
        hosts = [f"{settings.host}:*", "127.0.0.1:*", "localhost:*", "[::1]:*"]
        self.manager = StreamableHTTPSessionManager(
            app=mcp_server(services, _http_caller),
            security_settings=TransportSecuritySettings(
                allowed_hosts=hosts,
                allowed_origins=[f"http://{h}" for h in hosts],
            ),
        )
        self.route = Route(
            "/mcp",
            # the manager has no public list of its sessions (mcp 2.3)
            endpoint=_SessionOwners(
                StreamableHTTPASGIApp(self.manager), lambda: self.manager._server_instances.keys()
            ),
            methods=["GET", "POST", "DELETE"],
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield
