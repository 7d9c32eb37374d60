"""The admin routes of resets and backups (served and documented with the other admin routes,
:mod:`kgmem.api.rest.admin`).

    POST /api/admin/users/{user}/reset   {"confirm": user} -> 202, a job (it cannot be undone)
    GET  /api/admin/jobs/{job}           the job: status, step, what it dropped
    POST /api/admin/backup               -> 201, a consistent copy of the store on the server

A backup is written under ``$KGMEM_HOME/backups/`` (never a path the caller names): a RocksDB
checkpoint, hard links where the disk allows. To go back to it, stop the server and put the
directory in place of ``$KGMEM_HOME/store``.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from kgmem.api.auth import principal_of
from kgmem.api.resets import WARNING
from kgmem.api.rest.operation import Action, Given, Operation, Schema, user_id
from kgmem.api.tools.schema import obj
from kgmem.errors import AccountError, ArgumentError
from kgmem.memory import user_graphs

__all__ = ["RESET_TABLE"]

_STRING: Schema = {"type": "string"}
_COUNT: Schema = {"type": "integer", "minimum": 0}
_OR_NULL: Schema = {"type": ["string", "null"]}
_JOB: Schema = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "user": _STRING,
        "requested_by": _STRING,
        "status": {"type": "string", "enum": ["running", "done", "failed"]},
        "step": _STRING,
        "steps_done": _COUNT,
        "steps_total": _COUNT,
        "started_at": _STRING,
        "finished_at": _OR_NULL,
        "report": {
            "type": ["object", "null"],
            "description": "graphs and triples dropped, sources waiting for consolidation "
            "again, queued drafts kept",
        },
        "error": _OR_NULL,
    },
    "required": ["id", "user", "status", "step", "steps_done", "steps_total"],
}


async def _reset(request: Request, given: Given) -> Response:
    uid = request.path_params["user"]
    if given.body.required_text("confirm", maximum=128) != uid:
        raise ArgumentError("confirm", f"must repeat the user id {uid!r} to reset it")
    given.body.done()
    services = request.app.state.services
    known = {a.uid for a in await run_in_threadpool(request.app.state.accounts.all)}
    graphs = await run_in_threadpool(user_graphs, services.store, uid)
    if uid not in known and not graphs:
        raise AccountError(uid, "no such user")
    job = request.app.state.resets.start(uid, principal_of(request).uid)
    return JSONResponse({"job": job.as_json(), "warning": WARNING}, status_code=202)


async def _job(request: Request, given: Given) -> Response:
    return JSONResponse(request.app.state.resets.get(request.path_params["job"]).as_json())


async def _backup(request: Request, given: Given) -> Response:
    services = request.app.state.services
    at = services.clock.now().strftime("%Y%m%dT%H%M%S%fZ")
    target = services.settings.home / "backups" / at
    target.parent.mkdir(parents=True, exist_ok=True)
    await run_in_threadpool(services.store.snapshot, target)
    size = sum(f.stat().st_size for f in target.rglob("*") if f.is_file())
    return JSONResponse({"path": str(target), "bytes": size}, status_code=201)


_ANSWER: dict[str, Any] = {"type": "object", "properties": {"job": _JOB, "warning": _STRING}}

RESET_TABLE: tuple[tuple[Operation, Action], ...] = (
    (
        Operation(
            "POST",
            "/api/admin/users/{user}/reset",
            "admin_reset",
            "Start resetting a user (a job): what was derived goes, chats and notes stay",
            {**_ANSWER, "required": ["job", "warning"]},
            status=202,
            params={"user": user_id("a user id")},
            body=obj({"confirm": user_id("the user id again, as the path has it")}, ("confirm",)),
            body_required=True,
            errors={404: "No such user", 409: "A reset of this user is running"},
            description="It cannot be undone: take a backup first (POST /api/admin/backup). "
            "Memories, entities, pages, decisions and passes go; the account, its keys, the "
            "user's review mode, chats, notes, task records and queued drafts stay, and the "
            "sources are consolidated again. confirm must repeat the path's user id (else 422). "
            "GET /api/admin/jobs/{job} follows the job.",
        ),
        _reset,
    ),
    (
        Operation(
            "GET",
            "/api/admin/jobs/{job}",
            "admin_job",
            "A reset job: status, step, what it dropped",
            _JOB,
            params={"job": {"type": "string", "pattern": "^[0-9a-f]{16}$"}},
            errors={404: "No such job (jobs are kept while the server runs)"},
        ),
        _job,
    ),
    (
        Operation(
            "POST",
            "/api/admin/backup",
            "admin_backup",
            "A consistent copy of the store, under $KGMEM_HOME/backups/ on the server",
            {
                "type": "object",
                "properties": {"path": _STRING, "bytes": _COUNT},
                "required": ["path", "bytes"],
            },
            status=201,
            description="To go back to it: stop the server, put the directory in place of "
            "$KGMEM_HOME/store.",
        ),
        _backup,
    ),
)
