"""Every request the stub upstream receives, recorded (the assertion point of
the tests), and the injected fault it takes: an HTTP status (with Retry-After),
a delay, a reset connection (a stream cut is the chat route's).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from proxy.stub.replies import last_prompt_text
from proxy.stub.state import Fault, RecordedRequest, StubState


async def _reset_body() -> AsyncIterator[bytes]:
    raise ConnectionResetError("stub: injected reset")
    yield b""  # pragma: no cover - makes this an async generator


async def _body_of(request: Request, raw: bytes) -> dict[str, Any]:
    """JSON, or a multipart form (an upload as its name, size, type and bytes), or {}."""
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        body: dict[str, Any] = {}
        async with request.form() as form:
            for key, value in form.multi_items():
                if isinstance(value, str):
                    body[key] = value
                    continue
                content = await value.read()
                body[key] = {
                    "filename": value.filename,
                    "bytes": len(content),
                    "content_type": value.content_type,
                    "content": content,
                }
        return body
    if not raw:
        return {}
    parsed = json.loads(raw)
    if not isinstance(parsed, dict):
        raise ValueError("not an object")
    return parsed


class Recorder:
    """Every request recorded, and the injected fault it takes (`StubState`)."""

    def __init__(self, state: StubState) -> None:
        self.state = state

    def _next_fault(self, path: str, body: dict[str, Any]) -> Fault | None:
        with self.state.lock:
            for fault in self.state.faults:
                if fault.contains is not None and fault.contains not in last_prompt_text(body):
                    continue
                if fault.path is None or fault.path == path:
                    self.state.faults.remove(fault)
                    return fault
            return None

    async def received(
        self, request: Request
    ) -> tuple[dict[str, Any], Fault | None, RecordedRequest] | Response:
        """Record the request and take its fault: a Response when the fault answers."""
        raw = await request.body()
        try:
            body = await _body_of(request, raw)
        except ValueError:
            return JSONResponse({"error": {"message": "bad json"}}, status_code=400)
        recorded = RecordedRequest(request.url.path, dict(request.headers), body, raw, time.time())
        with self.state.lock:
            self.state.received.append(recorded)
        fault = self._next_fault(request.url.path, body)
        if fault and fault.delay_s:
            await asyncio.sleep(fault.delay_s)
        if fault and fault.reset:
            # Headers go out, then the connection drops: what a client sees when
            # a load balancer or the provider resets a connection mid-answer.
            return StreamingResponse(_reset_body(), media_type="application/json")
        if fault and fault.status:
            headers = {"retry-after": fault.retry_after} if fault.retry_after else {}
            err = {"message": fault.message, "type": "stub_error", "param": None, "code": None}
            return JSONResponse({"error": err}, status_code=fault.status, headers=headers)
        return body, fault, recorded
