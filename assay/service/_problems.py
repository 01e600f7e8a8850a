"""Errors as RFC 9457 problem details (``application/problem+json``).

Every error the service answers has ``type``, ``title``, ``status``, ``detail``,
``instance`` and a stable ``code`` a client can branch on. assay's own exceptions
are mapped in one table: a caller's mistake (:class:`~assay.errors.UsageError`) is a
4xx, a failure at run time (:class:`~assay.errors.RunError`) a 5xx; no body ever
carries a traceback, and a database error's text (which may name tables or hosts)
stays in the server's log.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic_core import to_jsonable_python
from starlette.exceptions import HTTPException as StarletteHTTPException

from assay.errors import (
    AlreadyDecided,
    AssayError,
    DatabaseError,
    InvalidDecision,
    InvalidKey,
    RunError,
    ThreadInUse,
    UnknownEntry,
    UnknownRun,
    UnknownThread,
    UsageError,
    WrongGraph,
)

__all__ = ["PROBLEM_JSON", "Problem", "install_problem_handlers", "problem_response"]

PROBLEM_JSON = "application/problem+json"
TYPE_BASE = "https://assay.dev/problems/"
_log = logging.getLogger("assay.service")

#: assay's exceptions, most specific first: (class, HTTP status, code).
_ASSAY: tuple[tuple[type[AssayError], int, str], ...] = (
    (AlreadyDecided, 409, "already_decided"),
    (InvalidDecision, 409, "invalid_decision"),
    (UnknownThread, 404, "unknown_thread"),
    (UnknownRun, 404, "unknown_run"),
    (UnknownEntry, 404, "unknown_entry"),
    (ThreadInUse, 409, "thread_in_use"),
    (WrongGraph, 409, "wrong_graph"),
    (InvalidKey, 503, "checkpoint_key_unavailable"),
    (UsageError, 400, "usage_error"),
    (DatabaseError, 503, "database_unavailable"),
    (RunError, 500, "run_error"),
)
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}
_TITLES = {
    400: "Bad request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Request body too large",
    422: "Invalid request",
    429: "Too many requests",
    500: "Internal error",
    503: "Service unavailable",
}


class Problem(Exception):
    """An error the service answers as problem details: raise it from a route."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})


def problem_response(
    status: int,
    code: str,
    detail: str,
    *,
    instance: str | None = None,
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> JSONResponse:
    """The ``application/problem+json`` response for one error."""
    body: dict[str, Any] = {
        "type": TYPE_BASE + code,
        "title": _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if instance is not None:
        body["instance"] = instance
    body.update(to_jsonable_python(dict(extra or {}), fallback=str))
    return JSONResponse(
        body, status_code=status, headers=dict(headers or {}), media_type=PROBLEM_JSON
    )


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _assay(exc: AssayError) -> tuple[int, str, str, dict[str, Any]]:
    status, code = next(((s, c) for k, s, c in _ASSAY if isinstance(exc, k)), (500, "run_error"))
    detail = _one_line(str(exc)) or type(exc).__name__
    extra: dict[str, Any] = {}
    if isinstance(exc, AlreadyDecided):
        extra["decision"] = exc.decision
    if isinstance(exc, DatabaseError):
        detail = "the database is unavailable or refused the operation"
    elif isinstance(exc, InvalidKey):
        detail = "the ledger's checkpoint signing key is not configured on this server"
    if status >= 500:
        _log.error("%s answered %s: %s", type(exc).__name__, status, exc, exc_info=exc)
    return status, code, detail, extra


def install_problem_handlers(app: FastAPI) -> None:
    """Answer every error of ``app`` as problem details."""

    async def on_problem(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, Problem)
        return problem_response(
            exc.status,
            exc.code,
            exc.detail,
            instance=request.url.path,
            headers=exc.headers,
            extra=exc.extra,
        )

    async def on_assay(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, AssayError)
        status, code, detail, extra = _assay(exc)
        return problem_response(status, code, detail, instance=request.url.path, extra=extra)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        code = _HTTP_CODES.get(exc.status_code, f"http_{exc.status_code}")
        return problem_response(
            exc.status_code,
            code,
            _one_line(str(exc.detail)),
            instance=request.url.path,
            headers=exc.headers,
        )

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        first = errors[0] if errors else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"])
        return problem_response(
            422,
            "validation_error",
            f"{where}: {first['msg']}" if where else str(first["msg"]),
            instance=request.url.path,
            extra={"errors": errors},
        )

    async def on_unexpected(request: Request, exc: Exception) -> JSONResponse:
        _log.error("unexpected error on %s", request.url.path, exc_info=exc)
        return problem_response(
            500,
            "internal_error",
            "an unexpected error; see the server's log",
            instance=request.url.path,
        )

    app.add_exception_handler(Problem, on_problem)
    app.add_exception_handler(AssayError, on_assay)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(Exception, on_unexpected)
