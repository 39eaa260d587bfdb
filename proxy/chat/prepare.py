"""Prepare: from a parsed chat request to a frozen `RequestPlan`.

resolve the session → ingest the new turns → extract memory → assemble the
context → choose what to forward (raw when cheaper, cache hints). Each step
returns a new plan; the last one is what `forward` sends. The steps live beside
it: the headers' choices in `options.py`, the session in `admit.py`, the managed
context in `managed.py`, the prompt-cache choices in `caching.py`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from policies.extract.linking import decisions
from policies.types import Turn
from proxy.chat.admit import admit, resolve_named, session_turns
from proxy.chat.caching import add_cache_hints, raw_when_cheaper
from proxy.chat.managed import assemble_managed
from proxy.chat.options import request_budget, request_mode, request_preset
from proxy.chat.plan import (
    RequestContext,
    RequestPlan,
    TurnWrite,
    ab_arm,
    store_unavailable,
)
from proxy.chat_request import ChatRequest
from proxy.conversation import (
    Conversation,
    SessionTurns,
    build_conversation,
    split_system,
    system_turns,
)
from proxy.store.faults import store_fault

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline

log = logging.getLogger("memproxy.pipeline")


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
    budget = request_budget(p, req, ctx, target)
    preset = request_preset(p, ctx.policy_header)
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


async def prepare(p: Pipeline, req: ChatRequest, ctx: RequestContext) -> RequestPlan:
    """The plan of one request: its target, mode, preset and budget; then the
    session (`proxy.chat.admit`: `admit`, `resolve_named`) and the steps within it
    (`_prepare_in_session`). On failure the session's queue moves on, with the
    new turns' write settled first."""
    await p.upstream.ready()
    target = p.upstream.resolve(req.model)
    mode, preset = request_mode(p, ctx.mode_header), request_preset(p, ctx.policy_header)
    budget = request_budget(p, req, ctx, target)
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
    admitted = await admit(p, req, ctx, counter, split)
    session, ticket = admitted.session, admitted.ticket
    resolution, turn_write = admitted.resolution, admitted.turn_write
    try:
        await ticket.wait()
        if resolution is None:
            resolution, turn_write = await resolve_named(p, session, admitted.conv)
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


async def _prepare_in_session(
    p: Pipeline, plan: RequestPlan, conv: Conversation, sys_turns: list[Turn]
) -> RequestPlan:
    resolution = plan.resolution
    assert resolution is not None
    session = resolution.session
    if resolution.items_changed:
        p.memory.invalidate(session.id)
    plan, hashes = session_turns(plan, conv, sys_turns)
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
        plan = await assemble_managed(p, plan, items)
    previous = p.last_forwarded(session.id)
    if p.settings.memory.cache.raw_when_cheaper:
        plan = raw_when_cheaper(p, plan, raw_forward, previous)
    plan = add_cache_hints(p, plan)
    p.remember_forwarded(session.id, plan.forwarded)
    return replace(
        plan,
        prefix_of=(previous, plan.forwarded),
        proxy_ms=(time.perf_counter() - plan.ctx.started) * 1000,
    )
