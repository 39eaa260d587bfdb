"""OpenAI Responses (`POST /v1/responses`) at the edge: in and out of chat form.

The request's items become the internal chat-completions request (system
from `instructions`, user / assistant messages, a `function_call` as an
assistant `tool_calls` entry and its `function_call_output` as the tool message
after it), which runs through the same pipeline as chat; the upstream is called
on chat completions and the Responses output is built from its answer.

Why not litellm's `aresponses`: memory works on chat messages, so the request
must be in chat form anyway to be assembled, and litellm's bridge for providers
without a Responses API is itself a chat call; going through chat for every
model gives one path, one budget and one record. The cost: provider-side
Responses features (built-in tools, server-held state) are not used; a
non-function tool is refused with a 400 that says so.

Reasoning items are kept verbatim in the stored conversation (and so come back
unchanged through `previous_response_id` and `GET`), but are not forwarded:
chat completions has no field for them and their encrypted content is only
readable by the provider's Responses API.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from fastapi.responses import Response

from proxy.errors import ProxyError
from proxy.ids import new_id
from proxy.wire import StreamEncoder

Item = dict[str, Any]
_ROLES = frozenset({"user", "assistant", "system", "developer"})
FINISH_STATUS = {"length": "incomplete", "content_filter": "incomplete"}


def _bad(message: str, param: str) -> ProxyError:
    return ProxyError(400, f"{param}: {message}", param=param, code="invalid_value")


# A Claude answer's thinking blocks ride in its reasoning item's `encrypted_content`
# (opaque to the client) so that they go back to Claude unchanged next turn.
_THINKING_PREFIX = "anthropic-thinking:"
_THINKING_KEYS = ("type", "thinking", "signature", "data")


def pack_thinking(blocks: list[dict[str, Any]]) -> str:
    kept = [{k: b[k] for k in _THINKING_KEYS if k in b} for b in blocks]
    return _THINKING_PREFIX + json.dumps(kept, ensure_ascii=False)


def unpack_thinking(item: Item) -> list[dict[str, Any]]:
    """The thinking blocks `pack_thinking` put in a reasoning item (else none)."""
    packed = item.get("encrypted_content")
    if not isinstance(packed, str) or not packed.startswith(_THINKING_PREFIX):
        return []
    try:
        blocks = json.loads(packed.removeprefix(_THINKING_PREFIX))
    except ValueError:
        return []
    if not isinstance(blocks, list):
        return []
    kinds = ("thinking", "redacted_thinking")
    return [b for b in blocks if isinstance(b, dict) and b.get("type") in kinds]


def reasoning_item(item_id: str, text: str, thinking: list[dict[str, Any]]) -> Item:
    item: Item = {"type": "reasoning", "id": item_id, "summary": []}
    if text:
        item["summary"] = [{"type": "summary_text", "text": text}]
    if thinking:
        item["encrypted_content"] = pack_thinking(thinking)
    return item


# --- request: Responses → chat ------------------------------------------------------------


def input_items(value: Any) -> list[Item]:
    """`input` as a list of items (a string is one user message)."""
    if isinstance(value, str):
        return [{"type": "message", "role": "user", "content": value}]
    if not isinstance(value, list) or not all(isinstance(i, dict) for i in value):
        raise _bad("must be a string or a list of input items", "input")
    return list(value)


def _part(part: Any, where: str) -> dict[str, Any]:
    if isinstance(part, dict):
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(part.get("text"), str):
            return {"type": "text", "text": part["text"]}
        if kind == "refusal":
            return {"type": "text", "text": str(part.get("refusal", ""))}
        if kind == "input_image":
            url = part.get("image_url") or part.get("file_id")
            if not isinstance(url, str):
                raise _bad("input_image needs an image_url", f"{where}.image_url")
            image: dict[str, Any] = {"url": url}
            if part.get("detail"):
                image["detail"] = part["detail"]
            return {"type": "image_url", "image_url": image}
        if kind == "input_file":
            file = {k: part[k] for k in ("file_id", "file_data", "filename") if k in part}
            return {"type": "file", "file": file}
    kind = part.get("type") if isinstance(part, dict) else None
    raise _bad(f"unsupported content part type {kind!r}", f"{where}.type")


def _message(item: Item, where: str) -> dict[str, Any]:
    role = item.get("role")
    if not isinstance(role, str) or role not in _ROLES:
        raise _bad(f"invalid role {role!r}", f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return {"role": role, "content": content}
    if not isinstance(content, list):
        raise _bad("content must be a string or a list of parts", f"{where}.content")
    parts = [_part(p, f"{where}.content[{j}]") for j, p in enumerate(content)]
    if role != "user" or all(p["type"] == "text" for p in parts):
        return {"role": role, "content": "".join(p.get("text", "") for p in parts)}
    return {"role": role, "content": parts}


def _output_text(output: Any) -> Any:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(str(p.get("text", "")) for p in output if isinstance(p, dict))
    return json.dumps(output, ensure_ascii=False)


def items_to_chat(
    items: list[Item], instructions: Any = None, *, keep_thinking: bool = False
) -> list[dict[str, Any]]:
    """Chat messages for Responses items, tool calls kept with their outputs.

    `keep_thinking` (Claude upstreams): the thinking blocks packed in a reasoning
    item go back on the assistant message after it, as litellm's `thinking_blocks`.
    """
    chat: list[dict[str, Any]] = []
    thinking: list[dict[str, Any]] = []
    if isinstance(instructions, str) and instructions:
        chat.append({"role": "system", "content": instructions})
    elif instructions is not None and not isinstance(instructions, str):
        raise _bad("must be a string", "instructions")
    for i, item in enumerate(items):
        where = f"input[{i}]"
        kind = item.get("type", "message")
        if kind == "message":
            chat.append(_message(item, where))
            if chat[-1]["role"] == "assistant" and thinking:
                chat[-1]["thinking_blocks"], thinking = thinking, []
        elif kind == "function_call":
            if not isinstance(item.get("call_id"), str) or not isinstance(item.get("name"), str):
                raise _bad("function_call needs string call_id and name", where)
            call = {
                "id": item["call_id"],
                "type": "function",
                "function": {"name": item["name"], "arguments": item.get("arguments") or ""},
            }
            last = chat[-1] if chat else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                if last["content"] == "":
                    last["content"] = None
            else:
                chat.append({"role": "assistant", "content": None, "tool_calls": [call]})
                if thinking:
                    chat[-1]["thinking_blocks"], thinking = thinking, []
        elif kind == "function_call_output":
            if not isinstance(item.get("call_id"), str):
                raise _bad("function_call_output needs a string call_id", f"{where}.call_id")
            output = _output_text(item.get("output", ""))
            chat.append({"role": "tool", "tool_call_id": item["call_id"], "content": output})
        elif kind == "reasoning":
            # Kept in the stored conversation; forwarded only as Claude's own blocks.
            if keep_thinking:
                thinking += unpack_thinking(item)
        else:
            raise _bad(f"unsupported input item type {kind!r}", f"{where}.type")
    return chat


def _tools(tools: Any) -> list[dict[str, Any]]:
    if not isinstance(tools, list):
        raise _bad("must be a list", "tools")
    out = []
    for i, tool in enumerate(tools):
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind != "function":
            raise _bad(
                f"tool type {kind!r} is not supported (memproxy forwards function tools)",
                f"tools[{i}].type",
            )
        if not isinstance(tool.get("name"), str):
            raise _bad("a function tool needs a string name", f"tools[{i}].name")
        fn = {k: tool[k] for k in ("name", "description", "parameters", "strict") if k in tool}
        out.append({"type": "function", "function": fn})
    return out


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, str):
        return choice
    if isinstance(choice, dict) and choice.get("type") == "function":
        return {"type": "function", "function": {"name": choice.get("name")}}
    raise _bad("must be auto, none, required or a function choice", "tool_choice")


def _response_format(text: Any) -> dict[str, Any] | None:
    fmt = text.get("format") if isinstance(text, dict) else None
    if not isinstance(fmt, dict) or fmt.get("type") in (None, "text"):
        return None
    if fmt.get("type") == "json_object":
        return {"type": "json_object"}
    if fmt.get("type") == "json_schema":
        schema = {k: fmt[k] for k in ("name", "schema", "strict", "description") if k in fmt}
        return {"type": "json_schema", "json_schema": schema}
    raise _bad(f"unsupported format type {fmt.get('type')!r}", "text.format.type")


def request_params(body: dict[str, Any]) -> dict[str, Any]:
    """Chat parameters for a Responses body (what chat has no field for is not sent)."""
    params: dict[str, Any] = {}
    for key in ("temperature", "top_p", "parallel_tool_calls", "user", "top_logprobs"):
        if body.get(key) is not None:
            params[key] = body[key]
    limit = body.get("max_output_tokens")
    if limit is not None:
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise _bad("must be a positive integer", "max_output_tokens")
        params["max_tokens"] = limit
    if body.get("tools"):
        params["tools"] = _tools(body["tools"])
    if body.get("tool_choice") is not None:
        params["tool_choice"] = _tool_choice(body["tool_choice"])
    fmt = _response_format(body.get("text"))
    if fmt is not None:
        params["response_format"] = fmt
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort"):
        params["reasoning_effort"] = reasoning["effort"]
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise _bad("must be a boolean", "stream")
    if stream:
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
    return params


# --- answer: chat → Responses ------------------------------------------------------------


def _usage(usage: dict[str, Any] | None) -> dict[str, Any] | None:
    if not usage:
        return None
    prompt = int(usage.get("prompt_tokens") or 0)
    completion = int(usage.get("completion_tokens") or 0)
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens") or 0
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": int(cached)},
        "output_tokens": completion,
        "output_tokens_details": {"reasoning_tokens": int(reasoning)},
        "total_tokens": prompt + completion,
    }


def message_item(item_id: str, text: str, status: str = "completed") -> Item:
    part = {"type": "output_text", "text": text, "annotations": []}
    return {
        "type": "message",
        "id": item_id,
        "status": status,
        "role": "assistant",
        "content": [part] if status == "completed" else [],
    }


def call_item(item_id: str, call: dict[str, Any], status: str = "completed") -> Item:
    fn = call.get("function") or {}
    return {
        "type": "function_call",
        "id": item_id,
        "call_id": call.get("id"),
        "name": fn.get("name"),
        "arguments": fn.get("arguments") or "",
        "status": status,
    }


def answer_items(message: dict[str, Any], response_id: str) -> list[Item]:
    """Output items for a chat assistant message: reasoning, text, then function calls."""
    base = response_id.removeprefix("resp_")
    out: list[Item] = []
    thinking = [b for b in message.get("thinking_blocks") or () if isinstance(b, dict)]
    if message.get("reasoning_content") or thinking:
        text = str(message.get("reasoning_content") or "")
        out.append(reasoning_item(f"rs_{base}", text, thinking))
    if message.get("content"):
        out.append(message_item(f"msg_{base}", str(message["content"])))
    for n, call in enumerate(message.get("tool_calls") or ()):
        out.append(call_item(f"fc_{base}_{n}", call))
    return out


@dataclass(slots=True)
class ResponseRequest:
    """What a Responses request said beyond its messages (echoed in the response)."""

    body: dict[str, Any]
    response_id: str
    history: list[Item]  # the conversation before this request's input
    created_at: int = field(default_factory=lambda: int(time.time()))

    def response(
        self, output: list[Item], status: str, usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        body = self.body
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"}
            if status == "incomplete"
            else None,
            "instructions": body.get("instructions"),
            "max_output_tokens": body.get("max_output_tokens"),
            "model": body.get("model"),
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "reasoning": body.get("reasoning") or {"effort": None, "summary": None},
            "store": body.get("store", True) is not False,
            "temperature": body.get("temperature"),
            "text": body.get("text") or {"format": {"type": "text"}},
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools") or [],
            "top_p": body.get("top_p"),
            "truncation": body.get("truncation", "disabled"),
            "usage": _usage(usage),
            "user": body.get("user"),
            "metadata": body.get("metadata") or {},
        }


@dataclass(slots=True)
class StoredResponse:
    tenant_id: str
    response: dict[str, Any]
    conversation: list[Item]  # every item up to and including this response's output


class ResponseStore:
    """The responses this process produced, for `previous_response_id` and `GET`.

    Bounded (oldest first out) and per process: a response is found by the
    replica that produced it. `store: false` responses are never kept.
    """

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, StoredResponse] = OrderedDict()

    def put(self, stored: StoredResponse) -> None:
        self._items[stored.response["id"]] = stored
        self._items.move_to_end(stored.response["id"])
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def get(self, tenant_id: str, response_id: str) -> StoredResponse:
        stored = self._items.get(response_id)
        if stored is None or stored.tenant_id != tenant_id:
            raise ProxyError(
                404,
                f"Response with id '{response_id}' not found.",
                param="response_id" if stored is None else None,
                code="response_not_found",
            )
        return stored

    def delete(self, tenant_id: str, response_id: str) -> None:
        self.get(tenant_id, response_id)
        del self._items[response_id]


class ResponsesWire:
    """The `WireFormat` of `/v1/responses`; keeps what it produced in the `ResponseStore`."""

    name = "responses"

    def __init__(
        self, request: ResponseRequest, store: ResponseStore, tenant_id: str, items: list[Item]
    ) -> None:
        self.request = request
        self.store = store
        self.tenant_id = tenant_id
        self.items = items  # this request's input items

    def keep(self, response: dict[str, Any]) -> None:
        if self.request.body.get("store", True) is False:
            return
        conversation = [*self.request.history, *self.items, *response["output"]]
        self.store.put(StoredResponse(self.tenant_id, response, conversation))

    def render(self, body: dict[str, Any]) -> dict[str, Any]:
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        output = answer_items(message, self.request.response_id)
        status = FINISH_STATUS.get(choice.get("finish_reason") or "stop", "completed")
        response = self.request.response(output, status, body.get("usage"))
        self.keep(response)
        return response

    def error(self, error: ProxyError, headers: dict[str, str]) -> Response:
        return error.response(headers)

    def stream(self) -> StreamEncoder:
        # Imported here: the stream module builds on this one's items.
        from proxy.responses_stream import ResponsesStream

        return ResponsesStream(self)


def new_response_id() -> str:
    return f"resp_{new_id().lower()}"


def chat_to_items(messages: list[dict[str, Any]]) -> tuple[str | None, list[Item]]:
    """The reverse of `items_to_chat` (for clients: eval, tests): (instructions, items)."""
    system = [m for m in messages if m.get("role") in ("system", "developer")]
    instructions = "\n".join(str(m.get("content") or "") for m in system) if system else None
    items: list[Item] = []
    for msg in messages[len(system) :]:
        role = msg.get("role")
        if role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": msg.get("tool_call_id"),
                    "output": msg.get("content") or "",
                }
            )
            continue
        if msg.get("content") or not msg.get("tool_calls"):
            kind = "output_text" if role == "assistant" else "input_text"
            text = msg.get("content") if isinstance(msg.get("content"), str) else ""
            items.append(
                {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}
            )
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") or {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id"),
                    "name": fn.get("name"),
                    "arguments": fn.get("arguments") or "",
                }
            )
    return instructions, items
