"""`memproxy eval`'s report: the totals over the scenarios, the Markdown table, the inspect hint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proxy.eval_scoring import ScenarioResult


def build_report(results: list[ScenarioResult], mode: str, policy: str | None) -> dict[str, Any]:
    n = len(results) or 1
    return {
        "mode": mode,
        "policy": policy or "default",
        "scenarios": [r.__dict__ for r in results],
        "total": {
            "recall": sum(r.recall for r in results) / n,
            "stale": sum(len(r.stale) for r in results),
            "over_budget_rounds": sum(r.over_budget_rounds for r in results),
            "final_ratio": sum(r.final_ratio for r in results) / n,
            "mean_ratio": sum(r.mean_ratio for r in results) / n,
            "mean_tokens": sum(r.mean_tokens for r in results) / n,
            "prefix_share": sum(r.prefix_share for r in results) / n,
            "errors": sum(r.errors for r in results),
            "degraded": sum(r.degraded for r in results),
        },
    }


def inspect_hint(report: dict[str, Any], db: Path) -> str:
    """How to see each scenario's final request (what reached the model, and why)."""
    url = f"sqlite+aiosqlite:///{db}"
    lines = [f"request records kept in {db}; the final request of each scenario:"]
    for r in report["scenarios"]:
        if not r["request_ids"]:
            continue
        notes = ", ".join(r["missed"] + [f"stale:{s}" for s in r["stale"]])
        lines.append(
            f"  MEMPROXY_DATABASE_URL={url} memproxy inspect {r['request_ids'][-1]}"
            f"  # {r['id']}{f' ({notes})' if notes else ''}"
        )
    return "\n".join(lines)


def format_table(report: dict[str, Any]) -> str:
    head = (
        f"mode={report['mode']} policy={report['policy']} api={report.get('api', 'chat')}\n"
        f"| scenario | rounds | recall | stale | over budget | final ratio | mean ratio "
        f"| mean tokens | prefix share | missed / stale |\n" + "|---" * 10 + "|"
    )
    rows = [head]
    for r in report["scenarios"]:
        notes = ", ".join(r["missed"] + [f"stale:{s}" for s in r["stale"]]) or "-"
        rows.append(
            f"| {r['id']} | {r['rounds']} | {r['recall']:.2f} | {len(r['stale'])} "
            f"| {r['over_budget_rounds']} | {r['final_ratio']:.3f} | {r['mean_ratio']:.3f} "
            f"| {r['mean_tokens']:.0f} | {r['prefix_share']:.3f} | {notes} |"
        )
    t = report["total"]
    rows.append(
        f"| **total** | | {t['recall']:.3f} | {t['stale']} | {t['over_budget_rounds']} "
        f"| {t['final_ratio']:.3f} | {t['mean_ratio']:.3f} | {t['mean_tokens']:.0f} "
        f"| {t['prefix_share']:.3f} | errors: {t['errors']}, degraded: {t['degraded']} |"
    )
    replies = report.get("llm_replies")
    if replies is not None:
        rows.append(
            f"extractor={report['extractor']}: {replies['asked']} model prompt(s), "
            f"{replies['answered']} answered from the recording, "
            f"{replies['missing']} without a reply (the rules' ops stood)"
            + (f", {replies['live']} answered live" if "live" in replies else "")
        )
    return "\n".join(rows)
