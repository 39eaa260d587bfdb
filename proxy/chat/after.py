"""After the answer, off the response path: learn from it, release the session,
then price, count and record the request.

`finish` runs in session order once the answer is out: the memory learned from
it (`proxy.chat.learn`), the long-term job's embeddings, the price, the metrics
and the request record (`proxy.chat.request_record`). Storing the answer itself
comes before the client's last byte (`proxy.chat.answer_store`).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from policies.llm.calls import PolicyCall
from proxy.chat.answer_store import unstored
from proxy.chat.learn import learn
from proxy.chat.plan import RequestPlan
from proxy.chat.request_record import cache_bill, request_row
from proxy.longterm import ConsolidationJob
from proxy.records import Outcome

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline

log = logging.getLogger("memproxy.pipeline")


async def finish(p: Pipeline, plan: RequestPlan, outcome: Outcome) -> None:
    """Extract from the answer, persist what the assembly decided, release the
    session, then price, count and record the request."""
    job: ConsolidationJob | None = None
    calls: list[PolicyCall] = list(plan.policy_calls)
    lifecycle = plan.lifecycle
    degraded = plan.degraded or outcome.degraded
    try:
        if degraded is None:
            degraded = await unstored(p, plan)  # forwarding may have ended before it
        # A degraded answer is not in the store: no memory comes from it.
        if plan.resolution is not None and not degraded:
            lifecycle, job = await learn(p, plan, outcome, calls)
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
    billed = cache_bill(p, plan, outcome)
    if billed is not None:
        cache = {**cache, **billed}
        p.metrics.observe_cache(plan.mode, billed)
    p.metrics.observe(
        mode=plan.mode,
        status=outcome.status,
        raw_tokens=plan.raw_tokens,
        forwarded_tokens=plan.context_tokens,
        cost=outcome.cost,
        seconds=time.perf_counter() - plan.ctx.started,
        upstream_error=outcome.status >= 400,
    )
    p.request_log.submit(request_row(p, plan, outcome, calls, lifecycle, cache, degraded))
