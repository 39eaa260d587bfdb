"""What goes upstream under the prompt-cache rule (`memory.cache`): the client's
own history when it costs less than the managed context (`raw_when_cheaper`),
and the provider's cache hints (`add_cache_hints`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from proxy.cache_bill import cache_hints, raw_decision
from proxy.chat.plan import RequestPlan

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


def raw_when_cheaper(
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


def add_cache_hints(p: Pipeline, plan: RequestPlan) -> RequestPlan:
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
