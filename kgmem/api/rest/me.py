"""``GET /api/me``: who the caller's key says it is (user id, role, key id)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kgmem.api.accounts import Role
from kgmem.api.auth import principal_of
from kgmem.api.rest.operation import Access, Given, Operation, checked

__all__ = ["ME", "me"]

ME = Operation(
    "GET",
    "/api/me",
    "me",
    "Who the caller's key says it is: user id, role, key id",
    {
        "type": "object",
        "properties": {
            "user": {"type": "string"},
            "role": {"type": "string", "enum": [r.value for r in Role]},
            "key_id": {"type": "string"},
        },
        "required": ["user", "role", "key_id"],
    },
    access=Access.KEY,
)


async def _me(request: Request, given: Given) -> Response:
    principal = principal_of(request)
    return JSONResponse(
        {"user": principal.uid, "role": principal.role.value, "key_id": principal.key_id}
    )


me = checked(ME, _me)
