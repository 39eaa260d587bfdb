"""The report of a `memproxy eval --live` results file: per scenario and arm, and totals.

Built from the file alone, so a run that stopped half-way reads like a finished
one, only shorter (its errors listed), and `--resume` with nothing left to run
just prints it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from proxy.judge import UNJUDGED

ARMS = ("raw", "managed")
VERDICTS = ("correct", "stale", "missing", UNJUDGED)


def _arm_total(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    checks = sum(r["checks"] for r in rows)
    present = sum(len(r["present"]) for r in rows)
    verdicts = dict.fromkeys(VERDICTS, 0)
    judged = [r for r in rows if r.get("judge") is not None]
    for r in judged:
        for v in r["judge"].values():
            verdicts[v["verdict"]] = verdicts.get(v["verdict"], 0) + 1
    tokens = {"prompt": 0, "completion": 0, "cached": 0, "cache_write": 0}
    for r in rows:
        for key in tokens:
            tokens[key] += int((r.get("tokens") or {}).get(key, 0))
    costs = [r["cost"] for r in rows if r.get("cost") is not None]
    judge_costs = [r["judge_cost"] for r in judged if r.get("judge_cost") is not None]
    return {
        "scenarios": len(rows),
        "checks": checks,
        "present": present,
        "answer_recall": round(present / checks, 4) if checks else None,
        "stale": sum(len(r["stale"]) for r in rows),
        "judge": verdicts if judged else None,
        "tokens": tokens,
        # Money only where the provider's model has a price: unpriced rows are counted.
        "cost": round(sum(costs), 6) if costs else None,
        "unpriced": len(rows) - len(costs),
        "judge_cost": round(sum(judge_costs), 6) if judge_costs else None,
        "context_tokens": sum(int(r.get("context_tokens") or 0) for r in rows),
    }


def build_report(header: dict[str, Any], rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    results = [r for r in rows if r.get("type") == "result"]
    done = {(r["scenario"], r["arm"]) for r in results}
    # An error an arm was later resumed past is history, not an open problem.
    errors = [r for r in rows if r.get("type") == "error" and (r["scenario"], r["arm"]) not in done]
    by_scenario: dict[str, dict[str, Any]] = {}
    for r in results:
        by_scenario.setdefault(r["scenario"], {})[r["arm"]] = r  # a rerun's line wins
    return {
        "model": header.get("model"),
        "judge": header.get("judge"),
        "policy": header.get("policy"),
        "scenarios": [{"id": sid, **arms} for sid, arms in by_scenario.items()],
        "total": {
            arm: _arm_total([a[arm] for a in by_scenario.values() if arm in a]) for arm in ARMS
        },
        "errors": errors,
        "complete": not errors,
    }


def _verdicts(row: dict[str, Any]) -> str:
    if row.get("judge") is None:
        return "-"
    counts = dict.fromkeys(VERDICTS, 0)
    for v in row["judge"].values():
        counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
    return "/".join(str(counts[v]) for v in VERDICTS)


def _money(value: float | None) -> str:
    return f"{value:.6f}" if value is not None else "–"


def format_live_table(report: dict[str, Any]) -> str:
    judge = report.get("judge")
    lines = [
        f"model={report['model']} judge={judge or '-'} policy={report['policy']}",
        "| scenario | arm | answer recall | stale | judge ✓/stale/missing/unjudged "
        "| prompt tokens | cached | completion | cost $ | missed / stale |",
        "|---" * 10 + "|",
    ]
    for scenario in report["scenarios"]:
        for arm in ARMS:
            r = scenario.get(arm)
            if r is None:
                lines.append(f"| {scenario['id']} | {arm} | (not run) | | | | | | | |")
                continue
            t = r.get("tokens") or {}
            notes = ", ".join(r["missed"] + [f"stale:{s}" for s in r["stale"]]) or "-"
            recall = len(r["present"]) / r["checks"] if r["checks"] else 0.0
            lines.append(
                f"| {scenario['id']} | {arm} | {recall:.2f} | {len(r['stale'])} | {_verdicts(r)} "
                f"| {t.get('prompt', 0)} | {t.get('cached', 0)} | {t.get('completion', 0)} "
                f"| {_money(r.get('cost'))} | {notes} |"
            )
    for arm in ARMS:
        t = report["total"][arm]
        recall = f"{t['answer_recall']:.3f}" if t["answer_recall"] is not None else "–"
        v = t["judge"]
        verdicts = "/".join(str(v[k]) for k in VERDICTS) if v else "-"
        tok = t["tokens"]
        judge_cost = f"judge ${_money(t['judge_cost'])}" if judge else ""
        lines.append(
            f"| **total** | {arm} | {recall} | {t['stale']} | {verdicts} | {tok['prompt']} "
            f"| {tok['cached']} | {tok['completion']} | {_money(t['cost'])} | {judge_cost} |"
        )
    for e in report["errors"]:
        lines.append(f"\nstopped at {e['scenario']} ({e['arm']}): {e['status']} {e['message']}")
    return "\n".join(lines)
