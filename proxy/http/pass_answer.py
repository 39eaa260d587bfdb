"""A pass-through call's answer to the client (JSON, bytes, transcript text or SSE) and its record.

Answers keep OpenAI's shape; every call, answered or failed, leaves one
request record (mode `passthrough`: no context, no content kept).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from proxy.http.pass_routes import PassRoute
from proxy.http.services import Services
from proxy.upstream_wire import RoutedStream


@dataclass(slots=True)
class PassCall:
    """What one pass-through request did, for its record."""

    spec: PassRoute
    request_id: str
    tenant: str
    started: float
    model: str = ""
    upstream_ms: float | None = None
    route: dict[str, Any] | None = None

    def headers(self) -> dict[str, str]:
        return {"X-Memory-Request-Id": self.request_id}


def _usage_tokens(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    value = usage.get("prompt_tokens", usage.get("input_tokens"))
    return int(value) if isinstance(value, int) else 0


def record_call(
    services: Services,
    call: PassCall,
    status: int,
    *,
    usage: dict[str, Any] | None = None,
    cost: float | None = None,
    error: str | None = None,
) -> None:
    elapsed = (time.perf_counter() - call.started) * 1000
    tokens = _usage_tokens(usage)
    record = {
        "route": call.spec.label,
        "call": call.spec.call,
        "usage": usage,
        "cost": cost,
        "error": error,
        "upstream": call.route,
    }
    services.request_log.submit(
        services.request_log.row(
            record=record,
            id=call.request_id,
            tenant_id=call.tenant,
            session_id=None,
            mode="passthrough",
            policy="none",
            model=call.model,
            status=status,
            budget=None,
            raw_tokens=tokens,
            context_tokens=tokens,
            prefix_share=None,
            proxy_ms=round(max(0.0, elapsed - (call.upstream_ms or 0.0)), 2),
            upstream_ms=call.upstream_ms,
            route=call.spec.path,
        )
    )


def answer_call(
    services: Services, call: PassCall, result: Any, fields: dict[str, Any]
) -> Response:
    upstream = services.upstream
    if call.spec.answer == "bytes":
        content = getattr(result, "content", b"")
        response = getattr(result, "response", None)
        media = response.headers.get("content-type") if response is not None else None
        record_call(services, call, 200)

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(content), 65536):
                yield content[i : i + 65536]

        return StreamingResponse(
            chunks(), media_type=media or "application/octet-stream", headers=call.headers()
        )
    body = upstream.passthrough.body(result)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    cost = upstream.pricing.passthrough_cost(result, call.spec.call)
    record_call(services, call, 200, usage=usage, cost=cost)
    if call.spec.answer == "transcript" and fields.get("response_format") in ("text", "srt", "vtt"):
        return PlainTextResponse(str(body.get("text", "")), headers=call.headers())
    return JSONResponse(body, headers=call.headers())


def _sse(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"


def relay_stream(services: Services, call: PassCall, stream: RoutedStream) -> StreamingResponse:
    upstream = services.upstream

    async def events() -> AsyncIterator[bytes]:
        usage: dict[str, Any] | None = None
        status, error = 200, None
        try:
            async for chunk in stream:
                data = upstream.chunk_dict(chunk)
                for choice in data.get("choices") or ():
                    choice.setdefault("text", "")
                if data.get("usage"):
                    usage = data["usage"]
                yield _sse(data)
            yield b"data: [DONE]\n\n"
        except asyncio.CancelledError:  # the client went away: the provider call is closed
            status, error = 499, "client disconnected mid-stream"
            raise
        except Exception as exc:
            failure = upstream.passthrough.map_error(exc, call.spec.label)
            status, error = failure.status, failure.message
            yield _sse(failure.body())
        finally:
            await stream.aclose()
            cost = upstream.pricing.usage_cost(call.model, usage) if usage else None
            record_call(services, call, status, usage=usage, cost=cost, error=error)

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={**call.headers(), "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
