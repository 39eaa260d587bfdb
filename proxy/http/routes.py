"""HTTP routes: parse, call the pipeline, return. Nothing else lives here."""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from proxy.chat.plan import RequestContext, RequestPlan
from proxy.chat_request import ChatRequest, parse_chat_request
from proxy.errors import ProxyError
from proxy.http.openapi import CHAT_OPENAPI
from proxy.http.services import Services
from proxy.ids import new_id
from proxy.longterm import user_scope
from proxy.metrics import render_long_term
from proxy.sessions import match_scope
from proxy.store.faults import store_fault

router = APIRouter()

_MEMORY_HEADERS = (
    "x-memory-session",
    "x-memory-mode",
    "x-memory-budget",
    "x-memory-policy",
    "x-memory-user",
)


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ProxyError(
            413, f"request body too large: {declared} bytes > {limit}", code="body_too_large"
        )
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ProxyError(
                413, f"request body too large: over {limit} bytes", code="body_too_large"
            )
        chunks.append(chunk)
    return b"".join(chunks)


def parse_json(raw: bytes) -> Any:
    if not raw:
        raise ProxyError(400, "request body is empty; expected a JSON object", code="invalid_json")
    try:
        body = json.loads(raw)
        if b"\\ud" in raw or b"\\uD" in raw:
            # JSON escapes may encode lone surrogates: valid JSON, invalid Unicode,
            # and unstorable. Checked only when such an escape is present at all.
            json.dumps(body, ensure_ascii=False).encode("utf-8")
        return body
    except UnicodeEncodeError:
        raise ProxyError(
            400,
            "request body contains invalid Unicode (a lone surrogate escape)",
            code="invalid_json",
        ) from None
    except UnicodeDecodeError:
        raise ProxyError(400, "request body is not valid UTF-8", code="invalid_json") from None
    except (ValueError, RecursionError) as exc:
        raise ProxyError(
            400, f"request body is not valid JSON: {exc}", code="invalid_json"
        ) from None


def memory_headers(request: Request, limit: int) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in _MEMORY_HEADERS:
        value = request.headers.get(name)
        if value is not None:
            if len(value.encode()) > limit:
                raise ProxyError(
                    400,
                    f"{name} header too long (over {limit} bytes)",
                    param=name,
                    code="invalid_header",
                )
            value = value.strip()
            if name == "x-memory-session" and not value:
                raise ProxyError(
                    400, "X-Memory-Session must not be empty", param=name, code="invalid_header"
                )
        out[name] = value
    return out


def _cache_scope(tenant: str, headers: dict[str, str | None], body: Any) -> str:
    """The scope the pipeline matches this conversation in (`match_scope`)."""
    if headers["x-memory-session"] is not None:
        return tenant
    user = user_scope(headers["x-memory-user"], body if isinstance(body, dict) else {})
    return match_scope(tenant, user)


async def prepare_chat(
    services: Services,
    request_id: str,
    tenant: str,
    headers: dict[str, str | None],
    body: Any,
) -> tuple[ChatRequest, RequestPlan]:
    """A chat-shaped body through the pipeline's prepare step: the one way in for
    chat completions and the wire APIs translated to it (`proxy.http.wire_routes`)."""
    req = parse_chat_request(
        body,
        max_messages=services.settings.server.max_messages,
        seen=partial(services.pipeline.cache.seen_prefix, _cache_scope(tenant, headers, body)),
    )
    ctx = RequestContext(
        request_id=request_id,
        tenant_id=tenant,
        session_header=headers["x-memory-session"],
        mode_header=headers["x-memory-mode"],
        budget_header=headers["x-memory-budget"],
        policy_header=headers["x-memory-policy"],
        user_header=headers["x-memory-user"],
    )
    plan = await services.pipeline.prepare_guarded(req, ctx)
    services.request_log.expect(request_id)  # GET /memory/requests/{id} may wait for it
    return req, plan


@router.post("/v1/chat/completions", openapi_extra=CHAT_OPENAPI)
@router.post("/chat/completions", openapi_extra=CHAT_OPENAPI)
async def chat_completions(request: Request) -> Response:
    services: Services = request.app.state.services
    settings = services.settings
    request_id = new_id()
    try:
        tenant = services.auth.tenant(request.headers.get("authorization"))
        raw = await read_body(request, settings.server.max_body_bytes)
        headers = memory_headers(request, settings.server.max_header_bytes)
        body = parse_json(raw)
        req, plan = await prepare_chat(services, request_id, tenant, headers, body)
    except ProxyError as exc:
        return exc.response({"X-Memory-Request-Id": request_id})
    if req.stream:
        return await services.pipeline.stream(plan)
    return await services.pipeline.complete(plan)


@router.get("/v1/models")
@router.get("/models")
async def list_models(request: Request) -> JSONResponse:
    services: Services = request.app.state.services
    services.auth.tenant(request.headers.get("authorization"))
    data = [
        {"id": name, "object": "model", "created": 0, "owned_by": "memproxy"}
        for name in services.upstream.model_names()
    ]
    return JSONResponse({"object": "list", "data": data})


@router.get("/metrics")
async def metrics(request: Request) -> PlainTextResponse:
    """Prometheus exposition: counts and latencies only, no content."""
    services: Services = request.app.state.services
    pipeline = services.pipeline
    text = pipeline.metrics.render() + render_long_term(pipeline.longterm.stats())
    return PlainTextResponse(text, media_type="text/plain; version=0.0.4")


@router.get("/health")
async def health(request: Request) -> JSONResponse:
    """Readiness: 200 while memory works; 503 while the store is unavailable.

    The body says why and what chat does meanwhile (`memory.on_store_error`).
    """
    services: Services = request.app.state.services
    try:
        await services.store.ping()
    except Exception as exc:
        reason = store_fault(exc)
        if reason is None:
            raise
        mode = services.settings.memory.on_store_error
        chat = (
            "forwarded unmanaged, without memory (X-Memory-Degraded: 1)"
            if mode == "open"
            else "refused with 503 store_unavailable"
        )
        body = {
            "status": "degraded",
            "store": "unavailable",
            "reason": reason,
            "on_store_error": mode,
            "chat": chat,
        }
        return JSONResponse(body, status_code=503)
    return JSONResponse({"status": "ok", "store": "ok"})


@router.get("/health/live")
async def liveness() -> JSONResponse:
    """Liveness: the process answers (restart it only when this fails, not for the store)."""
    return JSONResponse({"status": "alive"})
