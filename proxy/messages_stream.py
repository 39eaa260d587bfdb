"""The streamed `/v1/messages` answer: chat completion chunks in, Anthropic events out
(`message_start`, one content block per text, thinking or tool call with its
deltas, `message_delta`, `message_stop`), block by block as they arrive."""

from __future__ import annotations

from typing import Any

from proxy.errors import ProxyError
from proxy.messages_answer import STOP_REASONS, error_body, thinking_block, usage_of
from proxy.wire import first_choice_deltas, sse


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
        for delta, finish in first_choice_deltas(data):
            self.finish = finish or self.finish
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
            out += self._begin("redacted", thinking_block(block))
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
        stop = STOP_REASONS.get(self.finish or "stop", "end_turn")
        delta = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": usage_of(self.usage),
        }
        return out + sse(delta, "message_delta") + sse({"type": "message_stop"}, "message_stop")

    def fail(self, error: ProxyError) -> bytes:
        return sse(error_body(error), "error")
