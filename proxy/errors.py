"""Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.

Every failure the client sees goes through `ProxyError`; unexpected exceptions
become a 500 in the same shape, without a traceback or any secret.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException

from proxy.store.faults import StoreBusy, StoreUnavailable, store_fault

log = logging.getLogger("memproxy")

_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    409: "conflict_error",
    413: "invalid_request_error",
    422: "invalid_request_error",
    429: "rate_limit_error",
    502: "upstream_error",
    503: "service_unavailable",
    504: "timeout_error",
}


class ProxyError(Exception):
    def __init__(
        self,
        status: int,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        type_: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.param = param
        self.code = code
        self.type = type_ or _TYPES.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        self.headers = headers or {}
        # Upstream attempts (retries, fallbacks) behind this error, for the request record.
        self.route: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }

    def response(self, extra_headers: dict[str, str] | None = None) -> JSONResponse:
        headers = {**self.headers, **(extra_headers or {})}
        return JSONResponse(self.body(), status_code=self.status, headers=headers)


def error_response(status: int, message: str, **kwargs: Any) -> JSONResponse:
    return ProxyError(status, message, **kwargs).response()


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ProxyError)
    async def _proxy_error(_: Request, exc: ProxyError) -> JSONResponse:
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 404 and exc.detail == "Not Found":  # no route matched
            from proxy.served import unknown_route  # it imports this module

            return unknown_route(request)
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        return error_response(exc.status_code, message, headers=dict(exc.headers or {}))

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        loc = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return error_response(
            400, f"{loc}: {first.get('msg', 'invalid request')}", param=loc or None
        )

    async def _store_error(_: Request, exc: Exception) -> JSONResponse:
        reason = store_fault(exc)
        if reason is None:
            raise exc  # a bug: the 500 handler below answers
        # An admin or inspection route met a failing store: retryable, not a bug.
        log.warning("memory store unavailable: %s", reason)
        return error_response(
            503,
            f"memproxy's memory store is unavailable ({reason}). Retry shortly.",
            code="store_unavailable",
            headers={"Retry-After": "1"},
        )

    for kind in (SQLAlchemyError, StoreBusy, StoreUnavailable):
        app.add_exception_handler(kind, _store_error)

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unexpected error")
        return error_response(500, "internal error in memproxy", code="internal_error")
