"""The request record written once a request is done: what was sent and why, its
cache bill, and the model's decisions it caused."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from policies.llm.calls import PolicyCall
from proxy.cache_bill import bill, cache_usage, prices_from
from proxy.chat.plan import RequestPlan
from proxy.errors import ProxyError
from proxy.records import Outcome, context_record, prefix_share

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


def cache_bill(p: Pipeline, plan: RequestPlan, outcome: Outcome) -> dict[str, Any] | None:
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


def request_row(
    p: Pipeline,
    plan: RequestPlan,
    outcome: Outcome,
    calls: list[PolicyCall],
    lifecycle: dict[str, Any],
    cache: dict[str, Any],
    degraded: str | None,
) -> dict[str, Any]:
    """The request log's row of a finished request."""
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
