"""After the answer: store it, then (off the response path) learn from it and record.

`store_answer` runs before the client gets the end of the answer, so its next
request finds it. `finish` schedules the rest: extraction from the answer,
graded forgetting, the LLM summary rewrite, long-term consolidation, pricing,
metrics and the request record, then releases the session for its next request.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any

from policies.hybrid import HybridExtractor
from policies.llm import PolicyCall
from proxy.cache_bill import bill, cache_usage, prices_from
from proxy.chat.plan import RequestPlan, clean_answer, store_unavailable
from proxy.chat_request import chain_hashes, message_hash
from proxy.conversation import make_turn, stored_from_turn
from proxy.errors import ProxyError
from proxy.longterm import ConsolidationJob
from proxy.records import Outcome, context_record, prefix_share
from proxy.store.faults import store_fault

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline

log = logging.getLogger("memproxy.pipeline")


async def turns_stored(p: Pipeline, plan: RequestPlan) -> str | None:
    """Until the client's new turns are stored (they were written beside the upstream
    call); if the store failed, degrade (open: returns why) or raise a 503 (closed).

    Either way the failed write left nothing behind (one transaction), and the
    answer is not stored after turns that are not.
    """
    try:
        await plan.turns_stored()
    except Exception as exc:
        reason = store_fault(exc)
        if reason is None:
            raise
        p.store.note_fault()  # connections opened while it failed are suspect too
        log.warning("turns of request %s not stored: %s", plan.ctx.request_id, reason)
        if plan.session_id:
            p.forget_cached(plan.session_id)
        if p.settings.memory.on_store_error == "closed":
            raise store_unavailable(reason, answered=True) from None
        return reason
    return None


async def abandon(plan: RequestPlan) -> None:
    """A request that ends without an answer (the client went away): release the
    session once its turns are stored, so its next request finds them."""
    try:
        with contextlib.suppress(Exception):
            await plan.turns_stored()
    finally:
        plan.release()


async def store_answer(p: Pipeline, plan: RequestPlan, message: dict[str, Any]) -> str | None:
    """`record_answer`; if the store fails, degrade (open: returns why) or raise a 503
    (closed)."""
    try:
        await record_answer(p, plan, message)
    except Exception as exc:
        reason = store_fault(exc)
        if reason is None:
            raise
        log.warning("answer of request %s not stored: %s", plan.ctx.request_id, reason)
        if plan.session_id:
            p.forget_cached(plan.session_id)
        if p.settings.memory.on_store_error == "closed":
            raise store_unavailable(reason, answered=True) from None
        return reason
    return None


async def record_answer(p: Pipeline, plan: RequestPlan, message: dict[str, Any]) -> None:
    """Store the assistant turn before the client can send the next request."""
    if plan.resolution is None:
        return
    session = plan.resolution.session
    ordinal = len(plan.turns)
    answer = clean_answer(message)
    turn = make_turn(plan.counter, answer, ordinal)
    content_hash = message_hash(answer)
    chain = chain_hashes([content_hash], plan.chain[-1] if plan.chain else "")[0]
    # Turns already stored past this point came from a request this one replaces
    # (a regenerate that raced it): their memory goes with them.
    replacing = session.message_count > ordinal
    await p.store.write_turns(
        session,
        ordinal,
        [stored_from_turn(turn, content_hash, chain)],
        drop_items_from=ordinal if replacing else None,
    )
    if replacing:
        p.memory.invalidate(session.id)
        p.lifecycle.rewind(session.id, ordinal)
        if p.store.shared:
            await p.store.save_layout(session.id, None)
    cached = p.cache.get(session.id)
    if cached is not None and len(cached.turns) == ordinal:
        cached.raws.append(answer)
        cached.turns.append(turn)
        cached.hashes.append(content_hash)
        cached.chain.append(chain)
    else:
        p.cache.drop(session.id)


async def finish(p: Pipeline, plan: RequestPlan, outcome: Outcome) -> None:
    """Extract from the answer, persist what the assembly decided, release the
    session, then price, count and record the request."""
    job: ConsolidationJob | None = None
    calls: list[PolicyCall] = list(plan.policy_calls)
    lifecycle = plan.lifecycle
    degraded = plan.degraded or outcome.degraded
    try:
        if degraded is None:
            degraded = await _unstored(p, plan)  # forwarding may have ended before it
        # A degraded answer is not in the store: no memory comes from it.
        if plan.resolution is not None and not degraded:
            lifecycle, job = await _learn(p, plan, outcome, calls)
    except Exception:
        log.exception("post-response memory update failed")
        if plan.session_id:
            p.forget_cached(plan.session_id)
    finally:
        plan.release()
    if job is not None and job.vectors is not None:
        # After the release, so the session's next request does not wait for it;
        # before the record, so the call is recorded with this request.
        await p.longterm.embed_job(job, calls)
    if outcome.cost is None and outcome.cost_source is not None:
        # litellm's cost lookup takes ~1 ms: done here, not before responding.
        outcome.cost = p.upstream.pricing.cost(outcome.cost_source)
        outcome.cost_source = None
    if outcome.cost is None and outcome.cost_usage is not None:
        outcome.cost = p.upstream.pricing.usage_cost(*outcome.cost_usage)
    compare = outcome.extra.pop("compare_task", None)
    if compare is not None:
        outcome.extra["compare"] = await compare
    cache = plan.cache
    cache_bill = _cache_bill(p, plan, outcome)
    if cache_bill is not None:
        cache = {**cache, **cache_bill}
        p.metrics.observe_cache(plan.mode, cache_bill)
    p.metrics.observe(
        mode=plan.mode,
        status=outcome.status,
        raw_tokens=plan.raw_tokens,
        forwarded_tokens=plan.context_tokens,
        cost=outcome.cost,
        seconds=time.perf_counter() - plan.ctx.started,
        upstream_error=outcome.status >= 400,
    )
    p.request_log.submit(_record(p, plan, outcome, calls, lifecycle, cache, degraded))


async def _unstored(p: Pipeline, plan: RequestPlan) -> str | None:
    """Why the client's new turns are not stored (None: they are)."""
    try:
        await plan.turns_stored()
    except Exception as exc:
        if plan.session_id:
            p.forget_cached(plan.session_id)
        reason = store_fault(exc)
        if reason is not None:
            p.store.note_fault()  # connections opened while it failed are suspect too
        return reason or f"turns not stored: {type(exc).__name__}"
    return None


async def _learn(
    p: Pipeline, plan: RequestPlan, outcome: Outcome, calls: list[PolicyCall]
) -> tuple[dict[str, Any], ConsolidationJob | None]:
    """Memory from the answer, graded forgetting, the summary rewrite, and the
    long-term job; the lifecycle record and the queued job."""
    assert plan.resolution is not None
    lifecycle = plan.lifecycle
    if outcome.answer is not None:
        await _extract_answer(p, plan, outcome.answer, calls)
    archived = await _forget(p, plan)
    if archived is not None:
        lifecycle = {**lifecycle, "archived": archived}
    await _refine_summary(p, plan, calls)
    if plan.user is None:
        return lifecycle, None
    session_id = plan.resolution.session.id
    job = ConsolidationJob(
        plan.ctx.tenant_id, plan.user, session_id,
        tuple(await p.memory.items(session_id)),
        tuple(plan.turns), plan.resolution.start,
        vectors=p.longterm.new_job_vectors(),
    )  # fmt: skip
    # Queued now, in session order; its vectors follow (the worker waits).
    return lifecycle, job if p.longterm.submit(job) else None


async def _extract_answer(
    p: Pipeline, plan: RequestPlan, answer: dict[str, Any], calls: list[PolicyCall]
) -> None:
    assert plan.resolution is not None
    session_id = plan.resolution.session.id
    used = plan.assembled.used_item_ids if plan.assembled else ()
    p.memory.mark_used(session_id, used, len(plan.turns))
    if plan.preset.extractor is None or plan.mode == "raw":
        await p.memory.flush(session_id)
        return
    turn = make_turn(plan.counter, clean_answer(answer), len(plan.turns))
    system_prompt = "\n".join(t.text for t in plan.system)
    llm = plan.preset.extract_refiner
    if isinstance(llm, HybridExtractor):
        # The rules served the response path; the model settles their uncertain
        # links in this request's turns (the answer included) now, in session order.
        changed, made = await p.memory.refine(
            session_id, llm, [*plan.turns, turn], plan.resolution.start, system_prompt
        )
        calls += made
        if changed:
            return
    elif llm is not None:
        # The rules served the response path; the model redoes this request's
        # turns (the answer included) now, in session order.
        changed, made = await p.memory.reextract(
            session_id, llm, [*plan.turns, turn], plan.resolution.start, system_prompt
        )
        calls += made
        if changed:
            return
    await p.memory.extract(
        session_id, plan.preset.extractor, [*plan.turns, turn], len(plan.turns), system_prompt
    )


async def _forget(p: Pipeline, plan: RequestPlan) -> list[str] | None:
    """Persist graded forgetting decided by this request's assembly; the ids archived
    (None: nothing to persist)."""
    ctx = plan.assembled or plan.shadow
    if ctx is None or ctx.memory_layout is None or plan.resolution is None:
        return None
    session_id = plan.resolution.session.id
    items = {it.id: it for it in await p.memory.items(session_id)}
    archive = [
        i
        for i, tier in ctx.memory_layout.tiers.items()
        if tier == "archived" and i in items and items[i].status == "active"
    ]
    if not archive and not ctx.repromoted_ids:
        return None
    ordinal = plan.turns[-1].ordinal if plan.turns else 0
    changed = await p.memory.set_tiers(session_id, archive, ctx.repromoted_ids, ordinal)
    return [i for i in changed if i in set(archive)]


async def _refine_summary(p: Pipeline, plan: RequestPlan, calls: list[PolicyCall]) -> None:
    """With `memory.summarizer: llm`, rewrite this request's new chunks by the model.

    The rules wrote them on the response path. On any failure the rules'
    chunk simply stays (the session is left as it was).
    """
    layers, resolution = plan.layers, plan.resolution
    llm = plan.preset.summary_refiner
    if llm is None or layers is None or resolution is None or not plan.compactions:
        return
    for start, upto in plan.compactions:
        position = next(
            (i for i, c in enumerate(layers.chunks) if (c.start, c.upto) == (start, upto)),
            None,
        )
        if position is None:
            continue  # merged by a trim since: nothing of its own to rewrite
        evicted = layers.dated([t for t in plan.turns if start <= t.ordinal < upto])
        chunk, call = await llm.summarize_async(layers.chunks[:position], evicted, start, upto)
        calls.append(call)
        if call.outcome == "ok":
            await p.lifecycle.replace_chunk(resolution.session.id, layers, chunk, plan.counter)


def _cache_bill(p: Pipeline, plan: RequestPlan, outcome: Outcome) -> dict[str, Any] | None:
    """The request's cache usage, priced (None: the provider reported no usage)."""
    usage = cache_usage(outcome.usage)
    if usage is None:
        return None
    route = outcome.extra.get("upstream")
    model = route.get("model") if isinstance(route, dict) else None
    name = model if isinstance(model, str) and model else plan.target.model_name
    try:
        rule = p.cache_rule(name)
    except ProxyError:
        name, rule = plan.target.model_name, p.cache_rule(plan.target.model_name)
    return bill(usage, rule, prices_from(p.upstream.pricing.price_info(name), rule))


def _record(
    p: Pipeline,
    plan: RequestPlan,
    outcome: Outcome,
    calls: list[PolicyCall],
    lifecycle: dict[str, Any],
    cache: dict[str, Any],
    degraded: str | None,
) -> dict[str, Any]:
    resolution = plan.resolution
    record = {
        "session_kind": resolution.kind if resolution else None,
        "operations": [*plan.operations, *_model_decisions(calls)],
        "managed": context_record(plan.assembled),
        "shadow": context_record(plan.shadow),
        "forwarded": plan.forwarded,
        "params": dict(plan.req.params),
        "response": outcome.response,
        "error": outcome.error,
        "usage": outcome.usage,
        "cost": outcome.cost,
        **outcome.extra,
    }
    if cache:
        record["cache"] = cache
    if lifecycle:
        record["lifecycle"] = lifecycle
    if plan.user is not None:
        background = plan.longterm
        record["long_term"] = {
            "user": plan.user,
            "shown": background.item_ids if background else [],
            "conflicts": background.conflicts if background else {},
        }
    if degraded:
        record["degraded"] = degraded
    if calls:
        # LLM-backed extraction / summarisation this request caused.
        costs = [c.cost for c in calls if c.cost is not None]
        record["policy_calls"] = [c.as_dict() for c in calls]
        record["policy_tokens"] = sum(c.prompt_tokens + c.completion_tokens for c in calls)
        record["policy_cost"] = round(sum(costs), 8) if costs else None
    return p.request_log.row(
        record=record,
        id=plan.ctx.request_id,
        tenant_id=plan.ctx.tenant_id,
        session_id=plan.session_id,
        mode=plan.mode,
        policy=plan.preset.name,
        model=plan.req.model,
        status=outcome.status,
        budget=plan.budget,
        raw_tokens=plan.raw_tokens,
        context_tokens=plan.context_tokens,
        prefix_share=(prefix_share(*plan.prefix_of, plan.counter) if plan.prefix_of else None),
        proxy_ms=plan.proxy_ms,
        upstream_ms=outcome.upstream_ms,
        prompt_tokens=cache.get("prompt_tokens"),
        cached_tokens=cache.get("cached_tokens"),
        cache_write_tokens=cache.get("written_tokens"),
        input_cost=cache.get("input_cost"),
    )


def _model_decisions(calls: list[PolicyCall]) -> list[dict[str, Any]]:
    """The hybrid extractor's verdicts as operations of the record, one per message,
    so that the record and `memproxy inspect` list them with the rules' decisions."""
    by_ordinal: dict[int, list[dict[str, Any]]] = {}
    for call in calls:
        for d in call.decisions:
            by_ordinal.setdefault(int(d["ordinal"]), []).append(
                {k: v for k, v in d.items() if k != "ordinal"}
            )
    return [
        {"ordinal": o, "operation": "refine", "ops": len(rows), "reason": "hybrid_model",
         "decisions": rows}
        for o, rows in sorted(by_ordinal.items())
    ]  # fmt: skip
