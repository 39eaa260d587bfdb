"""The one place that orchestrates a chat request.

resolve session → ingest new turns → extract memory → assemble context →
forward (litellm) → store the answer → respond → (off the response path)
extract from the answer, write the request record, release the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fastapi.responses import JSONResponse, Response

from policies.assembly import AssemblyInput
from policies.backfill import Backfill, place_backfill
from policies.budget import resolve_budget, split_mandatory
from policies.cache_pricing import CacheRule
from policies.llm import PolicyCall
from policies.registry import Policies, Preset
from policies.text import term_set
from policies.types import AssembledContext, MemoryItem, Turn
from proxy.cache_bill import bill, cache_hints, cache_usage, prices_from, raw_decision, rule_for
from proxy.chat_request import ChatRequest, chain_hashes, message_hash
from proxy.config import Settings
from proxy.conversation import (
    Conversation,
    ConversationCache,
    SessionTurns,
    build_conversation,
    make_turn,
    shared_prefix,
    split_system,
    stored_from_turn,
    system_turns,
    turn_from_stored,
)
from proxy.errors import ProxyError
from proxy.lifecycle import Lifecycle, SessionLayers
from proxy.llm_policies import LLMPolicies, make_embedder
from proxy.longterm import ConsolidationJob, LongTermMemory, user_scope
from proxy.memory_state import MemoryState
from proxy.metrics import Metrics
from proxy.records import Outcome, context_record, prefix_share
from proxy.request_log import RequestLog
from proxy.sessions import KeyedLocks, Resolution, SessionQueue, SessionResolver, match_scope
from proxy.store.faults import store_fault
from proxy.store.repo import SessionRow, Store, StoredMessage
from proxy.tokens import TokenCounter, TokenCounters
from proxy.upstream import Target, Upstream
from proxy.wire import CHAT_WIRE, WireFormat

log = logging.getLogger("memproxy.pipeline")

MODES = ("managed", "raw", "shadow", "compare")


@dataclass(slots=True)
class RequestContext:
    request_id: str
    tenant_id: str
    session_header: str | None
    mode_header: str | None
    budget_header: str | None
    policy_header: str | None
    started: float = field(default_factory=time.perf_counter)
    user_header: str | None = None  # X-Memory-User: the long-term memory scope


@dataclass(slots=True)
class Prepared:
    """Everything decided before the upstream call."""

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
    release: Callable[[], None] = lambda: None
    resolution: Resolution | None = None
    turns: list[Turn] = field(default_factory=list)  # the session's conversation turns
    system: list[Turn] = field(default_factory=list)
    chain: list[str] = field(default_factory=list)
    assembled: AssembledContext | None = None
    shadow: AssembledContext | None = None
    operations: list[dict[str, Any]] = field(default_factory=list)
    # (previous prompt of the session, this prompt): the prefix share is computed
    # from them off the response path, when the request is recorded.
    prefix_of: tuple[list[dict[str, Any]] | None, list[dict[str, Any]]] | None = None
    proxy_ms: float = 0.0
    layers: SessionLayers | None = None  # summary, recall index, memory layout
    compactions: list[tuple[int, int]] = field(default_factory=list)  # spans summarised
    policy_calls: list[PolicyCall] = field(default_factory=list)  # LLM-backed policy runs
    lifecycle: dict[str, Any] = field(default_factory=dict)  # for the request record
    lifecycle_trimmed: bool = False  # the summary was trimmed to fit its share
    user: str | None = None  # long-term memory scope (X-Memory-User, else body `user`)
    longterm: Backfill | None = None  # background from the user's earlier conversations
    degraded: str | None = None  # the store failed: why (memory.on_store_error: open)
    # Prompt caching (memory.cache): request fields we add (prompt_cache_key), and
    # the hints and raw-when-cheaper decision, for the record.
    extra_params: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, Any] = field(default_factory=dict)
    unhinted: list[dict[str, Any]] | None = None  # the prompt before the hints (fallbacks)

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

    def headers(self) -> dict[str, str]:
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
        if self.degraded:
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


def _store_unavailable(reason: str, *, answered: bool = False) -> ProxyError:
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


def _stored_turns(cached: SessionTurns) -> list[StoredMessage]:
    """A cached session's turns as stored rows (only a stateful append needs them)."""
    return [
        stored_from_turn(t, h, c)
        for t, h, c in zip(cached.turns, cached.hashes, cached.chain, strict=True)
    ]


def ab_arm(session_id: str, raw_share: float) -> str:
    """Sticky A/B arm of a session: a hash of its id, so every replica agrees."""
    bucket = int(hashlib.sha256(session_id.encode()).hexdigest()[:8], 16) / 0x100000000
    return "raw" if bucket < raw_share else "managed"


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
        self.llm = LLMPolicies(upstream, settings)
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

    # --- request entry ------------------------------------------------------------

    def _mode(self, header: str | None) -> str:
        mode = (header or self.settings.memory.default_mode).strip().lower()
        if mode not in MODES:
            raise ProxyError(
                400,
                f"X-Memory-Mode: unknown mode {header!r}; expected one of {', '.join(MODES)}",
                param="X-Memory-Mode",
                code="invalid_header",
            )
        return mode

    def _preset(self, header: str | None) -> Preset:
        try:
            return self.policies.preset(header)
        except ValueError as exc:
            raise ProxyError(
                400, str(exc), param="X-Memory-Policy", code="invalid_header"
            ) from None

    def _budget(self, req: ChatRequest, ctx: RequestContext, target: Target) -> int:
        memory = self.settings.memory
        window = None
        if ctx.budget_header is None and memory.budget_tokens is None:
            window = self.upstream.input_window(target)
        try:
            return resolve_budget(
                ctx.budget_header,
                memory.budget_tokens,
                window,
                req.requested_output,
                default_window=memory.default_context_window,
            )
        except ValueError as exc:
            raise ProxyError(
                400, str(exc), param="X-Memory-Budget", code="invalid_header"
            ) from None

    async def prepare(self, req: ChatRequest, ctx: RequestContext) -> Prepared:
        await self.upstream.ready()
        target = self.upstream.resolve(req.model)
        mode, preset = self._mode(ctx.mode_header), self._preset(ctx.policy_header)
        budget = self._budget(req, ctx, target)
        counter = self.counters.for_model(target.provider_model)
        split = split_system(req.messages)
        if split == len(req.messages):
            conv = build_conversation(counter, req.messages)
            sys_turns = system_turns(counter, conv.system)
            raw_tokens = sum(t.tokens for t in sys_turns)
            # Nothing but system messages: no conversation to manage.
            return Prepared(
                ctx,
                req,
                target,
                mode,
                preset,
                counter,
                budget,
                raw_tokens,
                req.messages,
                raw_tokens,
            )
        named = ctx.session_header
        # Transparent matching stays within the end user, when the request names one.
        scope = (
            ctx.tenant_id
            if named is not None
            else match_scope(ctx.tenant_id, user_scope(ctx.user_header, req.params))
        )
        # Conversations with different first turns can never match each other, so the
        # resolution lock is per (scope, first turn) or per named session. The cache
        # is read under it too: a request that waited must see what the previous wrote.
        first_hash = message_hash(req.messages[split])
        held = await self.conversation_locks(f"{scope}:{named or first_hash}")
        try:
            if named is None and self.store.shared:
                for entry in self.cache.candidates(scope, first_hash):
                    await self.store.sync(entry.session.id)
            conv, known = self._recognise(counter, req.messages, ctx, scope)
            sys_turns = system_turns(counter, conv.system)
            raw_tokens = sum(t.tokens for t in sys_turns) + sum(t.tokens for t in conv.turns)
            resolution: Resolution | None = None
            if named is not None:
                session = await self.resolver.named_session(ctx.tenant_id, named, conv)
            else:
                resolution = await self.resolver.resolve(scope, conv, known)
                session = resolution.session
            ticket = self.queue.enter(session.id)
        finally:
            held.release()
        try:
            await ticket.wait()
            if resolution is None:
                # Earlier requests of this session may have written since the lookup.
                cached = self.cache.get(session.id)
                if cached is not None:
                    session = cached.session
                else:
                    session = await self.store.get_session(session.id) or session
                prefix = None
                if cached is not None and len(cached.turns) == session.message_count:
                    prefix = partial(_stored_turns, cached)
                resolution = await self.resolver.resolve_named(session, conv, prefix)
            prepared = Prepared(
                ctx,
                req,
                target,
                mode,
                preset,
                counter,
                budget,
                raw_tokens,
                req.messages,
                raw_tokens,
                ticket.release,
                resolution,
            )
            if ctx.mode_header is None and self.settings.memory.ab_split is not None:
                prepared.mode = ab_arm(resolution.session.id, self.settings.memory.ab_split)
            await self._prepare_in_session(prepared, conv, sys_turns)
            return prepared
        except BaseException:
            ticket.release()
            self.forget_cached(session.id)  # a failed write may leave caches ahead of the store
            raise

    def _recognise(
        self,
        counter: TokenCounter,
        messages: list[dict[str, Any]],
        ctx: RequestContext,
        scope: str,
    ) -> tuple[Conversation, tuple[SessionRow, int] | None]:
        """Build the conversation, reusing a cached session's turns when it continues one.

        A named session (`X-Memory-Session`) reuses them too (hashing and counting
        a long history again costs more than the rest of the request), but which
        session it is stays the name's: equal messages make equal turns whichever
        cached session they come from.
        """
        split = 0
        while split < len(messages) and messages[split].get("role") in ("system", "developer"):
            split += 1
        raws = messages[split:]
        if not raws:
            return build_conversation(counter, messages), None
        first = message_hash(raws[0])
        for cached in self.cache.candidates(scope, first):
            if cached.session.message_count != len(cached.raws):
                continue  # written since it was cached: let the store decide
            shared = shared_prefix(cached, raws, first, self.cache.proven(messages, cached))
            if shared:
                conv = build_conversation(counter, messages, cached, shared)
                known = None if ctx.session_header is not None else (cached.session, shared)
                return conv, known
        return build_conversation(counter, messages), None

    async def _prepare_in_session(
        self, prepared: Prepared, conv: Conversation, sys_turns: list[Turn]
    ) -> None:
        resolution = prepared.resolution
        assert resolution is not None
        session = resolution.session
        if resolution.items_changed:
            self.memory.invalidate(session.id)
        if resolution.kind == "stateful":
            # The client sent only the new turns; the rest comes from the store.
            prefix = [turn_from_stored(s) for s in resolution.prefix]
            base = len(prefix)
            new = [make_turn(prepared.counter, t.raw, base + i) for i, t in enumerate(conv.turns)]
            turns = [*prefix, *new]
            previous = resolution.prefix[-1].chain_hash if resolution.prefix else ""
            chain = [
                *(s.chain_hash for s in resolution.prefix),
                *chain_hashes(conv.hashes, previous),
            ]
            hashes = [*(s.content_hash for s in resolution.prefix), *conv.hashes]
            if not conv.system and session.system:
                sys_turns = system_turns(prepared.counter, session.system)
            prepared.raw_tokens = sum(t.tokens for t in (*sys_turns, *turns))
        else:
            turns, chain, hashes = conv.turns, conv.chain, conv.hashes
        prepared.turns, prepared.system, prepared.chain = turns, sys_turns, chain
        # The turns as this client sent them (its copy of our earlier answers may carry
        # extra null fields): what its next request will resend, compared at C speed.
        stateful = resolution.kind == "stateful"
        sent = [t.raw for t in turns] if stateful else list(conv.raws)
        entry = SessionTurns(session, sent, list(turns), list(hashes), list(chain))
        entry.validated = 0 if stateful else len(sent)
        self.cache.put(entry)
        if prepared.mode != "raw" and prepared.preset.extractor is not None:
            system_prompt = "\n".join(t.text for t in sys_turns)
            results = await self.memory.extract(
                session.id, prepared.preset.extractor, turns, resolution.start, system_prompt
            )
            prepared.operations = [
                {"ordinal": o, "operation": e.operation, "ops": len(e.ops), "reason": e.reason}
                for o, e in results
            ]
        raw_forward = (
            prepared.req.messages
            if resolution.kind != "stateful"
            else [t.raw for t in (*sys_turns, *turns)]
        )
        prepared.forwarded = raw_forward
        prepared.context_tokens = prepared.raw_tokens
        if prepared.mode != "raw" and prepared.preset.assembler is not None:
            items = await self.memory.items(session.id)
            managed = await self._assemble_managed(prepared, items)
            if prepared.mode == "shadow":
                prepared.shadow = managed
            else:
                prepared.assembled = managed
                if not (managed.passthrough and resolution.kind != "stateful"):
                    prepared.forwarded = managed.messages
                prepared.context_tokens = managed.tokens
        if self.settings.memory.cache.raw_when_cheaper:
            self._raw_when_cheaper(prepared, raw_forward, self._last_forwarded.get(session.id))
        self._add_cache_hints(prepared)
        prepared.prefix_of = (self._last_forwarded.get(session.id), prepared.forwarded)
        self._last_forwarded[session.id] = prepared.forwarded
        self._last_forwarded.move_to_end(session.id)
        if len(self._last_forwarded) > self._cache_sessions:
            self._last_forwarded.popitem(last=False)
        prepared.proxy_ms = (time.perf_counter() - prepared.ctx.started) * 1000

    # --- prompt caching (memory.cache) ---------------------------------------------------

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

    def _raw_when_cheaper(
        self,
        prepared: Prepared,
        raw_forward: list[dict[str, Any]],
        previous: list[dict[str, Any]] | None,
    ) -> None:
        """Forward the client's own history where it costs less under the cache rule.

        Only in managed mode, for a managed (not passed-through) context, and never
        past the budget: the budget the user set stays the ceiling.
        """
        managed = prepared.assembled
        if prepared.mode not in ("managed", "compare") or managed is None or managed.passthrough:
            return
        if prepared.raw_tokens > prepared.budget:
            return
        rule = self.cache_rule(prepared.target.model_name)
        cheaper, figures = raw_decision(
            rule, raw_forward, prepared.forwarded, previous, prepared.counter
        )
        prepared.cache["decision"] = figures
        if cheaper:
            # The managed context was computed and not sent: recorded as a shadow.
            prepared.shadow, prepared.assembled = managed, None
            prepared.forwarded = raw_forward
            prepared.context_tokens = prepared.raw_tokens

    def _add_cache_hints(self, prepared: Prepared) -> None:
        """cache_control breakpoints (Anthropic family) or prompt_cache_key (OpenAI)."""
        rule = self.cache_rule(prepared.target.model_name)
        # Where the layout says the stable prefix ends (the backbone: system, frozen
        # and recent turns; else None: all but the current input).
        stable = prepared.assembled.stable_messages if prepared.assembled is not None else None
        forwarded_is_managed = (
            prepared.assembled is not None and prepared.forwarded is prepared.assembled.messages
        )
        stable_upto = stable - 1 if stable and forwarded_is_managed else None
        messages, extra, record = cache_hints(
            self.settings.memory.cache,
            rule,
            prepared.forwarded,
            prepared.req.params,
            prepared.session_id,
            stable_upto,
        )
        if messages is not prepared.forwarded or extra:
            prepared.unhinted = prepared.forwarded
        prepared.forwarded = messages
        prepared.extra_params.update(extra)
        if record:
            prepared.cache["hints"] = record

    def _cache_bill(self, prepared: Prepared, outcome: Outcome) -> dict[str, Any] | None:
        """The request's cache usage, priced (None: the provider reported no usage)."""
        usage = cache_usage(outcome.usage)
        if usage is None:
            return None
        route = outcome.extra.get("upstream")
        model = route.get("model") if isinstance(route, dict) else None
        name = model if isinstance(model, str) and model else prepared.target.model_name
        try:
            rule = self.cache_rule(name)
        except ProxyError:
            name, rule = prepared.target.model_name, self.cache_rule(prepared.target.model_name)
        return bill(usage, rule, prices_from(self.upstream.price_info(name), rule))

    async def _assemble_managed(
        self, prepared: Prepared, items: list[MemoryItem]
    ) -> AssembledContext:
        """Assemble; when the recent window overflows, compact and assemble again."""
        preset, resolution = prepared.preset, prepared.resolution
        assert resolution is not None
        layers = None
        if preset.summarizer is not None or preset.recall is not None:
            rewound = resolution.start if resolution.kind in ("regenerate", "rewind") else None
            fork = resolution.start if resolution.kind == "fork" else None
            layers = await self.lifecycle.state(resolution.session, prepared.turns, rewound, fork)
        prepared.layers = layers
        if preset.extractor is not None:
            prepared.user = user_scope(prepared.ctx.user_header, prepared.req.params)
            prepared.longterm = await self.longterm.backfill(
                prepared.ctx.tenant_id, prepared.user, resolution.session.id,
                [*prepared.system, *prepared.turns], items, prepared.budget, prepared.counter,
                prepared.policy_calls,
            )  # fmt: skip
        managed = self._assemble(prepared, items, layers)
        while (
            managed.compact_upto is not None
            and layers is not None
            and preset.summarizer is not None
            and len(prepared.compactions) < 2
        ):
            start = layers.upto
            await self.lifecycle.compact(
                resolution.session.id,
                layers,
                prepared.turns,
                managed.compact_upto,
                preset.summarizer,
                managed.summary_cap,
                prepared.counter,
            )
            prepared.compactions.append((start, managed.compact_upto))
            managed = self._assemble(prepared, items, layers)
        summarizer = preset.summarizer
        if prepared.compactions and managed.summary_trimmed and layers and summarizer:
            # The summary no longer fits its share: trim it now, in the request
            # whose prompt changes anyway, rather than line by line later.
            target = int(managed.summary_cap * summarizer.params.trim_to)
            await self.lifecycle.trim(resolution.session.id, layers, target, prepared.counter)
            prepared.lifecycle_trimmed = True
            managed = self._assemble(prepared, items, layers)
        if layers is not None:
            rebuilt = managed.memory_layout is not None and managed.memory_layout is not (
                layers.layout
            )
            if managed.memory_layout is not None:
                layers.layout = managed.memory_layout
            layers.notes = managed.placed_notes
            if managed.backbone_levels is not None:
                layers.backbone = managed.backbone_levels
            if rebuilt and self.store.shared:
                # Several replicas: the next request may be served by another one.
                await self.store.save_layout(resolution.session.id, layers.layout)
            prepared.lifecycle = {
                "summary_upto": layers.upto,
                "summary_chunks": len(layers.chunks),
                "compactions": [list(c) for c in prepared.compactions],
                "summary_trimmed": prepared.lifecycle_trimmed,
                "memory_layout": "rebuilt" if rebuilt and managed.memory_layout else "kept",
                "repromoted": list(managed.repromoted_ids),
            }
        return managed

    def _assemble(
        self, prepared: Prepared, items: list[MemoryItem], layers: SessionLayers | None
    ) -> AssembledContext:
        system, history, tail = split_mandatory([*prepared.system, *prepared.turns])
        assembler = prepared.preset.assembler
        assert assembler is not None
        recalled = []
        recall = prepared.preset.recall
        if layers is not None and recall is not None and recall.max_hits:
            query = term_set("\n".join(t.text for t in tail if t.role == "user"))
            recalled = self.lifecycle.recall(
                layers, prepared.turns, query, limit=recall.max_hits, min_score=recall.min_score
            )
        background = prepared.longterm
        managed = assembler.assemble(
            AssemblyInput(
                system=system,
                history=history,
                tail=tail,
                items=items,
                summary=None,
                budget=prepared.budget - (background.tokens if background else 0),
                count=prepared.counter,
                current_ordinal=prepared.turns[-1].ordinal if prepared.turns else 0,
                raw_tokens=prepared.raw_tokens,
                summary_chunks=tuple(layers.chunks) if layers else (),
                summary_upto=layers.upto if layers else 0,
                recalled=recalled,
                memory_layout=layers.layout if layers else None,
                placed_notes=layers.notes if layers else (),
                # Kept per process: with several replicas each lays the frozen
                # part out afresh, so they forward the same context.
                backbone_levels=layers.backbone if layers and not self.store.shared else {},
            )
        )
        if background is None:
            return managed
        return place_backfill(managed, background, len(tail), prepared.budget)

    # --- store faults (memory.on_store_error) ------------------------------------

    async def prepare_guarded(self, req: ChatRequest, ctx: RequestContext) -> Prepared:
        """`prepare`, with a failing store handled as `memory.on_store_error` says.

        `open`: the client's own messages go upstream unmanaged, marked degraded;
        `closed`: a 503. Every store wait is bounded (`memory.store_timeout_s`).
        """
        try:
            return await self.prepare(req, ctx)
        except Exception as exc:
            reason = store_fault(exc)
            if reason is None:
                raise
        log.warning("memory store unavailable, request %s: %s", ctx.request_id, reason)
        if self.settings.memory.on_store_error == "closed":
            raise _store_unavailable(reason)
        target = self.upstream.resolve(req.model)
        counter = self.counters.for_model(target.provider_model)
        conv = build_conversation(counter, req.messages)
        tokens = sum(t.tokens for t in (*system_turns(counter, conv.system), *conv.turns))
        budget = self._budget(req, ctx, target)
        preset = self._preset(ctx.policy_header)
        prepared = Prepared(
            ctx, req, target, "raw", preset, counter, budget, tokens, req.messages, tokens
        )
        prepared.degraded = reason
        return prepared

    async def store_answer(self, prepared: Prepared, message: dict[str, Any]) -> None:
        """`record_answer`; if the store fails, degrade (open) or raise a 503 (closed)."""
        try:
            await self.record_answer(prepared, message)
        except Exception as exc:
            reason = store_fault(exc)
            if reason is None:
                raise
            log.warning("answer of request %s not stored: %s", prepared.ctx.request_id, reason)
            if prepared.session_id:
                self.forget_cached(prepared.session_id)
            if self.settings.memory.on_store_error == "closed":
                raise _store_unavailable(reason, answered=True) from None
            prepared.degraded = reason

    def forget_cached(self, session_id: str) -> None:
        """Drop a session's in-process state; the next request reloads it from the store.

        Called when another replica wrote to the session, after a failed store
        write, and when an operator edits or erases the session.
        """
        self.cache.drop(session_id)
        self.memory.invalidate(session_id)
        self.lifecycle.drop(session_id)
        self._last_forwarded.pop(session_id, None)

    # --- after the answer ---------------------------------------------------------

    async def record_answer(self, prepared: Prepared, message: dict[str, Any]) -> None:
        """Store the assistant turn before the client can send the next request."""
        if prepared.resolution is None:
            return
        session = prepared.resolution.session
        ordinal = len(prepared.turns)
        answer = clean_answer(message)
        turn = make_turn(prepared.counter, answer, ordinal)
        content_hash = message_hash(answer)
        chain = chain_hashes([content_hash], prepared.chain[-1] if prepared.chain else "")[0]
        # Turns already stored past this point came from a request this one replaces
        # (a regenerate that raced it): their memory goes with them.
        replacing = session.message_count > ordinal
        await self.store.write_turns(
            session,
            ordinal,
            [stored_from_turn(turn, content_hash, chain)],
            drop_items_from=ordinal if replacing else None,
        )
        if replacing:
            self.memory.invalidate(session.id)
            self.lifecycle.rewind(session.id, ordinal)
            if self.store.shared:
                await self.store.save_layout(session.id, None)
        cached = self.cache.get(session.id)
        if cached is not None and len(cached.turns) == ordinal:
            cached.raws.append(answer)
            cached.turns.append(turn)
            cached.hashes.append(content_hash)
            cached.chain.append(chain)
        else:
            self.cache.drop(session.id)

    def finish(self, prepared: Prepared, outcome: Outcome) -> None:
        """Off the response path: extract from the answer, log, release the session."""
        task = asyncio.create_task(self._finish(prepared, outcome))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _finish(self, prepared: Prepared, outcome: Outcome) -> None:
        job: ConsolidationJob | None = None
        try:
            # A degraded answer is not in the store: no memory comes from it.
            stored = prepared.resolution is not None and not prepared.degraded
            if outcome.answer is not None and stored:
                await self._extract_answer(prepared, outcome.answer)
            if stored:
                await self._forget(prepared)
                await self._refine_summary(prepared)
            if prepared.user is not None and stored and prepared.resolution is not None:
                session_id = prepared.resolution.session.id
                job = ConsolidationJob(
                    prepared.ctx.tenant_id, prepared.user, session_id,
                    tuple(await self.memory.items(session_id)),
                    tuple(prepared.turns), prepared.resolution.start,
                    vectors=self.longterm.new_job_vectors(),
                )  # fmt: skip
                # Queued now, in session order; its vectors follow (the worker waits).
                if not self.longterm.submit(job):
                    job = None
        except Exception:
            log.exception("post-response memory update failed")
            if prepared.session_id:
                self.forget_cached(prepared.session_id)
        finally:
            prepared.release()
        if job is not None and job.vectors is not None:
            # After the release, so the session's next request does not wait for it;
            # before the record, so the call is recorded with this request.
            await self.longterm.embed_job(job, prepared.policy_calls)
        if outcome.cost is None and outcome.cost_source is not None:
            # litellm's cost lookup takes ~1 ms: done here, not before responding.
            outcome.cost = self.upstream.cost(outcome.cost_source)
            outcome.cost_source = None
        if outcome.cost is None and outcome.cost_usage is not None:
            outcome.cost = self.upstream.usage_cost(*outcome.cost_usage)
        compare = outcome.extra.pop("compare_task", None)
        if compare is not None:
            outcome.extra["compare"] = await compare
        cache_bill = self._cache_bill(prepared, outcome)
        if cache_bill is not None:
            prepared.cache.update(cache_bill)
            self.metrics.observe_cache(prepared.mode, cache_bill)
        self.metrics.observe(
            mode=prepared.mode,
            status=outcome.status,
            raw_tokens=prepared.raw_tokens,
            forwarded_tokens=prepared.context_tokens,
            cost=outcome.cost,
            seconds=time.perf_counter() - prepared.ctx.started,
            upstream_error=outcome.status >= 400,
        )
        self.request_log.submit(self._record(prepared, outcome))

    def raw_messages(self, prepared: Prepared) -> list[dict[str, Any]]:
        """What raw mode would have sent: the client's messages (stateful: the store's)."""
        if prepared.resolution is not None and prepared.resolution.kind == "stateful":
            return [t.raw for t in (*prepared.system, *prepared.turns)]
        return prepared.req.messages

    def start_compare(self, prepared: Prepared) -> asyncio.Task[dict[str, Any]] | None:
        """Compare mode: the raw request, sent concurrently with the managed one."""
        if prepared.mode != "compare":
            return None
        raw = self.raw_messages(prepared)
        call = self.upstream.build_call(prepared.target, raw, prepared.req.params, stream=False)

        async def run() -> dict[str, Any]:
            result: dict[str, Any] = {"raw_tokens": prepared.raw_tokens}
            try:
                completion = await self.upstream.complete(call)
            except ProxyError as exc:
                result.update(raw_error=exc.message, raw_status=exc.status)
                return result
            result.update(
                raw_response=completion.body,
                raw_usage=completion.usage,
                raw_upstream_ms=completion.upstream_ms,
            )
            return result

        return asyncio.create_task(run())

    async def _extract_answer(self, prepared: Prepared, answer: dict[str, Any]) -> None:
        assert prepared.resolution is not None
        session_id = prepared.resolution.session.id
        used = prepared.assembled.used_item_ids if prepared.assembled else ()
        self.memory.mark_used(session_id, used, len(prepared.turns))
        if prepared.preset.extractor is None or prepared.mode == "raw":
            await self.memory.flush(session_id)
            return
        turn = make_turn(prepared.counter, clean_answer(answer), len(prepared.turns))
        system_prompt = "\n".join(t.text for t in prepared.system)
        llm = self.llm.extractor(prepared.preset.extractor)
        if llm is not None:
            # The rules served the response path; the model redoes this request's
            # turns (the answer included) now, in session order.
            changed, calls = await self.memory.reextract(
                session_id,
                llm,
                [*prepared.turns, turn],
                prepared.resolution.start,
                system_prompt,
            )
            prepared.policy_calls += calls
            if changed:
                return
        await self.memory.extract(
            session_id,
            prepared.preset.extractor,
            [*prepared.turns, turn],
            len(prepared.turns),
            system_prompt,
        )

    async def _forget(self, prepared: Prepared) -> None:
        """Persist graded forgetting decided by this request's assembly."""
        ctx = prepared.assembled or prepared.shadow
        if ctx is None or ctx.memory_layout is None or prepared.resolution is None:
            return
        session_id = prepared.resolution.session.id
        items = {it.id: it for it in await self.memory.items(session_id)}
        archive = [
            i
            for i, tier in ctx.memory_layout.tiers.items()
            if tier == "archived" and i in items and items[i].status == "active"
        ]
        if not archive and not ctx.repromoted_ids:
            return
        ordinal = prepared.turns[-1].ordinal if prepared.turns else 0
        changed = await self.memory.set_tiers(session_id, archive, ctx.repromoted_ids, ordinal)
        prepared.lifecycle["archived"] = [i for i in changed if i in set(archive)]

    async def _refine_summary(self, prepared: Prepared) -> None:
        """With `memory.summarizer: llm`, rewrite this request's new chunks by the model.

        The rules wrote them on the response path. On any failure the rules'
        chunk simply stays (the session is left as it was).
        """
        layers, resolution = prepared.layers, prepared.resolution
        llm = self.llm.summarizer(prepared.preset.summarizer)
        if llm is None or layers is None or resolution is None or not prepared.compactions:
            return
        for start, upto in prepared.compactions:
            position = next(
                (i for i, c in enumerate(layers.chunks) if (c.start, c.upto) == (start, upto)),
                None,
            )
            if position is None:
                continue  # merged by a trim since: nothing of its own to rewrite
            evicted = layers.dated([t for t in prepared.turns if start <= t.ordinal < upto])
            chunk, call = await llm.summarize_async(layers.chunks[:position], evicted, start, upto)
            prepared.policy_calls.append(call)
            if call.outcome == "ok":
                await self.lifecycle.replace_chunk(
                    resolution.session.id, layers, chunk, prepared.counter
                )

    def _record(self, prepared: Prepared, outcome: Outcome) -> dict[str, Any]:
        resolution = prepared.resolution
        record = {
            "session_kind": resolution.kind if resolution else None,
            "operations": prepared.operations,
            "managed": context_record(prepared.assembled),
            "shadow": context_record(prepared.shadow),
            "forwarded": prepared.forwarded,
            "params": dict(prepared.req.params),
            "response": outcome.response,
            "error": outcome.error,
            "usage": outcome.usage,
            "cost": outcome.cost,
            **outcome.extra,
        }
        if prepared.cache:
            record["cache"] = prepared.cache
        if prepared.lifecycle:
            record["lifecycle"] = prepared.lifecycle
        if prepared.user is not None:
            background = prepared.longterm
            record["long_term"] = {
                "user": prepared.user,
                "shown": background.item_ids if background else [],
                "conflicts": background.conflicts if background else {},
            }
        if prepared.degraded:
            record["degraded"] = prepared.degraded
        if prepared.policy_calls:
            # LLM-backed extraction / summarisation this request caused.
            calls = [c.as_dict() for c in prepared.policy_calls]
            costs = [c.cost for c in prepared.policy_calls if c.cost is not None]
            record["policy_calls"] = calls
            record["policy_tokens"] = sum(
                c.prompt_tokens + c.completion_tokens for c in prepared.policy_calls
            )
            record["policy_cost"] = round(sum(costs), 8) if costs else None
        return self.request_log.row(
            record=record,
            id=prepared.ctx.request_id,
            tenant_id=prepared.ctx.tenant_id,
            session_id=prepared.session_id,
            mode=prepared.mode,
            policy=prepared.preset.name,
            model=prepared.req.model,
            status=outcome.status,
            budget=prepared.budget,
            raw_tokens=prepared.raw_tokens,
            context_tokens=prepared.context_tokens,
            prefix_share=(
                prefix_share(*prepared.prefix_of, prepared.counter) if prepared.prefix_of else None
            ),
            proxy_ms=prepared.proxy_ms,
            upstream_ms=outcome.upstream_ms,
            prompt_tokens=prepared.cache.get("prompt_tokens"),
            cached_tokens=prepared.cache.get("cached_tokens"),
            cache_write_tokens=prepared.cache.get("written_tokens"),
            input_cost=prepared.cache.get("input_cost"),
        )

    # --- non-streaming ----------------------------------------------------------------

    async def complete(self, prepared: Prepared, wire: WireFormat = CHAT_WIRE) -> Response:
        """Forward, store the answer, answer the client in `wire`'s format."""
        call = self.upstream.build_call(
            prepared.target,
            prepared.forwarded,
            prepared.params,
            stream=False,
            about=prepared,
            **prepared.call_args(),
        )
        compare = self.start_compare(prepared)
        extra: dict[str, Any] = {"compare_task": compare} if compare is not None else {}
        if wire is not CHAT_WIRE:
            extra["wire"] = wire.name
        try:
            completion = await self.upstream.complete(call)
        except ProxyError as exc:
            if exc.route:
                extra["upstream"] = exc.route  # retries and fallbacks tried
            self.finish(prepared, Outcome(exc.status, error=exc.message, extra=extra))
            return wire.error(exc, prepared.headers())
        except BaseException:
            prepared.release()
            raise
        extra["upstream"] = completion.route  # which model answered, after which attempts
        answer = None
        choices = completion.body.get("choices") or []
        if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
            answer = choices[0]["message"]
            try:
                await self.store_answer(prepared, answer)
            except ProxyError as exc:
                self.finish(prepared, Outcome(exc.status, error=exc.message, extra=extra))
                return wire.error(exc, prepared.headers())
            except BaseException:
                prepared.release()
                raise
        self.finish(
            prepared,
            Outcome(
                200,
                answer,
                completion.body,
                usage=completion.usage,
                upstream_ms=completion.upstream_ms,
                cost_source=completion.response_obj,
                extra=extra,
            ),
        )
        return JSONResponse(wire.render(completion.body), headers=prepared.headers())

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
