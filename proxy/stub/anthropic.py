"""The stub upstream's Anthropic `/v1/messages` route (plain and streamed).

litellm reaches Anthropic-family models through their native Messages API;
this route lets tests see exactly what it sent (thinking blocks, cache_control,
tool_use / tool_result). The reply is the stub's usual one, computed on a chat
view of the request: an echo of the last user text or tool result, a `tool_use`
when tools are offered and the last message is the user's text, and — when the
request enables `thinking` — a thinking block with a signature before it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

Reply = dict[str, Any]


def _block_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def chat_view(body: dict[str, Any]) -> dict[str, Any]:
    """The request as the stub's chat responder reads it: roles, last text, tools."""
    messages: list[dict[str, Any]] = []
    for msg in body.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        results = (
            [b for b in content or () if isinstance(b, dict) and b.get("type") == "tool_result"]
            if isinstance(content, list)
            else []
        )
        for result in results:
            messages.append({"role": "tool", "content": _block_text(result.get("content"))})
        text = _block_text(content)
        if text or not results:
            messages.append({"role": msg.get("role"), "content": text})
    view: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    tools = [t for t in body.get("tools") or () if isinstance(t, dict) and t.get("name")]
    if tools:
        view["tools"] = [{"type": "function", "function": {"name": tools[0]["name"]}}]
    return view


def _content(body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if isinstance(body.get("thinking"), dict) and body["thinking"].get("type") == "enabled":
        thought = "stub thinking about the request"
        signature = hashlib.sha256(json.dumps(body.get("messages")).encode()).hexdigest()
        blocks.append({"type": "thinking", "thinking": thought, "signature": f"sig-{signature}"})
    if reply.get("content"):
        blocks.append({"type": "text", "text": reply["content"]})
    for call in reply.get("tool_calls") or ():
        fn = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_{call.get('id')}",
                "name": fn.get("name"),
                "input": json.loads(fn.get("arguments") or "{}"),
            }
        )
    return blocks


def _usage(body: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, int]:
    size = len(json.dumps(body.get("messages"))) + len(json.dumps(body.get("system") or ""))
    return {
        "input_tokens": max(1, size // 4),
        "output_tokens": max(1, len(json.dumps(blocks)) // 4),
    }


def _event(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()


async def _stream(message: dict[str, Any]) -> AsyncIterator[bytes]:
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    yield _event("message_start", {"message": start})
    yield _event("ping", {})
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield _event(
                "content_block_start",
                {"index": index, "content_block": {"type": "text", "text": ""}},
            )
            text = block["text"]
            step = max(1, len(text) // 3)
            for i in range(0, len(text), step):
                delta = {"type": "text_delta", "text": text[i : i + step]}
                yield _event("content_block_delta", {"index": index, "delta": delta})
        elif block["type"] == "thinking":
            empty = {"type": "thinking", "thinking": "", "signature": ""}
            yield _event("content_block_start", {"index": index, "content_block": empty})
            delta = {"type": "thinking_delta", "thinking": block["thinking"]}
            yield _event("content_block_delta", {"index": index, "delta": delta})
            delta = {"type": "signature_delta", "signature": block["signature"]}
            yield _event("content_block_delta", {"index": index, "delta": delta})
        else:
            begun = {**block, "input": {}}
            yield _event("content_block_start", {"index": index, "content_block": begun})
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            yield _event("content_block_delta", {"index": index, "delta": delta})
        yield _event("content_block_stop", {"index": index})
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield _event(
        "message_delta", {"delta": stop, "usage": {"output_tokens": usage["output_tokens"]}}
    )
    yield _event("message_stop", {})


async def anthropic_messages(
    request: Request,
    received: Callable[[Request], Awaitable[Any]],
    reply_for: Callable[[dict[str, Any]], Reply],
) -> Response:
    """`received` records the request (and may answer a fault); `reply_for` picks the reply."""
    got = await received(request)
    if isinstance(got, Response):
        return got
    body = got[0]
    reply = reply_for(chat_view(body))
    blocks = _content(body, reply)
    message = {
        "id": f"msg_stub{abs(hash(json.dumps(body, sort_keys=True))) % 10**8}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "stub"),
        "content": blocks,
        "stop_reason": "tool_use" if reply.get("tool_calls") else "end_turn",
        "stop_sequence": None,
        "usage": _usage(body, blocks),
    }
    if body.get("stream"):
        return StreamingResponse(_stream(message), media_type="text/event-stream")
    return JSONResponse(message)
