"""The one place that orchestrates a chat request, and the state it keeps per process.

prepare (`proxy.chat.prepare`: resolve the session, ingest new turns, extract
memory, assemble the context → a frozen `RequestPlan`) → forward
(`proxy.chat.forward`, `proxy.chat.stream`: litellm, the answer stored before
the client's last byte by `proxy.chat.answer_store`) → after (`proxy.chat.after`,
off the response path: learn from the answer (`proxy.chat.learn`), release the
session, write the request record (`proxy.chat.request_record`)).

`Pipeline` owns what those steps share: the store, the upstream, the policies,
and the in-process caches of sessions (turns, memory, layers, last prompt).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import Coroutine
from typing import Any

from fastapi.responses import Response

from policies.assemble.cache_pricing import CacheRule
from policies.registry import Policies
from proxy.cache_bill import rule_for
from proxy.chat import after, answer_store, forward, prepare, stream
from proxy.chat.plan import MODES, RequestContext, RequestPlan, ab_arm, clean_answer
from proxy.chat_request import ChatRequest
from proxy.conversation import ConversationCache
from proxy.lifecycle import Lifecycle
from proxy.llm_policies import make_embedder
from proxy.longterm import LongTermMemory
from proxy.memory_state import MemoryState
from proxy.metrics import Metrics
from proxy.records import Outcome
from proxy.request_log import RequestLog
from proxy.sessions import KeyedLocks, SessionQueue, SessionResolver
from proxy.settings import Settings
from proxy.store.repo import Store
from proxy.summaries import Summaries
from proxy.tokens import TokenCounters
from proxy.upstream import Upstream
from proxy.wire import CHAT_WIRE, WireFormat

__all__ = ["MODES", "Pipeline", "RequestContext", "RequestPlan", "ab_arm", "clean_answer"]


class Pipeline:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        upstream: Upstream,
        policies: Policies,
        request_log: RequestLog,
    ) -> None:
        self.settings = settings
        self.store = store
        self.upstream = upstream
        self.policies = policies
        self.request_log = request_log
        self.counters = TokenCounters()
        cached = settings.memory.cache_sessions
        self.memory = MemoryState(store, cache_sessions=cached)
        self.lifecycle = Lifecycle(store, cache_sessions=cached)
        self.summaries = Summaries(store)
        self.resolver = SessionResolver(store, self.memory.peek)
        self.cache = ConversationCache(max_sessions=cached)
        self.conversation_locks = KeyedLocks(store)
        self.queue = SessionQueue(store)
        # Another replica wrote to a session: forget our copies of it.
        store.on_stale(self.forget_cached)
        self.metrics = Metrics()
        self.longterm = LongTermMemory.from_settings(
            store, settings.memory.long_term, make_embedder(upstream, settings)
        )
        self._background: set[asyncio.Task[Any]] = set()
        # Each session's previous prompt, for the prefix share (LRU, like the caches).
        self._last_forwarded: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()
        self._cache_sessions = cached
        self._cache_rules: dict[str, CacheRule] = {}

    # --- the steps ----------------------------------------------------------------------

    async def prepare_guarded(self, req: ChatRequest, ctx: RequestContext) -> RequestPlan:
        """The plan of a request (`proxy.chat.prepare.prepare_guarded`)."""
        return await prepare.prepare_guarded(self, req, ctx)

    async def complete(self, plan: RequestPlan, wire: WireFormat = CHAT_WIRE) -> Response:
        """Forward, store the answer, answer the client (non-streaming)."""
        return await forward.complete(self, plan, wire)

    async def stream(self, plan: RequestPlan, wire: WireFormat = CHAT_WIRE) -> Response:
        """Forward and relay the answer as it streams; stored before its end."""
        return await stream.stream_completion(self, plan, wire)

    def start_compare(self, plan: RequestPlan) -> asyncio.Task[dict[str, Any]] | None:
        return forward.start_compare(self, plan)

    async def store_answer(self, plan: RequestPlan, message: dict[str, Any]) -> str | None:
        """Store the assistant turn; the reason when the store failed and the answer
        goes out unstored (`memory.on_store_error: open`)."""
        return await answer_store.store_answer(self, plan, message)

    async def turns_stored(self, plan: RequestPlan) -> str | None:
        """Until the client's new turns are stored; the reason when the store failed
        and the answer goes out unstored (`memory.on_store_error: open`)."""
        return await answer_store.turns_stored(self, plan)

    def finish(self, plan: RequestPlan, outcome: Outcome) -> None:
        """Off the response path: extract from the answer, log, release the session."""
        self._in_background(after.finish(self, plan, outcome))

    def abandon(self, plan: RequestPlan) -> None:
        """No answer and no record (the client went away): release the session once
        its turns are stored."""
        self._in_background(answer_store.abandon(plan))

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # --- state shared by the steps --------------------------------------------------------

    def last_forwarded(self, session_id: str) -> list[dict[str, Any]] | None:
        """The session's previous prompt (for the prefix share and cache decisions)."""
        return self._last_forwarded.get(session_id)

    def remember_forwarded(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        self._last_forwarded[session_id] = messages
        self._last_forwarded.move_to_end(session_id)
        if len(self._last_forwarded) > self._cache_sessions:
            self._last_forwarded.popitem(last=False)

    def cache_rule(self, model_name: str) -> CacheRule:
        """The cache rule of a model_list model (by litellm provider, then config)."""
        rule = self._cache_rules.get(model_name)
        if rule is None:
            target = self.upstream.resolve(model_name)
            rule = rule_for(
                self.settings.memory.cache,
                model_name,
                self.upstream.provider(target),
                target.provider_model,
            )
            self._cache_rules[model_name] = rule
        return rule

    def forget_cached(self, session_id: str) -> None:
        """Drop a session's in-process state; the next request reloads it from the store.

        Called when another replica wrote to the session, after a failed store
        write, and when an operator edits or erases the session.
        """
        self.cache.drop(session_id)
        self.memory.invalidate(session_id)
        self.lifecycle.drop(session_id)
        self._last_forwarded.pop(session_id, None)

    async def drain(self) -> None:
        """Wait for background work (tests, eval, shutdown)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)
        await self.longterm.drain()
        await self.request_log.flush()

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self.drain()
        await self.longterm.aclose()
        await self.memory.flush_all()
