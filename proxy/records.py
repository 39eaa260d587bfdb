"""What a request record holds: built from a finished request, JSON-ready."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from policies.types import AssembledContext


@dataclass(slots=True)
class Outcome:
    """How the upstream call ended."""

    status: int
    answer: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    cost: float | None = None
    upstream_ms: float | None = None
    cost_source: Any = None  # the provider response, priced off the response path
    cost_usage: tuple[str, dict[str, Any]] | None = None  # (model name, usage) of a stream
    extra: dict[str, Any] = field(default_factory=dict)


def context_record(ctx: AssembledContext | None) -> dict[str, Any] | None:
    if ctx is None:
        return None
    return {
        "tokens": ctx.tokens,
        "budget": ctx.budget,
        "over_budget": ctx.over_budget,
        "passthrough": ctx.passthrough,
        "sections": [{"name": s.name, "tokens": s.tokens, "count": s.count} for s in ctx.sections],
        # Plain tuples-to-dicts: dataclasses.asdict deep-copies and is ~10x slower.
        "candidates": [
            {
                "kind": c.kind,
                "ref": c.ref,
                "tokens": c.tokens,
                "score": round(c.score, 4),
                "decision": c.decision,
                "reason": c.reason,
                "section": c.section,
            }
            for c in ctx.candidates
        ],
        "messages": ctx.messages,
    }


def prefix_share(previous: list[dict[str, Any]] | None, current: list[dict[str, Any]]) -> float:
    """Share of `current` (by serialized size) that repeats `previous`'s leading messages.

    Providers discount a repeated prompt prefix; this measures how much of each
    request could be served from that cache.
    """
    if not previous or not current:
        return 0.0
    sizes = [len(json.dumps(m, ensure_ascii=False)) for m in current]
    same = 0
    for a, b, size in zip(previous, current, sizes, strict=False):
        if a != b:
            break
        same += size
    total = sum(sizes)
    return same / total if total else 0.0
