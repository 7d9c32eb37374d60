"""``GET /health``: liveness, version and store facts."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from kgmem import __version__
from kgmem.api.auth import principal_of, require_admin
from kgmem.api.rest.operation import Access, Operation
from kgmem.api.services import Services
from kgmem.store import collect_facts

__all__ = ["HEALTH", "health"]

_OBJECT = {"type": "object"}
HEALTH = Operation(
    "GET",
    "/health",
    "health",
    "Liveness, version and store facts",
    {
        "type": "object",
        "properties": {
            "status": {"const": "ok"},
            "version": {"type": "string"},
            "uptime_seconds": {"type": "number"},
            "store": _OBJECT,
            "index": {
                "type": "object",
                "properties": {
                    "warm": {"type": "boolean"},
                    "repairing": {"type": "integer", "minimum": 0},
                    "repairs": _OBJECT,
                },
                "required": ["warm", "repairing"],
            },
        },
        "required": ["status", "version", "uptime_seconds", "store", "index"],
    },
    access=Access.OPEN,
    query={
        "detail": {
            "type": "string",
            "description": "Given (an admin's key only: it names every user's graphs): the "
            "users being repaired; 1 or true: also every graph's triple count and size on disk.",
        }
    },
    errors={
        401: "detail without an API key, or with a malformed, unknown or revoked one",
        403: "detail with the key of a user who is not an admin",
    },
    description="Open: no key needed, but for detail. Other query parameters are ignored.",
    lenient=True,
)


async def health(request: Request) -> JSONResponse:
    """Cheap and open by default: ``index`` says whether start-up's background work is done
    (every search index held, every drifted projection repaired) and how many users still
    wait for a repair. ``?detail=1`` (an admin's key only: it names every user's graphs)
    adds per-graph triple counts and size on disk, and names the users being repaired."""
    services: Services = request.app.state.services
    detail = "detail" in request.query_params
    if detail:
        require_admin(principal_of(request))
    now = services.clock.now()
    store: dict[str, object] = {
        "backend": type(services.store).__name__,
        "location": services.store.location,
    }
    if detail and request.query_params.get("detail") in ("1", "true"):
        store = collect_facts(services.store, services.queries).as_dict()
    repairing = services.repairing()
    index: dict[str, object] = {
        "warm": services.warmed.is_set(),
        "repairing": len({u for users in repairing.values() for u in users}),
    }
    if detail:
        index["repairs"] = repairing
    return JSONResponse(
        {
            "status": "ok",
            "version": __version__,
            "uptime_seconds": round((now - services.started_at).total_seconds(), 3),
            "store": store,
            "index": index,
        }
    )
