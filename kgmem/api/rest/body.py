"""Reading a REST request's JSON body: size cap, content type, well-formed JSON.

Each refusal is a :class:`BodyError` carrying its HTTP status and the one error shape's code,
raised before any argument is parsed, so a refused request changes nothing.
"""

from __future__ import annotations

import json

from starlette.requests import Request

__all__ = ["BodyError", "decode_json", "has_body", "read_capped", "read_json"]


class BodyError(Exception):
    """A request body refused before its content is looked at."""

    def __init__(self, status: int, code: str, message: str, field: str | None = None) -> None:
        self.status, self.code, self.message, self.field = status, code, message, field
        super().__init__(message)


def _constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _is_json(content_type: str) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (
        media.startswith("application/") and media.endswith("+json")
    )


async def read_capped(request: Request, cap: int) -> bytes:
    """The whole body, or :class:`BodyError` (413) as soon as it is known to be over ``cap``
    (by its declared length, or while it streams in)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise BodyError(413, "too_large", f"the body is over the {cap}-byte cap", "body")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise BodyError(413, "too_large", f"the body is over the {cap}-byte cap", "body")
    return bytes(body)


async def has_body(request: Request, cap: int) -> bool:
    """Whether a request came with a body (read up to the cap)."""
    return bool(await read_capped(request, cap))


async def read_json(request: Request, cap: int) -> object | None:
    """The decoded body, or None when there is none; :class:`BodyError` when it is too
    large (413), not JSON by its content type (415) or not well-formed JSON (400)."""
    body = await read_capped(request, cap)
    return decode_json(body, request.headers.get("content-type", ""))


def decode_json(body: bytes, content_type: str) -> object | None:
    """:func:`read_json` once the bytes are read (for a worker thread: decoding a large body
    is work the event loop should not do)."""
    if not body:
        return None
    if not _is_json(content_type):
        shown = content_type or "none"
        raise BodyError(
            415,
            "unsupported_media_type",
            f"send the body as application/json (Content-Type was {shown})",
            "Content-Type",
        )
    try:
        decoded: object = json.loads(body.decode("utf-8"), parse_constant=_constant)
    except UnicodeDecodeError:
        raise BodyError(400, "malformed", "the body is not UTF-8", "body") from None
    except (ValueError, RecursionError) as exc:
        raise BodyError(
            400, "malformed", f"the body is not well-formed JSON: {exc}", "body"
        ) from None
    return decoded
