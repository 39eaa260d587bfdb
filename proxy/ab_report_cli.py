"""`memproxy ab-report`: the per-mode totals that `GET /memory/ab` returns, read from the store.

No server is needed and litellm is never imported.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from proxy.record_text import percent
from proxy.settings import Settings
from proxy.store.repo import Store


def ab_table(arms: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="A/B by mode", title_justify="left")
    columns = (
        "mode",
        "requests",
        "sessions",
        "raw tokens",
        "forwarded",
        "ratio",
        "cost $",
        "p50 ms",
        "p95 ms",
        "errors",
    )
    for name in columns:
        table.add_column(name, justify="left" if name == "mode" else "right")
    for a in arms:
        table.add_row(
            a["mode"],
            str(a["requests"]),
            str(a["sessions"]),
            str(a["raw_tokens"]),
            str(a["forwarded_tokens"]),
            f"{a['forwarded_ratio']:.2f}" if a["forwarded_ratio"] is not None else "–",
            f"{a['cost']:.4f}" if a["cost"] is not None else "–",
            f"{a['latency_p50_ms']:.0f}" if a["latency_p50_ms"] is not None else "–",
            f"{a['latency_p95_ms']:.0f}" if a["latency_p95_ms"] is not None else "–",
            str(a["errors"]),
        )
    return table


def cache_table(arms: Sequence[dict[str, Any]]) -> Table:
    """The provider's prompt cache per arm: input tokens, the cached part, input cost."""
    table = Table(title="Prompt cache by mode", title_justify="left")
    for name in ("mode", "input tokens", "cached", "written", "input cost $"):
        table.add_column(name, justify="left" if name == "mode" else "right")
    for a in arms:
        cached, prompt = a.get("cached_tokens", 0), a.get("input_tokens", 0)
        table.add_row(
            a["mode"],
            str(prompt),
            f"{cached} ({percent(cached, prompt)})",
            str(a.get("cache_write_tokens", 0)),
            f"{a['input_cost']:.6f}" if a.get("input_cost") is not None else "–",
        )
    return table


async def show_ab(settings: Settings, args: argparse.Namespace) -> int:
    store = await Store.open(settings.memory.database_url)
    try:
        arms = await store.ab_stats()
    finally:
        await store.close()
    if getattr(args, "json", False):
        print(json.dumps(arms, indent=2))
    elif not arms:
        print("no request records yet")
    else:
        Console().print(ab_table(arms))
        Console().print(cache_table(arms))
    return 0
