"""Memory learned from an answer, off the response path and in session order.

Extraction from the answer (the rules, or an LLM refiner when configured),
graded forgetting decided by the request's assembly, the LLM summary rewrite,
and the long-term consolidation job of the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policies.hybrid import HybridExtractor
from policies.llm.calls import PolicyCall
from proxy.chat.plan import RequestPlan, clean_answer
from proxy.conversation import make_turn
from proxy.longterm import ConsolidationJob
from proxy.records import Outcome

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


async def learn(
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
            await p.summaries.replace_chunk(resolution.session.id, layers, chunk, plan.counter)
