"""The streamed `/v1/responses` answer: chat completion chunks in, Responses events
out (`response.created`, one output item per text, reasoning or tool call, its
deltas, `response.completed`), the finished response kept by `ResponsesWire`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.errors import ProxyError
from proxy.responses_answer import FINISH_STATUS, Item, call_item, message_item, reasoning_item
from proxy.wire import first_choice_deltas, sse

if TYPE_CHECKING:
    # The wire imports this encoder; the encoder only hands it the finished response.
    from proxy.wire_responses import ResponsesWire


class _Events:
    """Responses events as SSE, numbered in the order they are sent."""

    def __init__(self) -> None:
        self.seq = 0

    def __call__(self, kind: str, **data: Any) -> bytes:
        event = {"type": kind, "sequence_number": self.seq, **data}
        self.seq += 1
        return sse(event, kind)


class _StreamedText:
    """The answer's message item; its text grows over every time it is open."""

    def __init__(self, item_id: str) -> None:
        self.id = item_id
        self.parts: list[str] = []

    def added(self, events: _Events, index: int) -> bytes:
        item = message_item(self.id, "", status="in_progress")
        part = {"type": "output_text", "text": "", "annotations": []}
        out = events("response.output_item.added", output_index=index, item=item)
        return out + events(
            "response.content_part.added",
            item_id=self.id,
            output_index=index,
            content_index=0,
            part=part,
        )

    def delta(self, events: _Events, index: int, text: str) -> bytes:
        self.parts.append(text)
        return events(
            "response.output_text.delta",
            item_id=self.id,
            output_index=index,
            content_index=0,
            delta=text,
            logprobs=[],
        )

    def done(self, events: _Events, index: int) -> tuple[Item, bytes]:
        text = "".join(self.parts)
        item = message_item(self.id, text)
        out = events(
            "response.output_text.done",
            item_id=self.id,
            output_index=index,
            content_index=0,
            text=text,
            logprobs=[],
        )
        out += events(
            "response.content_part.done",
            item_id=self.id,
            output_index=index,
            content_index=0,
            part=item["content"][0],
        )
        return item, out


class _StreamedReasoning:
    """The reasoning item: its summary text, and Claude's thinking blocks by stream index."""

    def __init__(self, item_id: str) -> None:
        self.id = item_id
        self.parts: list[str] = []
        self.thinking: dict[int, dict[str, Any]] = {}

    def think(self, block: dict[str, Any]) -> None:
        slot = self.thinking.setdefault(int(block.get("index", 0)), {"type": block.get("type")})
        for key in ("thinking", "signature", "data"):
            if isinstance(block.get(key), str):
                slot[key] = slot.get(key, "") + block[key]

    def added(self, events: _Events, index: int) -> bytes:
        item = {"type": "reasoning", "id": self.id, "summary": []}
        out = events("response.output_item.added", output_index=index, item=item)
        return out + events(
            "response.reasoning_summary_part.added",
            item_id=self.id,
            output_index=index,
            summary_index=0,
            part={"type": "summary_text", "text": ""},
        )

    def delta(self, events: _Events, index: int, text: str) -> bytes:
        self.parts.append(text)
        return events(
            "response.reasoning_summary_text.delta",
            item_id=self.id,
            output_index=index,
            summary_index=0,
            delta=text,
        )

    def done(self, events: _Events, index: int) -> tuple[Item, bytes]:
        text = "".join(self.parts)
        thinking = [self.thinking[i] for i in sorted(self.thinking)]
        item = reasoning_item(self.id, text, thinking)
        out = events(
            "response.reasoning_summary_text.done",
            item_id=self.id,
            output_index=index,
            summary_index=0,
            text=text,
        )
        out += events(
            "response.reasoning_summary_part.done",
            item_id=self.id,
            output_index=index,
            summary_index=0,
            part={"type": "summary_text", "text": text},
        )
        return item, out


class _StreamedCall:
    """One tool call's item (the `index`-th of the answer), its arguments as they come."""

    def __init__(self, item_id: str, index: int, call: dict[str, Any]) -> None:
        self.id = item_id
        self.index = index
        fn = call.get("function") or {}
        self.call: dict[str, Any] = {
            "id": call.get("id"),
            "function": {"name": fn.get("name") or "", "arguments": ""},
        }

    def added(self, events: _Events, index: int) -> bytes:
        item = call_item(self.id, self.call, status="in_progress")
        return events("response.output_item.added", output_index=index, item=item)

    def delta(self, events: _Events, index: int, call: dict[str, Any]) -> bytes:
        if call.get("id") and not self.call["id"]:
            self.call["id"] = call["id"]
        arguments = (call.get("function") or {}).get("arguments")
        if not arguments:
            return b""
        self.call["function"]["arguments"] += arguments
        return events(
            "response.function_call_arguments.delta",
            item_id=self.id,
            output_index=index,
            delta=arguments,
        )

    def done(self, events: _Events, index: int) -> tuple[Item, bytes]:
        item = call_item(self.id, self.call)
        out = events(
            "response.function_call_arguments.done",
            item_id=self.id,
            output_index=index,
            arguments=item["arguments"],
        )
        return item, out


_Streamed = _StreamedText | _StreamedReasoning | _StreamedCall


class ResponsesStream:
    """Chat chunks in, Responses events out, in OpenAI's order, as they arrive.

    One output item is open at a time (the text, the reasoning, or a tool
    call); a delta of another kind closes it (its `done` events) and opens
    its own (`added`)."""

    def __init__(self, wire: ResponsesWire) -> None:
        self.wire = wire
        self.request = wire.request
        self.events = _Events()
        self.started = False
        self.output: list[Item] = []
        self.base = self.request.response_id.removeprefix("resp_")
        self.text = _StreamedText(f"msg_{self.base}")
        self.reasoning = _StreamedReasoning(f"rs_{self.base}")
        self.open: _Streamed | None = None
        self.finish: str | None = None
        self.usage: dict[str, Any] | None = None

    def _start(self) -> bytes:
        self.started = True
        pending = self.request.response([], "in_progress", None)
        return self.events("response.created", response=pending) + self.events(
            "response.in_progress", response=pending
        )

    def _close(self) -> bytes:
        open_item, self.open = self.open, None
        if open_item is None:
            return b""
        index = len(self.output)
        item, out = open_item.done(self.events, index)
        self.output.append(item)
        return out + self.events("response.output_item.done", output_index=index, item=item)

    def _switch(self, item: _Streamed) -> bytes:
        """Open `item` unless it is the open one, closing that."""
        if self.open is item:
            return b""
        out = self._close()
        self.open = item
        return out + item.added(self.events, len(self.output))

    def chunk(self, data: dict[str, Any]) -> bytes:
        out = b"" if self.started else self._start()
        if data.get("usage"):
            self.usage = data["usage"]
        for delta, finish in first_choice_deltas(data):
            self.finish = finish or self.finish
            if delta.get("reasoning_content"):
                out += self._switch(self.reasoning)
                out += self.reasoning.delta(
                    self.events, len(self.output), delta["reasoning_content"]
                )
            for block in delta.get("thinking_blocks") or ():
                self.reasoning.think(block)
            if delta.get("content"):
                out += self._switch(self.text)
                out += self.text.delta(self.events, len(self.output), delta["content"])
            for call in delta.get("tool_calls") or ():
                out += self._tool(call)
        return out

    def _tool(self, call: dict[str, Any]) -> bytes:
        """A tool call's delta; a call of another index (or this one after another
        item) starts a new item."""
        n = int(call.get("index", 0))
        out = b""
        current = self.open
        if not (isinstance(current, _StreamedCall) and current.index == n):
            current = _StreamedCall(f"fc_{self.base}_{n}", n, call)
            out += self._switch(current)
        return out + current.delta(self.events, len(self.output), call)

    def end(self, answer: dict[str, Any]) -> bytes:
        out = (b"" if self.started else self._start()) + self._close()
        status = FINISH_STATUS.get(self.finish or "stop", "completed")
        response = self.request.response(self.output, status, self.usage)
        self.wire.keep(response)
        kind = "response.completed" if status == "completed" else "response.incomplete"
        return out + self.events(kind, response=response)

    def fail(self, error: ProxyError) -> bytes:
        return self.events("error", code=error.code, message=error.message, param=error.param)
