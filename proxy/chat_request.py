"""Parse and validate a chat-completions body into a `ChatRequest`.

Validation is explicit (not a pydantic model of the whole body) so that every
field we don't know passes through untouched, and every rejection names the
offending parameter, as OpenAI does: `messages[3].role`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proxy.errors import ProxyError

ROLES = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
SYSTEM_ROLES = frozenset({"system", "developer"})
PART_TYPES = frozenset(
    {"text", "image_url", "input_audio", "file", "refusal", "input_text", "image", "audio"}
)


_PLAIN_KEYS = frozenset({"role", "content", "name"})
_PLAIN_ROLES = frozenset({"system", "developer", "user", "assistant"})


@dataclass(slots=True)
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any]  # every other field, forwarded unchanged
    stream: bool
    body: dict[str, Any]

    @property
    def requested_output(self) -> int | None:
        for key in ("max_completion_tokens", "max_tokens"):
            value = self.params.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None


def _bad(message: str, param: str) -> ProxyError:
    return ProxyError(400, message, param=param, code="invalid_value")


def _check_content(content: Any, where: str, role: str, has_tool_calls: bool) -> None:
    if content is None:
        if role == "assistant" and has_tool_calls:
            return
        if role == "assistant":
            return  # OpenAI accepts a null assistant content (e.g. refusals)
        raise _bad(f"{where}.content is required for role '{role}'", f"{where}.content")
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _bad(
            f"{where}.content must be a string or a list of content parts", f"{where}.content"
        )
    for j, part in enumerate(content):
        pw = f"{where}.content[{j}]"
        if not isinstance(part, dict):
            raise _bad(f"{pw} must be an object", pw)
        ptype = part.get("type")
        if not isinstance(ptype, str) or ptype not in PART_TYPES:  # a list is unhashable
            raise _bad(f"{pw}.type: unknown content part type {ptype!r}", f"{pw}.type")
        if ptype == "text" and not isinstance(part.get("text"), str):
            raise _bad(f"{pw}.text must be a string", f"{pw}.text")
        if ptype == "image_url":
            url = part.get("image_url")
            if not (isinstance(url, dict) and isinstance(url.get("url"), str)) and not isinstance(
                url, str
            ):
                raise _bad(f"{pw}.image_url.url must be a string", f"{pw}.image_url")


def _check_message(msg: Any, i: int) -> None:
    where = f"messages[{i}]"
    if not isinstance(msg, dict):
        raise _bad(f"{where} must be an object", where)
    role = msg.get("role")
    if not isinstance(role, str) or role not in ROLES:  # a list or object is unhashable
        raise _bad(
            f"{where}.role: invalid role {role!r}; expected one of "
            "system, developer, user, assistant, tool",
            f"{where}.role",
        )
    tool_calls = msg.get("tool_calls")
    if tool_calls is not None:
        if role != "assistant" or not isinstance(tool_calls, list):
            raise _bad(f"{where}.tool_calls must be a list on an assistant message", where)
        for j, call in enumerate(tool_calls):
            if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                raise _bad(f"{where}.tool_calls[{j}].id must be a string", f"{where}.tool_calls")
            fn = call.get("function")
            if fn is not None and not (
                isinstance(fn, dict)
                and isinstance(fn.get("name", ""), str)
                and isinstance(fn.get("arguments", ""), str)
            ):
                raise _bad(
                    f"{where}.tool_calls[{j}].function must be an object with string "
                    "name and arguments",
                    f"{where}.tool_calls[{j}].function",
                )
    if role == "tool" and not isinstance(msg.get("tool_call_id"), str):
        raise _bad(f"{where}.tool_call_id is required for role 'tool'", f"{where}.tool_call_id")
    _check_content(msg.get("content"), where, role, bool(tool_calls))
    name = msg.get("name")
    if name is not None and not isinstance(name, str):
        raise _bad(f"{where}.name must be a string", f"{where}.name")


def parse_chat_request(
    body: Any, *, max_messages: int, seen: Callable[[list[Any]], range] | None = None
) -> ChatRequest:
    """Validate `body`; `seen(messages)` may name messages already validated.

    A client that keeps its history resends every earlier message on each
    request; `seen` (the conversation cache) recognises those it validated
    before, so only the rest is checked here.
    """
    if not isinstance(body, dict):
        raise ProxyError(400, "request body must be a JSON object", code="invalid_json")
    model = body.get("model")
    if model is None:
        raise ProxyError(400, "you must provide a model parameter", param="model", code="missing")
    if not isinstance(model, str) or not model:
        raise _bad("model must be a non-empty string", "model")
    messages = body.get("messages")
    if messages is None:
        raise ProxyError(400, "messages is required", param="messages", code="missing")
    if not isinstance(messages, list):
        raise _bad("messages must be a list of message objects", "messages")
    if not messages:
        raise _bad("messages must contain at least one message", "messages")
    if len(messages) > max_messages:
        raise _bad(f"too many messages: {len(messages)} > {max_messages}", "messages")
    known = seen(messages) if seen is not None else range(0)
    for i in (*range(known.start), *range(known.stop, len(messages))):
        msg = messages[i]
        # Fast path for the plain text turns that make up long histories.
        if (
            type(msg) is dict
            and msg.keys() <= _PLAIN_KEYS
            and type(msg.get("content")) is str
            and type(msg.get("role")) is str
            and msg.get("role") in _PLAIN_ROLES
            and type(msg.get("name", "")) is str
        ):
            continue
        _check_message(msg, i)
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise _bad("stream must be a boolean", "stream")
    for key in ("max_tokens", "max_completion_tokens", "n"):
        value = body.get(key)
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 0
        ):
            raise _bad(f"{key} must be a non-negative integer", key)
    params = {k: v for k, v in body.items() if k not in ("model", "messages")}
    return ChatRequest(model, messages, params, bool(stream), body)


def message_text(msg: dict[str, Any]) -> str:
    """Plain text of a message: content parts joined, tool-call arguments included."""
    content = msg.get("content")
    parts: list[str] = []
    if isinstance(content, str):
        parts.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                text = part.get("text") or part.get("refusal")
                if isinstance(text, str):
                    parts.append(text)
    for call in msg.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            parts.append(f"{fn.get('name', '')}({fn.get('arguments', '')})")
    return "\n".join(parts)


# One encoder for every hash: `json.dumps` with options builds a new one per call,
# which costs more than encoding a short message. Its output is the same.
_HASH_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def message_hash(msg: dict[str, Any]) -> str:
    """Identity of a message for prefix matching: what it says, not how it's encoded."""
    essential = {k: msg.get(k) for k in ("role", "content", "tool_calls", "tool_call_id", "name")}
    if essential["role"] == "assistant" and essential["tool_calls"]:
        # Providers and SDKs re-serialise tool calls (extra null fields); keep what matters.
        essential["tool_calls"] = [
            {
                "id": c.get("id"),
                "name": (c.get("function") or {}).get("name"),
                "arguments": (c.get("function") or {}).get("arguments"),
            }
            for c in essential["tool_calls"]
        ]
    if essential["role"] == "assistant" and not essential["content"]:
        essential["content"] = None
    blob = _HASH_ENCODER.encode(essential)
    return hashlib.blake2b(blob.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def chain_hashes(hashes: list[str], previous: str = "") -> list[str]:
    out = []
    for h in hashes:
        previous = hashlib.blake2b((previous + h).encode(), digest_size=16).hexdigest()
        out.append(previous)
    return out
