"""Anthropic Messages (`POST /v1/messages`) at the edge: in and out of chat form.

The request becomes the internal chat-completions request (system message,
user / assistant / tool messages, `tool_calls`), so sessions, memory and
budgets work on it exactly as on chat; the chat answer is turned back into an
Anthropic message (`proxy.messages_answer`), and its stream into Anthropic's
events (`proxy.messages_stream`).

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

from fastapi.responses import Response

from proxy.errors import ProxyError
from proxy.messages_answer import arguments_of, chat_to_message, error_response
from proxy.messages_stream import MessagesStream
from proxy.wire import StreamEncoder

_THINKING = frozenset({"thinking", "redacted_thinking"})


def _bad(message: str, param: str) -> ProxyError:
    return ProxyError(400, f"{param}: {message}", param=param, code="invalid_value")


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


# --- for clients: chat → an Anthropic request ------------------------------------------


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
                        "input": arguments_of(fn.get("arguments")),
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


# --- the wire format ------------------------------------------------------------------


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
