"""Prepare: from a parsed chat request to a frozen `RequestPlan`.

resolve the session → ingest the new turns → extract memory → assemble the
context → choose what to forward (raw when cheaper, cache hints). Each step
returns a new plan; the last one is what `forward` sends.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.budget import resolve_budget, split_mandatory
from policies.extract.linking import decisions
from policies.language.text import term_set
from policies.llm import PolicyCall
from policies.longterm.backfill import place_backfill
from policies.registry import Preset
from policies.types import AssembledContext, MemoryItem, Turn
from proxy.cache_bill import cache_hints, raw_decision
from proxy.chat.plan import (
    MODES,
    RequestContext,
    RequestPlan,
    TurnWrite,
    ab_arm,
    store_unavailable,
)
from proxy.chat_request import ChatRequest, chain_hashes, message_hash
from proxy.conversation import (
    Conversation,
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
from proxy.lifecycle import SessionLayers
from proxy.longterm import user_scope
from proxy.sessions import Resolution, Ticket, match_scope
from proxy.store.faults import store_fault
from proxy.store.repo import SessionRow, StoredMessage
from proxy.tokens import TokenCounter
from proxy.upstream_wire import Target

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline

log = logging.getLogger("memproxy.pipeline")


def _mode(p: Pipeline, header: str | None) -> str:
    mode = (header or p.settings.memory.default_mode).strip().lower()
    if mode not in MODES:
        raise ProxyError(
            400,
            f"X-Memory-Mode: unknown mode {header!r}; expected one of {', '.join(MODES)}",
            param="X-Memory-Mode",
            code="invalid_header",
        )
    return mode


def _preset(p: Pipeline, header: str | None) -> Preset:
    try:
        return p.policies.preset(header)
    except ValueError as exc:
        raise ProxyError(400, str(exc), param="X-Memory-Policy", code="invalid_header") from None


def _budget(p: Pipeline, req: ChatRequest, ctx: RequestContext, target: Target) -> int:
    memory = p.settings.memory
    window = None
    if ctx.budget_header is None and memory.budget_tokens is None:
        window = p.upstream.input_window(target)
    try:
        return resolve_budget(
            ctx.budget_header,
            memory.budget_tokens,
            window,
            req.requested_output,
            default_window=memory.default_context_window,
        )
    except ValueError as exc:
        raise ProxyError(400, str(exc), param="X-Memory-Budget", code="invalid_header") from None


def _stored_turns(cached: SessionTurns) -> list[StoredMessage]:
    """A cached session's turns as stored rows (only a stateful append needs them)."""
    return [
        stored_from_turn(t, h, c)
        for t, h, c in zip(cached.turns, cached.hashes, cached.chain, strict=True)
    ]


async def prepare_guarded(p: Pipeline, req: ChatRequest, ctx: RequestContext) -> RequestPlan:
    """`prepare`, with a failing store handled as `memory.on_store_error` says.

    `open`: the client's own messages go upstream unmanaged, marked degraded;
    `closed`: a 503. Every store wait is bounded (`memory.store_timeout_s`).
    """
    try:
        return await prepare(p, req, ctx)
    except Exception as exc:
        reason = store_fault(exc)
        if reason is None:
            raise
    log.warning("memory store unavailable, request %s: %s", ctx.request_id, reason)
    if p.settings.memory.on_store_error == "closed":
        raise store_unavailable(reason)
    target = p.upstream.resolve(req.model)
    counter = p.counters.for_model(target.provider_model)
    conv = build_conversation(counter, req.messages)
    tokens = sum(t.tokens for t in (*system_turns(counter, conv.system), *conv.turns))
    budget = _budget(p, req, ctx, target)
    preset = _preset(p, ctx.policy_header)
    return RequestPlan(
        ctx,
        req,
        target,
        "raw",
        preset,
        counter,
        budget,
        tokens,
        req.messages,
        tokens,
        degraded=reason,
    )


@dataclass(frozen=True, slots=True)
class _Admitted:
    """A request past the conversation lock (`_admit`): its conversation, its
    session and its place in the session's queue."""

    conv: Conversation
    sys_turns: list[Turn]
    raw_tokens: int  # the client's messages as sent
    session: SessionRow
    resolution: Resolution | None  # None: a named session, resolved in its turn
    ticket: Ticket
    turn_write: TurnWrite | None  # the new turns' write, when it was started


async def _admit(
    p: Pipeline, req: ChatRequest, ctx: RequestContext, counter: TokenCounter, split: int
) -> _Admitted:
    """Recognise the conversation and resolve its session under the conversation
    lock, then queue for the session.

    Conversations with different first turns can never match each other, so the
    lock is per (scope, first turn) or per named session. The cache is read under
    it too: a request that waited must see what the previous wrote. A transparent
    match whose new turns are written keeps the lock until they are stored.
    """
    named = ctx.session_header
    # Transparent matching stays within the end user, when the request names one.
    scope = (
        ctx.tenant_id
        if named is not None
        else match_scope(ctx.tenant_id, user_scope(ctx.user_header, req.params))
    )
    first_hash = message_hash(req.messages[split])
    held = await p.conversation_locks(f"{scope}:{named or first_hash}")
    unlock: Callable[[], None] | None = held.release
    turn_write: TurnWrite | None = None
    try:
        if named is None and p.store.shared:
            for entry in p.cache.candidates(scope, first_hash):
                await p.store.sync(entry.session.id)
        conv, known = _recognise(p, counter, req.messages, ctx, scope)
        sys_turns = system_turns(counter, conv.system)
        raw_tokens = sum(t.tokens for t in sys_turns) + sum(t.tokens for t in conv.turns)
        resolution: Resolution | None = None
        if named is not None:
            session = await p.resolver.named_session(ctx.tenant_id, named, conv)
        else:
            resolution = await p.resolver.resolve(scope, conv, known)
            session = resolution.session
            if resolution.pending is not None:
                # The lock is held until the turns are stored: another request of
                # this conversation resolves against them.
                turn_write = TurnWrite(resolution.pending(), then=held.release)
                unlock = None
        ticket = p.queue.enter(session.id)
    finally:
        if unlock is not None:
            unlock()
    return _Admitted(conv, sys_turns, raw_tokens, session, resolution, ticket, turn_write)


async def _resolve_named(
    p: Pipeline, session: SessionRow, conv: Conversation
) -> tuple[Resolution, TurnWrite | None]:
    """A named session's resolution, once its turn in the queue has come, and
    the write of its new turns (None: nothing new to write)."""
    # Earlier requests of this session may have written since the lookup.
    cached = p.cache.get(session.id)
    if cached is not None:
        session = cached.session
    else:
        session = await p.store.get_session(session.id) or session
    prefix = None
    if cached is not None and len(cached.turns) == session.message_count:
        prefix = partial(_stored_turns, cached)
    resolution = await p.resolver.resolve_named(session, conv, prefix)
    if resolution.pending is not None:
        return resolution, TurnWrite(resolution.pending())
    return resolution, None


async def prepare(p: Pipeline, req: ChatRequest, ctx: RequestContext) -> RequestPlan:
    """The plan of one request: its target, mode, preset and budget; then the
    session (`_admit`, `_resolve_named`) and the steps within it
    (`_prepare_in_session`). On failure the session's queue moves on, with the
    new turns' write settled first."""
    await p.upstream.ready()
    target = p.upstream.resolve(req.model)
    mode, preset = _mode(p, ctx.mode_header), _preset(p, ctx.policy_header)
    budget = _budget(p, req, ctx, target)
    counter = p.counters.for_model(target.provider_model)
    split = split_system(req.messages)
    if split == len(req.messages):
        conv = build_conversation(counter, req.messages)
        sys_turns = system_turns(counter, conv.system)
        raw_tokens = sum(t.tokens for t in sys_turns)
        # Nothing but system messages: no conversation to manage.
        return RequestPlan(
            ctx, req, target, mode, preset, counter, budget, raw_tokens, req.messages, raw_tokens
        )
    admitted = await _admit(p, req, ctx, counter, split)
    session, ticket = admitted.session, admitted.ticket
    resolution, turn_write = admitted.resolution, admitted.turn_write
    try:
        await ticket.wait()
        if resolution is None:
            resolution, turn_write = await _resolve_named(p, session, admitted.conv)
        if ctx.mode_header is None and p.settings.memory.ab_split is not None:
            mode = ab_arm(resolution.session.id, p.settings.memory.ab_split)
        plan = RequestPlan(
            ctx,
            req,
            target,
            mode,
            preset,
            counter,
            budget,
            admitted.raw_tokens,
            req.messages,
            admitted.raw_tokens,
            ticket.release,
            resolution,
            turn_write=turn_write,
        )
        return await _prepare_in_session(p, plan, admitted.conv, admitted.sys_turns)
    except BaseException:
        try:
            if turn_write is not None:
                # Settled before the session's next request may start.
                await _settled(p, turn_write)
        finally:
            ticket.release()
            p.forget_cached(session.id)  # a failed write may leave caches ahead of the store
        raise


async def _settled(p: Pipeline, turn_write: TurnWrite) -> None:
    """Until the turn write settles, its failure noted as a store fault: the
    request went on while it failed, so connections opened meanwhile are suspect
    too (the store checks them before their next use)."""
    try:
        await turn_write.wait()
    except Exception as exc:
        if store_fault(exc) is not None:
            p.store.note_fault()


def _recognise(
    p: Pipeline,
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
    split = split_system(messages)
    raws = messages[split:]
    if not raws:
        return build_conversation(counter, messages), None
    first = message_hash(raws[0])
    for cached in p.cache.candidates(scope, first):
        if cached.session.message_count != len(cached.raws):
            continue  # written since it was cached: let the store decide
        shared = shared_prefix(cached, raws, first, p.cache.proven(messages, cached))
        if shared:
            conv = build_conversation(counter, messages, cached, shared)
            known = None if ctx.session_header is not None else (cached.session, shared)
            return conv, known
    return build_conversation(counter, messages), None


def _session_turns(
    plan: RequestPlan, conv: Conversation, sys_turns: list[Turn]
) -> tuple[RequestPlan, list[str]]:
    """The plan with the session's turns (the store's prefix first, in stateful mode),
    and their content hashes."""
    resolution = plan.resolution
    assert resolution is not None
    if resolution.kind != "stateful":
        plan = replace(plan, turns=conv.turns, system=sys_turns, chain=conv.chain)
        return plan, conv.hashes
    # The client sent only the new turns; the rest comes from the store.
    prefix = [turn_from_stored(s) for s in resolution.prefix]
    base = len(prefix)
    new = [make_turn(plan.counter, t.raw, base + i) for i, t in enumerate(conv.turns)]
    turns = [*prefix, *new]
    previous = resolution.prefix[-1].chain_hash if resolution.prefix else ""
    chain = [*(s.chain_hash for s in resolution.prefix), *chain_hashes(conv.hashes, previous)]
    hashes = [*(s.content_hash for s in resolution.prefix), *conv.hashes]
    if not conv.system and resolution.session.system:
        sys_turns = system_turns(plan.counter, resolution.session.system)
    raw_tokens = sum(t.tokens for t in (*sys_turns, *turns))
    plan = replace(
        plan,
        turns=turns,
        system=sys_turns,
        chain=chain,
        raw_tokens=raw_tokens,
        context_tokens=raw_tokens,
        forwarded=[t.raw for t in (*sys_turns, *turns)],
    )
    return plan, hashes


async def _prepare_in_session(
    p: Pipeline, plan: RequestPlan, conv: Conversation, sys_turns: list[Turn]
) -> RequestPlan:
    resolution = plan.resolution
    assert resolution is not None
    session = resolution.session
    if resolution.items_changed:
        p.memory.invalidate(session.id)
    plan, hashes = _session_turns(plan, conv, sys_turns)
    turns = plan.turns
    # The turns as this client sent them (its copy of our earlier answers may carry
    # extra null fields): what its next request will resend, compared at C speed.
    stateful = resolution.kind == "stateful"
    sent = [t.raw for t in turns] if stateful else list(conv.raws)
    entry = SessionTurns(session, sent, list(turns), list(hashes), list(plan.chain))
    entry.validated = 0 if stateful else len(sent)
    p.cache.put(entry)
    if plan.mode != "raw" and plan.preset.extractor is not None:
        system_prompt = "\n".join(t.text for t in plan.system)
        results = await p.memory.extract(
            session.id,
            plan.preset.extractor,
            turns,
            resolution.start,
            system_prompt,
            before_save=plan.turns_stored,
        )
        operations = tuple(
            {
                "ordinal": o,
                "operation": e.operation,
                "ops": len(e.ops),
                "reason": e.reason,
                # Which linker replaced, revoked or flagged what, and why (inspect).
                "decisions": decisions(e.ops),
            }
            for o, e in results
        )
        plan = replace(plan, operations=operations)
    raw_forward = plan.forwarded  # the client's messages (stateful: the store's)
    if plan.mode != "raw" and plan.preset.assembler is not None:
        items = await p.memory.items(session.id)
        plan = await _assemble_managed(p, plan, items)
    previous = p.last_forwarded(session.id)
    if p.settings.memory.cache.raw_when_cheaper:
        plan = _raw_when_cheaper(p, plan, raw_forward, previous)
    plan = _add_cache_hints(p, plan)
    p.remember_forwarded(session.id, plan.forwarded)
    return replace(
        plan,
        prefix_of=(previous, plan.forwarded),
        proxy_ms=(time.perf_counter() - plan.ctx.started) * 1000,
    )


# --- prompt caching (memory.cache) ---------------------------------------------------


def _raw_when_cheaper(
    p: Pipeline,
    plan: RequestPlan,
    raw_forward: list[dict[str, Any]],
    previous: list[dict[str, Any]] | None,
) -> RequestPlan:
    """Forward the client's own history where it costs less under the cache rule.

    Only in managed mode, for a managed (not passed-through) context, and never
    past the budget: the budget the user set stays the ceiling.
    """
    managed = plan.assembled
    if plan.mode not in ("managed", "compare") or managed is None or managed.passthrough:
        return plan
    if plan.raw_tokens > plan.budget:
        return plan
    rule = p.cache_rule(plan.target.model_name)
    cheaper, figures = raw_decision(rule, raw_forward, plan.forwarded, previous, plan.counter)
    cache = {**plan.cache, "decision": figures}
    if not cheaper:
        return replace(plan, cache=cache)
    # The managed context was computed and not sent: recorded as a shadow.
    return replace(
        plan,
        cache=cache,
        shadow=managed,
        assembled=None,
        forwarded=raw_forward,
        context_tokens=plan.raw_tokens,
    )


def _add_cache_hints(p: Pipeline, plan: RequestPlan) -> RequestPlan:
    """cache_control breakpoints (Anthropic family) or prompt_cache_key (OpenAI)."""
    rule = p.cache_rule(plan.target.model_name)
    # Where the layout says the stable prefix ends (the backbone: system, frozen
    # and recent turns; else None: all but the current input).
    assembled = plan.assembled
    stable = assembled.stable_messages if assembled is not None else None
    forwarded_is_managed = assembled is not None and plan.forwarded is assembled.messages
    stable_upto = stable - 1 if stable and forwarded_is_managed else None
    messages, extra, record = cache_hints(
        p.settings.memory.cache, rule, plan.forwarded, plan.req.params, plan.session_id, stable_upto
    )
    if messages is plan.forwarded and not extra and not record:
        return plan
    hinted = messages is not plan.forwarded or bool(extra)
    return replace(
        plan,
        forwarded=messages,
        unhinted=plan.forwarded if hinted else plan.unhinted,
        extra_params={**plan.extra_params, **extra},
        cache={**plan.cache, "hints": record} if record else plan.cache,
    )


# --- the managed context ----------------------------------------------------------------


async def _session_layers(p: Pipeline, plan: RequestPlan) -> SessionLayers | None:
    """The session's summary and recall layers, when the preset uses them (read,
    and a fork's copied, from the store: after the turns are stored, unless this
    process holds them)."""
    resolution = plan.resolution
    assert resolution is not None
    if plan.preset.summarizer is None and plan.preset.recall is None:
        return None
    rewound = resolution.start if resolution.kind in ("regenerate", "rewind") else None
    fork = resolution.start if resolution.kind == "fork" else None
    if not p.lifecycle.holds(resolution.session.id):
        await plan.turns_stored()  # the layers are read (and forks copied) from the store
    return await p.lifecycle.state(resolution.session, plan.turns, rewound, fork)


async def _with_longterm(
    p: Pipeline, plan: RequestPlan, items: list[MemoryItem], calls: list[PolicyCall]
) -> RequestPlan:
    """The plan with the end user's long-term memory backfilled (an extracting
    preset only); its policy calls go into `calls`."""
    if plan.preset.extractor is None:
        return plan
    assert plan.resolution is not None
    user = user_scope(plan.ctx.user_header, plan.req.params)
    longterm = await p.longterm.backfill(
        plan.ctx.tenant_id, user, plan.resolution.session.id, [*plan.system, *plan.turns],
        items, plan.budget, plan.counter, calls,
    )  # fmt: skip
    return replace(plan, user=user, longterm=longterm)


async def _keep_layers(
    p: Pipeline,
    plan: RequestPlan,
    managed: AssembledContext,
    layers: SessionLayers,
    compactions: list[tuple[int, int]],
    trimmed: bool,
) -> dict[str, Any]:
    """Keep what this assembly laid out for the next request (memory layout,
    notes in place, backbone levels); returns the request record's lifecycle."""
    assert plan.resolution is not None
    session_id = plan.resolution.session.id
    rebuilt = managed.memory_layout is not None and managed.memory_layout is not (layers.layout)
    if managed.memory_layout is not None:
        layers.layout = managed.memory_layout
    layers.notes = managed.placed_notes
    if managed.backbone_levels is not None:
        layers.backbone = managed.backbone_levels
    if managed.backbone_shown is not None:
        layers.backbone_shown = managed.backbone_shown
    if rebuilt and p.store.shared:
        # Several replicas: the next request may be served by another one.
        await plan.turns_stored()
        await p.store.save_layout(session_id, layers.layout)
    return {
        "summary_upto": layers.upto,
        "summary_chunks": len(layers.chunks),
        "compactions": [list(c) for c in compactions],
        "summary_trimmed": trimmed,
        "memory_layout": "rebuilt" if rebuilt and managed.memory_layout else "kept",
        "repromoted": list(managed.repromoted_ids),
    }


async def _assemble_managed(p: Pipeline, plan: RequestPlan, items: list[MemoryItem]) -> RequestPlan:
    """Assemble; when the recent window overflows, compact and assemble again."""
    preset, resolution = plan.preset, plan.resolution
    assert resolution is not None
    session_id = resolution.session.id
    layers = await _session_layers(p, plan)
    calls: list[PolicyCall] = list(plan.policy_calls)
    plan = await _with_longterm(p, plan, items, calls)
    managed = _assemble(p, plan, items, layers)
    compactions: list[tuple[int, int]] = []
    while (
        managed.compact_upto is not None
        and layers is not None
        and preset.summarizer is not None
        and len(compactions) < 2
    ):
        start = layers.upto
        await plan.turns_stored()  # summary chunks are stored after the turns they cover
        await p.lifecycle.compact(
            session_id,
            layers,
            plan.turns,
            managed.compact_upto,
            preset.summarizer,
            managed.summary_cap,
            plan.counter,
        )
        compactions.append((start, managed.compact_upto))
        managed = _assemble(p, plan, items, layers)
    summarizer = preset.summarizer
    trimmed = False
    if compactions and managed.summary_trimmed and layers and summarizer:
        # The summary no longer fits its share: trim it now, in the request
        # whose prompt changes anyway, rather than line by line later.
        target = int(managed.summary_cap * summarizer.params.trim_to)
        await p.lifecycle.trim(session_id, layers, target, plan.counter)
        trimmed = True
        managed = _assemble(p, plan, items, layers)
    lifecycle: dict[str, Any] = {}
    if layers is not None:
        lifecycle = await _keep_layers(p, plan, managed, layers, compactions, trimmed)
    plan = replace(
        plan,
        layers=layers,
        compactions=tuple(compactions),
        policy_calls=tuple(calls),
        lifecycle=lifecycle,
    )
    if plan.mode == "shadow":
        return replace(plan, shadow=managed)
    if not (managed.passthrough and resolution.kind != "stateful"):
        plan = replace(plan, forwarded=managed.messages)
    return replace(plan, assembled=managed, context_tokens=managed.tokens)


def _assemble(
    p: Pipeline, plan: RequestPlan, items: list[MemoryItem], layers: SessionLayers | None
) -> AssembledContext:
    system, history, tail = split_mandatory([*plan.system, *plan.turns])
    assembler = plan.preset.assembler
    assert assembler is not None
    recalled = []
    recall = plan.preset.recall
    if layers is not None and recall is not None and recall.max_hits:
        query = term_set("\n".join(t.text for t in tail if t.role == "user"))
        recalled = p.lifecycle.recall(
            layers, plan.turns, query, limit=recall.max_hits, min_score=recall.min_score
        )
    background = plan.longterm
    managed = assembler.assemble(
        AssemblyInput(
            system=system,
            history=history,
            tail=tail,
            items=items,
            summary=None,
            budget=plan.budget - (background.tokens if background else 0),
            count=plan.counter,
            current_ordinal=plan.turns[-1].ordinal if plan.turns else 0,
            raw_tokens=plan.raw_tokens,
            summary_chunks=tuple(layers.chunks) if layers else (),
            summary_upto=layers.upto if layers else 0,
            recalled=recalled,
            memory_layout=layers.layout if layers else None,
            placed_notes=layers.notes if layers else (),
            # Kept per process: with several replicas each lays the frozen
            # part out afresh, so they forward the same context.
            backbone_levels=layers.backbone if layers and not p.store.shared else {},
            backbone_shown=layers.backbone_shown if layers and not p.store.shared else {},
        )
    )
    if background is None:
        return managed
    return place_backfill(managed, background, len(tail), plan.budget)
