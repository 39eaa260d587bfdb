"""What the stub upstream holds: the requests it received (`RecordedRequest`),
the faults waiting to be injected (`Fault`), and what it answers with (the script,
a responder, replies queued for a prompt), all in one `StubState`.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from proxy.stub.passthrough import StubFiles
from proxy.stub.usage import PromptCache

Reply = dict[str, Any]  # an assistant message: {"content": ...} or {"tool_calls": [...]}


@dataclass
class Fault:
    """One injected failure, consumed by the next matching request."""

    status: int | None = None  # answer with this HTTP status and an OpenAI error body
    retry_after: str | None = None
    delay_s: float = 0.0  # sleep before answering (timeouts)
    reset: bool = False  # close the connection without an answer
    cut_after_chunks: int | None = None  # streaming: stop after N chunks, no [DONE]
    message: str = "injected fault"
    path: str | None = None  # only requests to this path (e.g. "/v1/embeddings") take it
    # Only requests whose last user/tool message contains this text take it (a
    # failure in the middle of a scripted run, at a chosen prompt).
    contains: str | None = None


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    at: float
    # Streams only: "done" (sent [DONE]), "cut" (injected), "closed" (the
    # client went away mid-stream); None while it runs.
    stream_end: str | None = None


@dataclass
class StubState:
    received: list[RecordedRequest] = field(default_factory=list)
    faults: deque[Fault] = field(default_factory=deque)
    script: dict[str, Reply] = field(default_factory=dict)
    responder: Callable[[dict[str, Any]], Reply | None] | None = None
    # Replies in order for prompts containing a text (`StubUpstream.queue_replies`).
    queued: list[tuple[str, deque[Reply]]] = field(default_factory=list)
    chunk_delay_s: float = 0.0
    # "openai": cached_tokens only; "anthropic": cache_read_input_tokens and
    # cache_creation_input_tokens too (as litellm's Anthropic usage carries them).
    usage_style: str = "openai"
    cache: PromptCache = field(default_factory=lambda: PromptCache())
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: StubFiles = field(default_factory=StubFiles)  # files and batches (pass-through)
