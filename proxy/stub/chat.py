"""The stub upstream's chat completions (plain, or streamed with an injected cut
on demand), Anthropic's Messages (`proxy.stub.anthropic`) and the model list.

For streams it records how each one ended (`stream_end`), so a test can see
that a client's disconnect reached the provider.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from proxy.stub.recorder import Recorder
from proxy.stub.replies import reply_for
from proxy.stub.state import RecordedRequest, Reply, StubState
from proxy.stub.usage import cached_usage


class _Cut(ConnectionResetError):
    """An injected mid-stream cut (told apart from a client's disconnect)."""


class ChatRoutes:
    """Chat completions (streamed or not), Anthropic's Messages, the model list."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.state = recorder.state

    async def chat(self, request: Request) -> Response:
        received = await self.recorder.received(request)
        if isinstance(received, Response):
            return received
        body, fault, recorded = received
        reply = reply_for(self.state, body)
        model = body.get("model", "stub")
        usage = cached_usage(self.state, body, reply, str(model))
        if body.get("stream"):
            cut = fault.cut_after_chunks if fault else None
            return StreamingResponse(
                _stream(self.state, body, reply, model, cut, recorded, usage),
                media_type="text/event-stream",
            )
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        message = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = reply["tool_calls"]
        return JSONResponse(
            {
                "id": f"chatcmpl-stub{len(self.state.received)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
        )

    async def anthropic(self, request: Request) -> Response:
        from proxy.stub.anthropic import anthropic_messages

        return await anthropic_messages(
            request, self.recorder.received, partial(reply_for, self.state)
        )

    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "stub", "object": "model"}]})


async def _stream(
    state: StubState,
    body: dict[str, Any],
    reply: Reply,
    model: str,
    cut: int | None,
    recorded: RecordedRequest,
    usage: dict[str, Any],
) -> AsyncIterator[bytes]:
    try:
        async for part in _chunks(state, body, reply, model, cut, usage):
            yield part
        recorded.stream_end = "done"
    except _Cut:
        recorded.stream_end = "cut"
        raise
    finally:
        if recorded.stream_end is None:
            recorded.stream_end = "closed"


async def _chunks(
    state: StubState,
    body: dict[str, Any],
    reply: Reply,
    model: str,
    cut: int | None,
    usage: dict[str, Any],
) -> AsyncIterator[bytes]:
    base = {
        "id": f"chatcmpl-stub{len(state.received)}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if reply.get("tool_calls"):
        for i, call in enumerate(reply["tool_calls"]):
            deltas.append({"tool_calls": [{"index": i, **call}]})
    else:
        text = reply.get("content") or ""
        step = max(1, len(text) // 4)
        deltas += [{"content": text[i : i + step]} for i in range(0, len(text), step)]
    finish = "tool_calls" if reply.get("tool_calls") else "stop"
    for n, delta in enumerate(deltas):
        if cut is not None and n >= cut:
            raise _Cut("stub: stream cut")
        chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
        yield f"data: {json.dumps(chunk)}\n\n".encode()
        if state.chunk_delay_s:
            await asyncio.sleep(state.chunk_delay_s)
    last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
    yield f"data: {json.dumps(last)}\n\n".encode()
    if (body.get("stream_options") or {}).get("include_usage"):
        last_chunk = {**base, "choices": [], "usage": usage}
        yield f"data: {json.dumps(last_chunk)}\n\n".encode()
    yield b"data: [DONE]\n\n"
