"""Streaming: relay the provider's SSE chunks as they arrive.

No buffering (`X-Accel-Buffering: no`); the answer is accumulated on the side
and stored before `data: [DONE]` so the client's next request finds it. A cut
stream ends with an error event and is not recorded as a complete answer; a
client that disconnects cancels the upstream call.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from fastapi.responses import Response, StreamingResponse

from proxy.chat.plan import RequestPlan
from proxy.errors import ProxyError
from proxy.records import Outcome
from proxy.upstream_wire import RoutedStream
from proxy.wire import CHAT_WIRE, WireFormat

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


class AnswerAccumulator:
    """Rebuilds the assistant message from streamed deltas (choice 0)."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.tool_calls: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, Any] | None = None
        self.finish_reason: str | None = None

    def add(self, chunk: dict[str, Any]) -> None:
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str):
                self.content.append(delta["content"])
            for call in delta.get("tool_calls") or ():
                slot = self.tool_calls.setdefault(
                    call.get("index", 0),
                    {"id": None, "type": "function", "function": {"name": "", "arguments": ""}},
                )
                if call.get("id"):
                    slot["id"] = call["id"]
                fn = call.get("function") or {}
                if fn.get("name"):
                    slot["function"]["name"] += fn["name"]
                if fn.get("arguments"):
                    slot["function"]["arguments"] += fn["arguments"]

    def message(self) -> dict[str, Any]:
        text = "".join(self.content)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if self.tool_calls:
            message["tool_calls"] = [self.tool_calls[i] for i in sorted(self.tool_calls)]
        elif message["content"] is None:
            message["content"] = ""
        return message


async def _close_stream(stream: Any) -> None:
    closer = getattr(stream, "aclose", None)
    if closer is not None:
        await closer()


async def stream_completion(
    pipeline: Pipeline, plan: RequestPlan, wire: WireFormat = CHAT_WIRE
) -> Response:
    """Open the upstream stream (its first chunk waited for, retried or fallen
    back), wait for the client's turns to be stored, then relay the answer
    (`_relay`); a failure before the first byte is an error response."""
    upstream = pipeline.upstream
    call = upstream.build_call(
        plan.target,
        plan.forwarded,
        plan.params,
        True,
        about=plan,
        **plan.call_args(),
    )
    started = asyncio.get_running_loop().time()
    compare = pipeline.start_compare(plan)
    extra: dict[str, Any] = {"compare_task": compare} if compare is not None else {}
    if wire is not CHAT_WIRE:
        extra["wire"] = wire.name
    try:
        stream = await upstream.open_stream(call)
    except ProxyError as exc:
        if exc.route:
            extra["upstream"] = exc.route  # retries and fallbacks tried
        pipeline.finish(plan, Outcome(exc.status, error=exc.message, extra=extra))
        return wire.error(exc, plan.headers())
    except BaseException:
        pipeline.abandon(plan)
        raise
    extra["upstream"] = stream.route  # which model answered, after which attempts
    try:
        # The client's turns were written beside the call: stored before the first
        # byte of the answer goes out.
        unstored = await pipeline.turns_stored(plan)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            await _close_stream(stream)
        if not isinstance(exc, ProxyError):
            pipeline.abandon(plan)
            raise
        pipeline.finish(plan, Outcome(exc.status, error=exc.message, extra=extra))
        return wire.error(exc, plan.headers())
    headers = {**plan.headers(unstored), "X-Accel-Buffering": "no", "Cache-Control": "no-cache"}
    return StreamingResponse(
        _relay(pipeline, plan, stream, wire, started, extra, unstored),
        media_type="text/event-stream",
        headers=headers,
    )


async def _relay(
    pipeline: Pipeline,
    plan: RequestPlan,
    stream: RoutedStream,
    wire: WireFormat,
    started: float,
    extra: dict[str, Any],
    unstored: str | None,
) -> AsyncIterator[bytes]:
    """The answer's events as they come, re-encoded for the client's wire; the
    answer is stored after its last chunk, the stream closed and the request
    recorded however it ends (`unstored`: why the client's turns were not
    stored, if they were not: then the answer is not either)."""
    upstream = pipeline.upstream
    acc = AnswerAccumulator()
    encoder = wire.stream()
    answer: dict[str, Any] | None = None
    error: str | None = None
    degraded = unstored
    status = 200
    try:
        async for chunk in stream:
            data = upstream.chunk_dict(chunk)
            acc.add(data)
            events = encoder.chunk(data)
            if events:
                yield events
        answer = acc.message()
        if degraded is None:  # after turns that are not stored, the answer is not either
            degraded = await pipeline.store_answer(plan, answer)
        yield encoder.end(answer)
    except asyncio.CancelledError:
        error, status, answer = "client disconnected", 499, None
        raise
    except Exception as exc:
        mapped = exc if isinstance(exc, ProxyError) else upstream.map_error(exc)
        error, status, answer = mapped.message, mapped.status, None
        yield encoder.fail(mapped)
    finally:
        # Closing a broken stream may fail; there is nothing left to save.
        with contextlib.suppress(Exception):
            await _close_stream(stream)
        elapsed = (asyncio.get_running_loop().time() - started) * 1000
        response = {"streamed": True, "message": answer, "finish_reason": acc.finish_reason}
        outcome = Outcome(
            status,
            answer,
            response,
            error,
            acc.usage,
            upstream_ms=elapsed,
            extra=extra,
            degraded=degraded,
        )
        if acc.usage and stream.route.get("model"):
            outcome.cost_usage = (str(stream.route["model"]), acc.usage)
        pipeline.finish(plan, outcome)
