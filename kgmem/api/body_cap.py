"""One body cap for every route: ``max_body_bytes``, enforced before any route reads a byte.

A declared ``Content-Length`` over the cap is answered 413 at once; a body that streams in
(chunked) is counted as the route reads it, and the read that passes the cap ends the request
with the same 413. Routes keep their own checks (they read through the same ``receive``);
this one is what makes a new route, or a library's (strawberry, the MCP transport), capped.
"""

from __future__ import annotations

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kgmem.api.errors import error_response

__all__ = ["BodyCap"]


class _TooLarge(Exception):
    pass


def _too_large(cap: int) -> JSONResponse:
    return error_response(413, "too_large", f"the body is over the {cap}-byte cap", "body")


class BodyCap:
    """ASGI middleware refusing request bodies over ``cap`` bytes with a 413 naming ``body``."""

    def __init__(self, app: ASGIApp, cap: int) -> None:
        self.app, self.cap = app, cap

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.cap:
            await _too_large(self.cap)(scope, receive, send)
            return
        seen, started = 0, False

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.cap:
                    raise _TooLarge
            return message

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, tracked)
        except _TooLarge:
            if started:  # the route answered before it read its whole body: nothing to add
                return
            await _too_large(self.cap)(scope, receive, send)
