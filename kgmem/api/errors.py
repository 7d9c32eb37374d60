"""One error shape for every HTTP surface, and the HTTP status of each kgmem error.

    {"error": {"code": "not_found", "message": "memory ...: no such memory", "field": null}}

Expected failures (a :class:`~kgmem.errors.KgmemError` the caller caused) keep their message
and name the field when the error has one; anything else is logged with its traceback and
answered as a masked 500, so no internal detail leaks.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from kgmem.api.tools.args import ArgumentError
from kgmem.errors import (
    AccountError,
    BatchSizeError,
    BindingError,
    DecisionConflict,
    DeltaConflict,
    DeltaCycle,
    DraftInvalid,
    Forbidden,
    GraphNameError,
    InvalidSearch,
    JobNotFound,
    KgmemError,
    LifecycleError,
    OntologyIdError,
    OntologyParseError,
    PassNotDue,
    PassNotFound,
    ProtectedOntology,
    ProtectedShapes,
    QueryRefused,
    QueryTimeout,
    QueryTooLarge,
    ResetRunning,
    ResultLimitExceeded,
    RetryRefused,
    ShapesFileError,
    SourceConflict,
    StoreLocked,
    TermCollision,
    Unauthenticated,
    UnknownMemory,
    UnknownOntology,
    UnknownShapes,
    UnknownTerm,
)

__all__ = ["error_response", "kgmem_error", "status_of", "unexpected_error"]

log = logging.getLogger("kgmem.api")

# (error class, HTTP status, code), most specific first
_STATUS: tuple[tuple[type[KgmemError], int, str], ...] = (
    (Unauthenticated, 401, "unauthenticated"),
    (Forbidden, 403, "forbidden"),
    (UnknownMemory, 404, "not_found"),
    (PassNotFound, 404, "not_found"),
    (UnknownTerm, 404, "not_found"),
    (UnknownOntology, 404, "not_found"),
    (ProtectedOntology, 409, "conflict"),
    (UnknownShapes, 404, "not_found"),
    (ProtectedShapes, 409, "conflict"),
    (ShapesFileError, 422, "invalid"),
    (OntologyIdError, 422, "invalid"),
    (OntologyParseError, 422, "invalid"),
    (LifecycleError, 409, "conflict"),
    (DecisionConflict, 409, "conflict"),
    (SourceConflict, 409, "conflict"),
    (TermCollision, 409, "conflict"),
    (DeltaConflict, 409, "conflict"),
    (DeltaCycle, 409, "conflict"),
    (PassNotDue, 409, "conflict"),
    (RetryRefused, 409, "conflict"),
    (ResetRunning, 409, "conflict"),
    (JobNotFound, 404, "not_found"),
    (ResultLimitExceeded, 413, "result_too_large"),
    (QueryRefused, 400, "query_refused"),
    (QueryTimeout, 400, "query_timeout"),
    (QueryTooLarge, 400, "query_too_large"),
    (InvalidSearch, 422, "invalid"),
    (ArgumentError, 422, "invalid"),
    (DraftInvalid, 422, "invalid"),
    (BatchSizeError, 422, "invalid"),
    (GraphNameError, 422, "invalid"),
    (BindingError, 422, "invalid"),
    (StoreLocked, 503, "unavailable"),
)


def status_of(exc: KgmemError) -> tuple[int, str]:
    """The HTTP status and error code of an expected error (None: unexpected)."""
    if isinstance(exc, AccountError):
        return (404, "not_found") if exc.reason.startswith("no such") else (409, "conflict")
    for kind, status, code in _STATUS:
        if isinstance(exc, kind):
            return status, code
    return 500, "internal"


def error_response(status: int, code: str, message: str, field: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": {"code": code, "message": message, "field": field}}
    headers = {"WWW-Authenticate": 'Bearer realm="kgmem"'} if status == 401 else None
    return JSONResponse(body, status_code=status, headers=headers)


def _field(exc: KgmemError) -> str | None:
    field = getattr(exc, "field", None)
    return field if isinstance(field, str) else None


async def kgmem_error(request: Request, exc: Exception) -> JSONResponse:
    """Starlette exception handler for :class:`KgmemError`."""
    assert isinstance(exc, KgmemError)
    status, code = status_of(exc)
    if status == 500:
        return await unexpected_error(request, exc)
    return error_response(status, code, str(exc), _field(exc))


async def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    """Log the traceback; tell the caller only that it failed."""
    log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal", "internal error (logged on the server)")
