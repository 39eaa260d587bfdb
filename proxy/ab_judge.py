"""`memproxy ab-report --judge MODEL`: the answers of recorded `compare` requests, judged.

A `compare` request sent the managed context and the client's raw history to
the same model and recorded both answers: the managed one as the record's
`response`, the raw one under `compare.raw_response` (with its `raw_usage`).
There are no scenario checks for real traffic, so the judge gets the pairwise
rubric (`proxy.judge.pair_messages`): the conversation as the session stored it
up to that request, and both answers as A and B, their order drawn per request
(a judge's taste for the first answer must not favour an arm). Each arm's
verdict is correct / stale / missing, plus which answer is better.

The bill of both arms covers every judgeable compare record in the window (it
costs nothing to compute); judging covers `--sample N` of them.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from proxy.answers import Tokens, bill, usage_tokens
from proxy.eval_scoring import format_tokens
from proxy.judge import UNJUDGED, PairVerdict, judge, judged_tokens, pair_messages, upstream_judge
from proxy.record_text import answer_text
from proxy.store.repo import Store
from proxy.tokens import TokenCounter
from proxy.upstream import Upstream

ARMS = ("raw", "managed")
ASSUMED_PAIR_VERDICT_TOKENS = 150
_RELATIVE = re.compile(r"^(\d+)([hdw])$")


class ABJudgeError(ValueError):
    """A request `ab-report --judge` cannot run (said in one line)."""


def parse_since(text: str, now: float) -> float:
    """`--since`: `24h`, `7d`, `2w`, or an ISO date / time (UTC unless it says)."""
    found = _RELATIVE.match(text.strip())
    if found:
        hours = {"h": 1, "d": 24, "w": 168}[found.group(2)] * int(found.group(1))
        return now - hours * 3600
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ABJudgeError(
            f"--since {text!r}: give 24h, 7d, 2w or an ISO date such as 2026-11-30"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment.timestamp()


@dataclass
class Pair:
    """One recorded compare request with both answers and the conversation behind them."""

    request_id: str
    tenant_id: str
    model: str
    created_at: float
    conversation: list[dict[str, Any]]
    answers: dict[str, str]  # arm -> answer
    usage: dict[str, Any]  # arm -> the provider's usage


@dataclass
class Selection:
    rows: int = 0  # compare records in the window
    pairs: list[Pair] = field(default_factory=list)  # those with both answers and content
    skipped: dict[str, int] = field(default_factory=dict)  # why the others cannot be judged

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


async def _conversation(store: Store, row: dict[str, Any], record: dict[str, Any]) -> Any:
    """The session's messages up to this request, without the stored answer to it."""
    session_id = row["session_id"]
    session = await store.get_session(session_id) if session_id else None
    if session is None:
        forwarded = record.get("forwarded")
        return forwarded if isinstance(forwarded, list) else None
    stored = [m for m in await store.load_messages(session_id) if m.created_at <= row["created_at"]]
    while stored and stored[-1].role == "assistant":
        stored.pop()
    return [*(session.system or []), *(m.message for m in stored)]


async def select_pairs(store: Store, tenant_id: str | None, since: float | None) -> Selection:
    selection = Selection()
    for row in await store.list_compare_requests(tenant_id=tenant_id, since=since):
        selection.rows += 1
        record = json.loads(row["record_json"])
        compare = record.get("compare")
        if not isinstance(compare, dict) or compare.get("omitted"):
            selection.skip("content not stored (log.store_content: false)")
            continue
        raw_answer = answer_text({"response": compare.get("raw_response")})
        managed_answer = answer_text(record)
        if raw_answer is None or managed_answer is None:
            selection.skip("an arm has no answer (an upstream error)")
            continue
        conversation = await _conversation(store, row, record)
        if not conversation:
            selection.skip("conversation not found")
            continue
        selection.pairs.append(
            Pair(
                request_id=row["id"],
                tenant_id=row["tenant_id"],
                model=row["model"],
                created_at=row["created_at"],
                conversation=conversation,
                answers={"raw": raw_answer, "managed": managed_answer},
                usage={"raw": compare.get("raw_usage"), "managed": record.get("usage")},
            )
        )
    return selection


def sample(pairs: Sequence[Pair], n: int | None, seed: int) -> list[Pair]:
    if n is None or n >= len(pairs):
        return list(pairs)
    return sorted(random.Random(seed).sample(list(pairs), n), key=lambda p: p.request_id)


def raw_goes_first(request_id: str) -> bool:
    """Which arm is shown as A: drawn from the request id, so a rerun shows the same."""
    return hashlib.sha256(request_id.encode()).digest()[0] % 2 == 0


def _messages(pair: Pair) -> list[dict[str, Any]]:
    first, second = ("raw", "managed") if raw_goes_first(pair.request_id) else ("managed", "raw")
    return pair_messages(pair.conversation, pair.answers[first], pair.answers[second])


def estimate_text(upstream: Upstream, judge_model: str, pairs: Sequence[Pair]) -> str:
    counter = TokenCounter("cl100k_base")
    prompt = sum(format_tokens(counter, _messages(p)) for p in pairs)
    completion = ASSUMED_PAIR_VERDICT_TOKENS * len(pairs)
    cost = bill(upstream.pricing.prices(judge_model), Tokens(prompt, completion))
    money = f"≈ ${cost:.4f}" if cost is not None else "no price known for this model"
    return (
        f"{len(pairs)} judge calls to {judge_model}: about {prompt} input and {completion} "
        f"output tokens ({money}; prices from litellm's local cost map; more where a "
        "malformed verdict is retried)"
    )


def bill_arms(upstream: Upstream, pairs: Sequence[Pair]) -> dict[str, Any]:
    """Tokens and money of both arms, over every pair, at the recorded model's prices."""
    out: dict[str, Any] = {}
    prices = {model: upstream.pricing.prices(model) for model in {p.model for p in pairs}}
    for arm in ARMS:
        tokens, cost, unpriced = Tokens(), 0.0, 0
        for p in pairs:
            used = usage_tokens(p.usage[arm])
            tokens.add(used)
            money = bill(prices[p.model], used)
            unpriced += money is None
            cost += money or 0.0
        out[arm] = {"tokens": tokens.as_dict(), "cost": round(cost, 6), "unpriced": unpriced}
    return out


async def judge_pairs(upstream: Upstream, judge_model: str, pairs: Sequence[Pair]) -> list[Any]:
    """One verdict row per pair (verdicts mapped back from A/B to the arms)."""
    call = upstream_judge(upstream, judge_model)
    prices = upstream.pricing.prices(judge_model)
    rows = []
    for pair in pairs:
        judged = await judge(call, _messages(pair), PairVerdict)
        spent = judged_tokens(judged)
        row: dict[str, Any] = {
            "request_id": pair.request_id,
            "tenant_id": pair.tenant_id,
            "judge_tokens": spent.as_dict(),
            "judge_cost": bill(prices, spent),
        }
        verdict = judged.parsed
        if verdict is None:
            row.update(raw=UNJUDGED, managed=UNJUDGED, better=UNJUDGED, reason=judged.reason)
        else:
            first, second = (
                ("raw", "managed")
                if raw_goes_first(pair.request_id)
                else (
                    "managed",
                    "raw",
                )
            )
            better = {"a": first, "b": second, "tie": "tie"}[verdict.better]
            row.update(
                {first: verdict.a.verdict, second: verdict.b.verdict, "better": better},
                reason=f"A: {verdict.a.reason} B: {verdict.b.reason}".strip(),
            )
        rows.append(row)
    return rows


def _tally(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for arm in ARMS:
        counts = dict.fromkeys(("correct", "stale", "missing", UNJUDGED), 0)
        for r in rows:
            counts[r[arm]] += 1
        out[arm] = counts
    better = dict.fromkeys(("raw", "managed", "tie", UNJUDGED), 0)
    for r in rows:
        better[r["better"]] += 1
    out["better"] = better
    return out


def build_ab_report(
    selection: Selection, judged: Sequence[dict[str, Any]], bills: dict[str, Any], judge_model: str
) -> dict[str, Any]:
    tenants: dict[str, list[dict[str, Any]]] = {}
    for row in judged:
        tenants.setdefault(row["tenant_id"], []).append(row)
    costs = [r["judge_cost"] for r in judged if r["judge_cost"] is not None]
    return {
        "judge": judge_model,
        "compare_requests": selection.rows,
        "judgeable": len(selection.pairs),
        "skipped": selection.skipped,
        "judged": len(judged),
        "verdicts": _tally(judged),
        "by_tenant": {t: _tally(rows) | {"judged": len(rows)} for t, rows in tenants.items()},
        "bill": bills,
        "judge_cost": round(sum(costs), 6) if costs else None,
        "requests": list(judged),
    }


def format_ab_report(report: dict[str, Any]) -> str:
    v, b = report["verdicts"], report["bill"]
    lines = [
        f"judge={report['judge']}  compare requests: {report['compare_requests']}, "
        f"judgeable: {report['judgeable']}, judged: {report['judged']}",
        "| arm | correct | stale | missing | unjudged | better | prompt tokens | cached "
        "| completion | cost $ |",
        "|---" * 10 + "|",
    ]
    for arm in ARMS:
        t = b[arm]["tokens"]
        lines.append(
            f"| {arm} | {v[arm]['correct']} | {v[arm]['stale']} | {v[arm]['missing']} "
            f"| {v[arm][UNJUDGED]} | {v['better'][arm]} | {t['prompt']} | {t['cached']} "
            f"| {t['completion']} | {b[arm]['cost']:.4f} |"
        )
    lines.append(f"ties: {v['better']['tie']}; judge cost: ${report['judge_cost'] or 0:.4f}")
    for reason, count in report["skipped"].items():
        lines.append(f"not judgeable: {count} ({reason})")
    if len(report["by_tenant"]) > 1:
        for tenant, tally in report["by_tenant"].items():
            lines.append(
                f"tenant {tenant}: judged {tally['judged']}, correct raw "
                f"{tally['raw']['correct']} / managed {tally['managed']['correct']}, better "
                f"raw {tally['better']['raw']} / managed {tally['better']['managed']}"
            )
    return "\n".join(lines)
