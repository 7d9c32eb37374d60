"""``GET /api/me``: who the caller's key says it is (user id, role, key id)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from kgmem.api.auth import principal_of

__all__ = ["me"]


async def me(request: Request) -> JSONResponse:
    principal = principal_of(request)
    return JSONResponse(
        {"user": principal.uid, "role": principal.role.value, "key_id": principal.key_id}
    )
