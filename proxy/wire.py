"""Wire formats at the edge: how an answer and its stream reach the client.

Every conversational API (chat completions, Responses, Anthropic Messages) is
translated into one internal chat-completions request, runs through the same
pipeline, and is answered upstream in chat form. A `WireFormat` turns that
chat answer back into the client's API: the whole body, each stream chunk, and
errors in the API's own shape. Chat completions is the identity.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Protocol

from fastapi.responses import Response

from proxy.errors import ProxyError


class StreamEncoder(Protocol):
    """One streamed answer: chat chunks in, the wire API's events out (as SSE bytes)."""

    def chunk(self, data: dict[str, Any]) -> bytes:
        """Events for one upstream chat chunk (possibly none: b"")."""

    def end(self, answer: dict[str, Any]) -> bytes:
        """The closing events, once the answer is stored."""

    def fail(self, error: ProxyError) -> bytes:
        """The event that ends a stream cut by an error."""


class WireFormat(Protocol):
    name: str

    def render(self, body: dict[str, Any]) -> dict[str, Any]:
        """The client's body for an upstream chat completion."""

    def error(self, error: ProxyError, headers: dict[str, str]) -> Response:
        """An error in this API's shape."""

    def stream(self) -> StreamEncoder:
        """An encoder for one streamed answer."""


def sse(data: dict[str, Any], event: str | None = None) -> bytes:
    line = b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"
    return f"event: {event}\n".encode() + line if event else line


class _ChatStream:
    def chunk(self, data: dict[str, Any]) -> bytes:
        return sse(data)

    def end(self, answer: dict[str, Any]) -> bytes:
        return b"data: [DONE]\n\n"

    def fail(self, error: ProxyError) -> bytes:
        return sse(error.body())


class ChatWire:
    """`/v1/chat/completions`: the upstream's answer as it is."""

    name = "chat"

    def render(self, body: dict[str, Any]) -> dict[str, Any]:
        return body

    def error(self, error: ProxyError, headers: dict[str, str]) -> Response:
        return error.response(headers)

    def stream(self) -> StreamEncoder:
        return _ChatStream()


CHAT_WIRE = ChatWire()


def first_choice_deltas(data: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str | None]]:
    """The deltas of a streamed chat chunk's first choice (the only one a wire
    format with a single answer carries), each with its finish reason."""
    for choice in data.get("choices") or ():
        if choice.get("index", 0) == 0:
            yield choice.get("delta") or {}, choice.get("finish_reason")
