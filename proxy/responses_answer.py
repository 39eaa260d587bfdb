"""A chat completion as a Responses answer: its output items and the response object.

The items are built here for the plain answer and for the stream alike
(`proxy.responses_stream` sends the same items, in progress then completed).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

Item = dict[str, Any]
FINISH_STATUS = {"length": "incomplete", "content_filter": "incomplete"}

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
