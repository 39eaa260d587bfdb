"""A/B analytics over the request records: one summary row per mode (arm).

Only aggregate columns travel; the recorded cost is read inside the database.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from sqlalchemy import JSON, cast, func, select

from proxy.store import schema as t
from proxy.store.engine import StoreEngine


class ABAnalytics(StoreEngine):
    """The per-arm figures of `memproxy ab-report` and the admin API."""

    async def request_facts(self) -> list[dict[str, Any]]:
        """Per request: the columns the A/B report aggregates, plus the recorded cost.

        The cost is read inside the database so the (large) records never travel.
        """
        col = t.requests.c.record_json
        cost: Any
        if self.engine.dialect.name == "sqlite":
            cost = func.json_extract(col, "$.cost")
        else:
            cost = cast(col, JSON)["cost"].as_float()
        query = select(
            t.requests.c.mode,
            t.requests.c.session_id,
            t.requests.c.status,
            t.requests.c.raw_tokens,
            t.requests.c.context_tokens,
            t.requests.c.proxy_ms,
            t.requests.c.upstream_ms,
            t.requests.c.prompt_tokens,
            t.requests.c.cached_tokens,
            t.requests.c.cache_write_tokens,
            t.requests.c.input_cost,
            cost.label("cost"),
        ).where(t.requests.c.mode != "passthrough")  # embeddings, files...: no A/B arm
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        return [dict(r._mapping) for r in rows]

    async def ab_stats(self) -> list[dict[str, Any]]:
        """Request records grouped by mode (the A/B arms), one summary row per mode."""
        arms: dict[str, list[dict[str, Any]]] = {}
        for fact in await self.request_facts():
            arms.setdefault(fact["mode"], []).append(fact)
        return [_arm_stats(mode, facts) for mode, facts in sorted(arms.items())]


def _percentile(values: Sequence[float], share: float) -> float | None:
    """Nearest-rank percentile (no interpolation: a reported latency really happened)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return round(ordered[rank - 1], 1)


def _arm_stats(mode: str, facts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    latencies = [
        (f["proxy_ms"] or 0.0) + (f["upstream_ms"] or 0.0)
        for f in facts
        if f["proxy_ms"] is not None or f["upstream_ms"] is not None
    ]
    costs = [float(f["cost"]) for f in facts if f["cost"] is not None]
    raw = sum(f["raw_tokens"] for f in facts)
    forwarded = sum(f["context_tokens"] for f in facts)
    # Prompt caching: what the provider reported, over the requests that reported it.
    prompt = sum(f.get("prompt_tokens") or 0 for f in facts)
    cached = sum(f.get("cached_tokens") or 0 for f in facts)
    input_costs = [float(f["input_cost"]) for f in facts if f.get("input_cost") is not None]
    return {
        "mode": mode,
        "requests": len(facts),
        "sessions": len({f["session_id"] for f in facts if f["session_id"]}),
        "raw_tokens": raw,
        "forwarded_tokens": forwarded,
        "forwarded_ratio": round(forwarded / raw, 4) if raw else None,
        "cost": round(sum(costs), 6) if costs else None,
        "input_tokens": prompt,
        "cached_tokens": cached,
        "cache_write_tokens": sum(f.get("cache_write_tokens") or 0 for f in facts),
        "cached_share": round(cached / prompt, 4) if prompt else None,
        "input_cost": round(sum(input_costs), 6) if input_costs else None,
        "latency_p50_ms": _percentile(latencies, 0.50),
        "latency_p95_ms": _percentile(latencies, 0.95),
        "errors": sum(1 for f in facts if f["status"] >= 400),
    }
