"""Forward: send the plan upstream and answer the client (non-streaming).

The streamed relay is `proxy.chat.stream`; compare mode's raw call, started
beside either, is here.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from fastapi.responses import JSONResponse, Response

from proxy.chat.plan import RequestPlan
from proxy.errors import ProxyError
from proxy.records import Outcome
from proxy.wire import CHAT_WIRE, WireFormat

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


def raw_messages(plan: RequestPlan) -> list[dict[str, Any]]:
    """What raw mode would have sent: the client's messages (stateful: the store's)."""
    if plan.resolution is not None and plan.resolution.kind == "stateful":
        return [t.raw for t in (*plan.system, *plan.turns)]
    return plan.req.messages


def start_compare(p: Pipeline, plan: RequestPlan) -> asyncio.Task[dict[str, Any]] | None:
    """Compare mode: the raw request, sent concurrently with the managed one."""
    if plan.mode != "compare":
        return None
    call = p.upstream.build_call(plan.target, raw_messages(plan), plan.req.params, stream=False)

    async def run() -> dict[str, Any]:
        result: dict[str, Any] = {"raw_tokens": plan.raw_tokens}
        try:
            completion = await p.upstream.complete(call)
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


async def complete(p: Pipeline, plan: RequestPlan, wire: WireFormat = CHAT_WIRE) -> Response:
    """Forward, store the answer, answer the client in `wire`'s format."""
    call = p.upstream.build_call(
        plan.target, plan.forwarded, plan.params, stream=False, about=plan, **plan.call_args()
    )
    compare = start_compare(p, plan)
    extra: dict[str, Any] = {"compare_task": compare} if compare is not None else {}
    if wire is not CHAT_WIRE:
        extra["wire"] = wire.name
    try:
        completion = await p.upstream.complete(call)
    except ProxyError as exc:
        if exc.route:
            extra["upstream"] = exc.route  # retries and fallbacks tried
        p.finish(plan, Outcome(exc.status, error=exc.message, extra=extra))
        return wire.error(exc, plan.headers())
    except BaseException:
        p.abandon(plan)
        raise
    extra["upstream"] = completion.route  # which model answered, after which attempts
    answer = None
    choices = completion.body.get("choices") or []
    try:
        # The client's turns were written beside the call: stored before it sees the
        # answer, and the answer is stored after them (not at all if they failed).
        degraded = await p.turns_stored(plan)
        if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
            answer = choices[0]["message"]
            if degraded is None:
                degraded = await p.store_answer(plan, answer)
    except ProxyError as exc:
        p.finish(plan, Outcome(exc.status, error=exc.message, extra=extra))
        return wire.error(exc, plan.headers())
    except BaseException:
        p.abandon(plan)
        raise
    p.finish(
        plan,
        Outcome(
            200,
            answer,
            completion.body,
            usage=completion.usage,
            upstream_ms=completion.upstream_ms,
            cost_source=completion.response_obj,
            extra=extra,
            degraded=degraded,
        ),
    )
    return JSONResponse(wire.render(completion.body), headers=plan.headers(degraded))
