"""An Anthropic message from a chat completion, and Anthropic's error shape.

Thinking blocks litellm returned ride back to the client as they came, less
the keys litellm adds (`thinking_block`); the chat finish reason becomes
Anthropic's stop reason (`STOP_REASONS`); usage keeps the cache counts.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse

from proxy.errors import ProxyError

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
# Keys litellm adds to a thinking block it streams or returns; not the client's.
_LITELLM_BLOCK_KEYS = frozenset({"index", "provider_specific_fields"})


def error_body(error: ProxyError) -> dict[str, Any]:
    """Anthropic's error shape: `{"type": "error", "error": {"type", "message"}}`."""
    kind = _ERROR_TYPES.get(
        error.status, "api_error" if error.status >= 500 else "invalid_request_error"
    )
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def error_response(error: ProxyError, headers: dict[str, str] | None = None) -> JSONResponse:
    merged = {**error.headers, **(headers or {})}
    return JSONResponse(error_body(error), status_code=error.status, headers=merged)


def thinking_block(block: dict[str, Any]) -> dict[str, Any]:
    """A thinking block as the client sent or will verify it (litellm's keys left out)."""
    return {k: v for k, v in block.items() if k not in _LITELLM_BLOCK_KEYS}


def arguments_of(text: str | None) -> Any:
    """A tool call's JSON arguments as a `tool_use` input object."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {"_raw": text}
    return value if isinstance(value, dict) else {"value": value}


def usage_of(usage: dict[str, Any] | None) -> dict[str, int]:
    usage = usage or {}
    out = {
        "input_tokens": int(usage.get("prompt_tokens") or 0),
        "output_tokens": int(usage.get("completion_tokens") or 0),
    }
    for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        if isinstance(usage.get(key), int):
            out[key] = usage[key]
    return out


def chat_to_message(body: dict[str, Any], model: str, message_id: str) -> dict[str, Any]:
    """An Anthropic message from a chat completion (choice 0)."""
    choice = (body.get("choices") or [{}])[0]
    msg = choice.get("message") or {}
    content: list[dict[str, Any]] = [thinking_block(b) for b in msg.get("thinking_blocks") or ()]
    if msg.get("content"):
        content.append({"type": "text", "text": msg["content"]})
    for call in msg.get("tool_calls") or ():
        fn = call.get("function") or {}
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": fn.get("name"),
                "input": arguments_of(fn.get("arguments")),
            }
        )
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": STOP_REASONS.get(choice.get("finish_reason") or "stop", "end_turn"),
        "stop_sequence": None,
        "usage": usage_of(body.get("usage")),
    }
