"""The request plan: everything decided before the upstream call, frozen.

`prepare` builds it step by step (each step returns a new plan); `forward`
sends what it says and `after` records it. Nothing after the plan changes it:
what the after-phase adds (the answer's policy calls, archived items, the
cache bill) goes into the record beside it.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from policies.llm.calls import PolicyCall
from policies.longterm.backfill import Backfill
from policies.registry import Preset
from policies.types import AssembledContext, Turn
from proxy.chat_request import ChatRequest
from proxy.errors import ProxyError
from proxy.lifecycle import SessionLayers
from proxy.sessions import Resolution
from proxy.tokens import TokenCounter
from proxy.upstream_wire import Target

MODES = ("managed", "raw", "shadow", "compare")


@dataclass(frozen=True, slots=True)
class RequestContext:
    """What the HTTP layer read from the request besides its body."""

    request_id: str
    tenant_id: str
    session_header: str | None
    mode_header: str | None
    budget_header: str | None
    policy_header: str | None
    started: float = field(default_factory=time.perf_counter)
    user_header: str | None = None  # X-Memory-User: the long-term memory scope


def _no_release() -> None:
    return None


class TurnWrite:
    """The client's new turns being stored while the request goes on.

    Started as soon as the session is resolved, so the write runs beside the
    context assembly and the upstream call instead of before them. Awaited
    before the first byte of the answer reaches the client, before any other
    store write of the request, and before the session's next request: an
    answered turn is a stored one, and a failed write (one transaction) leaves
    nothing behind. `then` runs when it settles, either way (it releases the
    conversation's resolution lock).
    """

    def __init__(self, write: Awaitable[None], then: Callable[[], None] = _no_release) -> None:
        self._task = asyncio.ensure_future(write)
        self._then = then
        self._task.add_done_callback(self._settled)

    def _settled(self, task: asyncio.Future[None]) -> None:
        self._then()
        if not task.cancelled():
            task.exception()  # retrieved here; `wait` raises it to whoever awaits

    async def wait(self) -> None:
        """Until stored (raises the store's error); a cancelled waiter leaves it running."""
        await asyncio.shield(self._task)


@dataclass(frozen=True, slots=True)
class RequestPlan:
    """Everything decided before the upstream call (built by `proxy.chat.prepare`)."""

    ctx: RequestContext
    req: ChatRequest
    target: Target
    mode: str
    preset: Preset
    counter: TokenCounter
    budget: int
    raw_tokens: int
    forwarded: list[dict[str, Any]]
    context_tokens: int
    # Frees the session's queue for its next request (after the answer is handled).
    release: Callable[[], None] = _no_release
    resolution: Resolution | None = None
    turns: list[Turn] = field(default_factory=list)  # the session's conversation turns
    system: list[Turn] = field(default_factory=list)
    chain: list[str] = field(default_factory=list)
    assembled: AssembledContext | None = None
    shadow: AssembledContext | None = None
    operations: tuple[dict[str, Any], ...] = ()
    # (previous prompt of the session, this prompt): the prefix share is computed
    # from them off the response path, when the request is recorded.
    prefix_of: tuple[list[dict[str, Any]] | None, list[dict[str, Any]]] | None = None
    proxy_ms: float = 0.0
    layers: SessionLayers | None = None  # summary, recall index, memory layout
    compactions: tuple[tuple[int, int], ...] = ()  # spans summarised by this request
    policy_calls: tuple[PolicyCall, ...] = ()  # LLM-backed policy runs before forwarding
    lifecycle: dict[str, Any] = field(default_factory=dict)  # for the request record
    user: str | None = None  # long-term memory scope (X-Memory-User, else body `user`)
    longterm: Backfill | None = None  # background from the user's earlier conversations
    degraded: str | None = None  # the store failed: why (memory.on_store_error: open)
    # Prompt caching (memory.cache): request fields we add (prompt_cache_key), and
    # the hints and raw-when-cheaper decision, for the record.
    extra_params: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)
    unhinted: list[dict[str, Any]] | None = None  # the prompt before the hints (fallbacks)
    turn_write: TurnWrite | None = None  # the client's new turns, still being stored

    async def turns_stored(self) -> None:
        """Until the client's new turns are stored (raises the store's error)."""
        if self.turn_write is not None:
            await self.turn_write.wait()

    @property
    def params(self) -> dict[str, Any]:
        """What goes upstream besides the messages: the client's fields, then ours."""
        return {**self.req.params, **self.extra_params} if self.extra_params else self.req.params

    def call_args(self) -> dict[str, Any]:
        """`Upstream.build_call`'s keywords: the hints go to the routed model only (a
        fallback of another provider family gets the prompt and fields unhinted)."""
        return {"fallback_messages": self.unhinted, "fallback_params": self.req.params}

    @property
    def session_id(self) -> str | None:
        return self.resolution.session.id if self.resolution else None

    @property
    def session_name(self) -> str | None:
        """What the client calls the session: its `X-Memory-Session` name, else the id."""
        if self.resolution is None:
            return None
        session = self.resolution.session
        return session.external_id or session.id

    def headers(self, degraded: str | None = None) -> dict[str, str]:
        """The `X-Memory-*` response headers (`degraded`: the answer was not stored)."""
        out = {
            "X-Memory-Request-Id": self.ctx.request_id,
            "X-Memory-Mode": self.mode,
            "X-Memory-Policy": self.preset.name,
            "X-Memory-Budget": str(self.budget),
            "X-Memory-Raw-Tokens": str(self.raw_tokens),
            "X-Memory-Context-Tokens": str(self.context_tokens),
        }
        if self.session_id:
            # The name the client gave (X-Memory-Session), else the id; and the id.
            out["X-Memory-Session"] = self.session_name or self.session_id
            out["X-Memory-Session-Id"] = self.session_id
        if self.assembled is not None and self.assembled.over_budget:
            out["X-Memory-Over-Budget"] = "1"
        if self.shadow is not None:
            out["X-Memory-Shadow-Tokens"] = str(self.shadow.tokens)
        if self.degraded or degraded:
            out["X-Memory-Degraded"] = "1"
        return out


def clean_answer(message: dict[str, Any]) -> dict[str, Any]:
    """The assistant message as a client sends it back next turn (no null extras)."""
    out: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
    if message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c.get("id"),
                "type": c.get("type") or "function",
                "function": {
                    "name": (c.get("function") or {}).get("name"),
                    "arguments": (c.get("function") or {}).get("arguments"),
                },
            }
            for c in message["tool_calls"]
        ]
    return out


def store_unavailable(reason: str, *, answered: bool = False) -> ProxyError:
    """The 503 of `memory.on_store_error: closed`."""
    what = (
        "the answer could not be stored, so it is withheld"
        if answered
        else "the request was not forwarded"
    )
    return ProxyError(
        503,
        f"memproxy's memory store is unavailable ({reason}); {what} "
        "(memory.on_store_error: closed). Retry shortly.",
        code="store_unavailable",
        headers={"Retry-After": "1"},
    )


def ab_arm(session_id: str, raw_share: float) -> str:
    """Sticky A/B arm of a session: a hash of its id, so every replica agrees."""
    bucket = int(hashlib.sha256(session_id.encode()).hexdigest()[:8], 16) / 0x100000000
    return "raw" if bucket < raw_share else "managed"
