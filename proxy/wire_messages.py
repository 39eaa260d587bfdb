"""Anthropic Messages (`POST /v1/messages`) at the edge: in and out of chat form.

The request becomes the internal chat-completions request (system message,
user / assistant / tool messages, `tool_calls`), so sessions, memory and
budgets work on it exactly as on chat; the chat answer is turned back into an
Anthropic message, and its stream into Anthropic's events.

Kept for Anthropic-family upstreams (litellm speaks their native Messages API
and turns chat messages back into blocks): `thinking` / `redacted_thinking`
blocks ride on the assistant message as litellm's `thinking_blocks`, copied
unchanged (signature and text byte for byte); `cache_control` stays on system,
text and tool-result blocks. Dropped for any other upstream, which could not
verify an Anthropic signature and rejects unknown fields: thinking blocks,
`cache_control`, `thinking`, `top_k`.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi.responses import JSONResponse, Response

from proxy.errors import ProxyError
from proxy.wire import StreamEncoder, sse

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}
_STOP_REASONS = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "content_filter": "refusal",
}
_THINKING = frozenset({"thinking", "redacted_thinking"})
# Keys litellm adds to a thinking block it streams or returns; not the client's.
_LITELLM_BLOCK_KEYS = frozenset({"index", "provider_specific_fields"})


def _bad(message: str, param: str) -> ProxyError:
    return ProxyError(400, f"{param}: {message}", param=param, code="invalid_value")


def error_body(error: ProxyError) -> dict[str, Any]:
    """Anthropic's error shape: `{"type": "error", "error": {"type", "message"}}`."""
    kind = _ERROR_TYPES.get(
        error.status, "api_error" if error.status >= 500 else "invalid_request_error"
    )
    return {"type": "error", "error": {"type": kind, "message": error.message}}


def error_response(error: ProxyError, headers: dict[str, str] | None = None) -> JSONResponse:
    merged = {**error.headers, **(headers or {})}
    return JSONResponse(error_body(error), status_code=error.status, headers=merged)


# --- request: Anthropic → chat ---------------------------------------------------------


def _text_part(block: dict[str, Any], where: str, keep_cache: bool) -> dict[str, Any]:
    if not isinstance(block.get("text"), str):
        raise _bad("text must be a string", f"{where}.text")
    part: dict[str, Any] = {"type": "text", "text": block["text"]}
    if keep_cache and "cache_control" in block:
        part["cache_control"] = block["cache_control"]
    return part


def _image_part(block: dict[str, Any], where: str) -> dict[str, Any]:
    source = block.get("source")
    if isinstance(source, dict) and source.get("type") == "base64":
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
    elif isinstance(source, dict) and source.get("type") == "url":
        url = str(source.get("url"))
    else:
        raise _bad("source must be a base64 or url image source", f"{where}.source")
    return {"type": "image_url", "image_url": {"url": url}}


def _system(system: Any, keep_cache: bool) -> list[dict[str, Any]]:
    if system is None:
        return []
    if isinstance(system, str):
        return [{"role": "system", "content": system}] if system else []
    if not isinstance(system, list):
        raise _bad("must be a string or a list of text blocks", "system")
    parts = []
    for j, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise _bad("only text blocks are allowed", f"system[{j}]")
        parts.append(_text_part(block, f"system[{j}]", keep_cache))
    if not parts:
        return []
    if not any("cache_control" in p for p in parts):
        return [{"role": "system", "content": "\n".join(p["text"] for p in parts)}]
    return [{"role": "system", "content": parts}]


def _tool_result(block: dict[str, Any], where: str, keep_cache: bool) -> dict[str, Any]:
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str):
        raise _bad("tool_use_id must be a string", f"{where}.tool_use_id")
    content = block.get("content", "")
    out: Any
    if isinstance(content, str):
        out = content
    elif isinstance(content, list):
        out = []
        for k, inner in enumerate(content):
            kind = inner.get("type") if isinstance(inner, dict) else None
            if kind == "text":
                out.append(_text_part(inner, f"{where}.content[{k}]", keep_cache))
            elif kind == "image":
                out.append(_image_part(inner, f"{where}.content[{k}]"))
            else:
                raise _bad(f"unsupported block type {kind!r}", f"{where}.content[{k}].type")
        if all(p["type"] == "text" and "cache_control" not in p for p in out):
            out = "".join(p["text"] for p in out)
    else:
        raise _bad("must be a string or a list of blocks", f"{where}.content")
    if block.get("is_error") and isinstance(out, str):
        out = f"Error: {out}"
    return {"role": "tool", "tool_call_id": call_id, "content": out}


def _user(msg: dict[str, Any], where: str, keep_cache: bool) -> list[dict[str, Any]]:
    content = msg.get("content")
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    results: list[dict[str, Any]] = []
    parts: list[dict[str, Any]] = []
    for j, block in enumerate(content or ()):
        kind = block.get("type")
        bw = f"{where}.content[{j}]"
        if kind == "tool_result":
            results.append(_tool_result(block, bw, keep_cache))
        elif kind == "text":
            parts.append(_text_part(block, bw, keep_cache))
        elif kind == "image":
            parts.append(_image_part(block, bw))
        else:
            raise _bad(f"unsupported block type {kind!r} in a user message", f"{bw}.type")
    # Tool results answer the previous assistant turn: they come first, as tool messages.
    out = results
    if parts:
        plain = all(p["type"] == "text" and "cache_control" not in p for p in parts)
        text = "".join(p["text"] for p in parts) if plain else None
        out = [*out, {"role": "user", "content": text if plain else parts}]
    return out


def _assistant(msg: dict[str, Any], where: str, keep_thinking: bool) -> dict[str, Any]:
    content = msg.get("content")
    if isinstance(content, str):
        return {"role": "assistant", "content": content}
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    for j, block in enumerate(content or ()):
        kind = block.get("type")
        bw = f"{where}.content[{j}]"
        if kind == "text":
            texts.append(_text_part(block, bw, False)["text"])
        elif kind == "tool_use":
            if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
                raise _bad("tool_use needs a string id and name", bw)
            arguments = json.dumps(block.get("input") or {}, ensure_ascii=False)
            calls.append(
                {
                    "id": block["id"],
                    "type": "function",
                    "function": {"name": block["name"], "arguments": arguments},
                }
            )
        elif kind in _THINKING:
            thinking.append(dict(block))  # verbatim: signatures are checked upstream
        else:
            raise _bad(f"unsupported block type {kind!r} in an assistant message", f"{bw}.type")
    out: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = calls
    if thinking and keep_thinking:
        out["thinking_blocks"] = thinking
    if out["content"] is None and not calls:
        out["content"] = ""
    return out


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise _bad("must be a list", "tools")
    out = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise _bad("each tool needs a string name", f"tools[{i}]")
        if "input_schema" not in tool:
            raise _bad(
                f"tool {tool['name']!r} has no input_schema (server tools are not supported)",
                f"tools[{i}].input_schema",
            )
        fn: dict[str, Any] = {"name": tool["name"], "parameters": tool["input_schema"]}
        if tool.get("description"):
            fn["description"] = tool["description"]
        out.append({"type": "function", "function": fn})
    return out


def _tool_choice(choice: Any) -> Any:
    if not isinstance(choice, dict):
        raise _bad("must be an object", "tool_choice")
    kind = choice.get("type")
    if kind == "tool":
        return {"type": "function", "function": {"name": choice.get("name")}}
    mapped = {"auto": "auto", "any": "required", "none": "none"}.get(str(kind))
    if mapped is None:
        raise _bad(f"unknown type {kind!r}", "tool_choice.type")
    return mapped


def messages_to_chat(
    body: Any, *, anthropic_upstream: bool
) -> tuple[str, list[dict[str, Any]], dict[str, Any]]:
    """(model, chat messages, chat params) for an Anthropic Messages body."""
    if not isinstance(body, dict):
        raise ProxyError(400, "request body must be a JSON object", code="invalid_json")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("Field required (a non-empty string)", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("Field required (a non-empty list of messages)", "messages")
    chat = _system(body.get("system"), anthropic_upstream)
    for i, msg in enumerate(messages):
        where = f"messages[{i}]"
        if not isinstance(msg, dict):
            raise _bad("must be an object", where)
        role, content = msg.get("role"), msg.get("content")
        if not isinstance(content, str | list) or (
            isinstance(content, list) and not all(isinstance(b, dict) for b in content)
        ):
            raise _bad("content must be a string or a list of blocks", f"{where}.content")
        if role == "user":
            chat += _user(msg, where, anthropic_upstream)
        elif role == "assistant":
            chat.append(_assistant(msg, where, anthropic_upstream))
        else:
            raise _bad(f"invalid role {role!r}; expected user or assistant", f"{where}.role")
    return model, chat, _params(body, anthropic_upstream)


def _params(body: dict[str, Any], anthropic_upstream: bool) -> dict[str, Any]:
    max_tokens = body.get("max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise _bad("Field required (a positive integer)", "max_tokens")
    params: dict[str, Any] = {"max_tokens": max_tokens}
    for key in ("temperature", "top_p"):
        if body.get(key) is not None:
            params[key] = body[key]
    if body.get("stop_sequences"):
        params["stop"] = body["stop_sequences"]
    if body.get("tools"):
        params["tools"] = _tools(body["tools"])
    if body.get("tool_choice") is not None:
        params["tool_choice"] = _tool_choice(body["tool_choice"])
    metadata = body.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("user_id"), str):
        params["user"] = metadata["user_id"]
    if anthropic_upstream:
        for key in ("thinking", "top_k"):
            if body.get(key) is not None:
                params[key] = body[key]
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("must be a boolean", "stream")
    if stream:
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
    return params


# --- answer: chat → Anthropic ------------------------------------------------------------


def _thinking_block(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if k not in _LITELLM_BLOCK_KEYS}


def _arguments(text: str | None) -> Any:
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
    content: list[dict[str, Any]] = [_thinking_block(b) for b in msg.get("thinking_blocks") or ()]
    if msg.get("content"):
        content.append({"type": "text", "text": msg["content"]})
    for call in msg.get("tool_calls") or ():
        fn = call.get("function") or {}
        content.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": fn.get("name"),
                "input": _arguments(fn.get("arguments")),
            }
        )
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": _STOP_REASONS.get(choice.get("finish_reason") or "stop", "end_turn"),
        "stop_sequence": None,
        "usage": usage_of(body.get("usage")),
    }


def chat_to_anthropic(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The reverse of `messages_to_chat` (for clients: eval, tests): {system, messages}."""
    system = [m for m in messages if m.get("role") in ("system", "developer")]
    out: list[dict[str, Any]] = []
    for msg in messages[len(system) :]:
        role = msg.get("role")
        if role == "tool":
            block = {
                "type": "tool_result",
                "tool_use_id": msg.get("tool_call_id"),
                "content": msg.get("content") or "",
            }
            if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list):
                out[-1]["content"].append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif role == "assistant" and msg.get("tool_calls"):
            blocks: list[dict[str, Any]] = []
            if msg.get("content"):
                blocks.append({"type": "text", "text": msg["content"]})
            for call in msg["tool_calls"]:
                fn = call.get("function") or {}
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id"),
                        "name": fn.get("name"),
                        "input": _arguments(fn.get("arguments")),
                    }
                )
            out.append({"role": "assistant", "content": blocks})
        elif (
            role == "user"
            and out
            and out[-1]["role"] == "user"
            and isinstance(out[-1]["content"], list)
        ):
            text = msg.get("content")
            out[-1]["content"].append(
                {"type": "text", "text": text if isinstance(text, str) else ""}
            )
        else:
            out.append({"role": role, "content": msg.get("content") or ""})
    body: dict[str, Any] = {"messages": out}
    if system:
        body["system"] = "\n".join(str(m.get("content") or "") for m in system)
    return body


class MessagesStream:
    """Chat chunks in, Anthropic stream events out, block by block as they arrive."""

    def __init__(self, model: str, message_id: str) -> None:
        self.model, self.message_id = model, message_id
        self.started = False
        self.index = -1
        self.open: str | None = None  # "text" | "thinking" | "tool:<n>"
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None

    def _start(self) -> bytes:
        self.started = True
        message: dict[str, Any] = {
            "id": self.message_id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        return sse({"type": "message_start", "message": message}, "message_start") + sse(
            {"type": "ping"}, "ping"
        )

    def _close(self) -> bytes:
        if self.open is None:
            return b""
        self.open = None
        return sse({"type": "content_block_stop", "index": self.index}, "content_block_stop")

    def _begin(self, key: str, block: dict[str, Any]) -> bytes:
        out = self._close()
        self.index += 1
        self.open = key
        start = {"type": "content_block_start", "index": self.index, "content_block": block}
        return out + sse(start, "content_block_start")

    def _delta(self, delta: dict[str, Any]) -> bytes:
        event = {"type": "content_block_delta", "index": self.index, "delta": delta}
        return sse(event, "content_block_delta")

    def chunk(self, data: dict[str, Any]) -> bytes:
        out = b"" if self.started else self._start()
        if data.get("usage"):
            self.usage = data["usage"]
        for choice in data.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue
            self.finish = choice.get("finish_reason") or self.finish
            delta = choice.get("delta") or {}
            for block in delta.get("thinking_blocks") or ():
                out += self._thinking(block)
            if delta.get("content"):
                if self.open != "text":
                    out += self._begin("text", {"type": "text", "text": ""})
                out += self._delta({"type": "text_delta", "text": delta["content"]})
            for call in delta.get("tool_calls") or ():
                out += self._tool(call)
        return out

    def _thinking(self, block: dict[str, Any]) -> bytes:
        out = b""
        if block.get("type") == "redacted_thinking":
            out += self._begin("redacted", _thinking_block(block))
            return out + self._close()
        if self.open != "thinking":
            out += self._begin("thinking", {"type": "thinking", "thinking": "", "signature": ""})
        if block.get("thinking"):
            out += self._delta({"type": "thinking_delta", "thinking": block["thinking"]})
        if block.get("signature"):
            out += self._delta({"type": "signature_delta", "signature": block["signature"]})
        return out

    def _tool(self, call: dict[str, Any]) -> bytes:
        out = b""
        key = f"tool:{call.get('index', 0)}"
        fn = call.get("function") or {}
        if self.open != key:
            block: dict[str, Any] = {"type": "tool_use", "id": call.get("id")}
            block.update(name=fn.get("name"), input={})
            out += self._begin(key, block)
        if fn.get("arguments"):
            out += self._delta({"type": "input_json_delta", "partial_json": fn["arguments"]})
        return out

    def end(self, answer: dict[str, Any]) -> bytes:
        out = (b"" if self.started else self._start()) + self._close()
        stop = _STOP_REASONS.get(self.finish or "stop", "end_turn")
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": usage_of(self.usage),
        }
        return out + sse(delta, "message_delta") + sse({"type": "message_stop"}, "message_stop")

    def fail(self, error: ProxyError) -> bytes:
        return sse(error_body(error), "error")


class MessagesWire:
    """The `WireFormat` of `/v1/messages`."""

    name = "messages"

    def __init__(self, model: str, request_id: str) -> None:
        self.model = model
        self.message_id = f"msg_{request_id}"

    def render(self, body: dict[str, Any]) -> dict[str, Any]:
        return chat_to_message(body, self.model, self.message_id)

    def error(self, error: ProxyError, headers: dict[str, str]) -> Response:
        return error_response(error, headers)

    def stream(self) -> StreamEncoder:
        return MessagesStream(self.model, self.message_id)
