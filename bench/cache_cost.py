"""The input bill under prompt caching: managed context against the client's raw history.

    python bench/cache_cost.py [--scenarios DIR ...] [--policy full] [--json]
        [--locomo] [--locomo-data PATH] [--conversations N]

Replays each scenario set twice as `memproxy eval` does, raw (the client's
own history forwarded) and managed (`--policy`), and prices every request's
input under three cache rules, each request's prompt cached up to the prefix
it shares with the previous request of its conversation (tokens of the
serialised prompt, cl100k; the cache is warm, requests come back to back):

- `cached 50%`: OpenAI, gpt-4o family: >= 1,024 tokens, 128-token blocks;
- `cached 10%`: OpenAI, gpt-5 family, same minimum and blocks;
- `anthropic`: the shared prefix read at 10 %, the rest written at 125 %
  (breakpoints where they pay, no minimum: the comparison's simplification).

Costs are in input-price units (one uncached input token = 1). Beside each
result, the FLOOR: every request pays its new turns (tokens new since the
previous request of the client's history: the last answer and the new input)
in full (Anthropic: written) and the rest of a budget-sized prompt
(min(budget, managed prompt)) from the cache; `floor·B`: a prompt of
min(budget, raw prompt) tokens, the new turns uncached, under the rule's
minimum and blocks. `prefix` is the mean share of a
managed prompt that repeats the previous one; `ceiling` the same if only the
new turns were outside the repeated prefix. Recall and stale of each run come
from the eval's own scoring.

`--locomo`: LoCoMo conversations (`bench/locomo.py`'s replay: one request per
assistant message, the whole history before it) at a 2,000-token budget,
raw and managed. A benchmark: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a file: `python bench/cache_cost.py`

from policies.assemble.cache_pricing import RULES, CacheRule, estimate_bill  # noqa: E402
from proxy.eval_scenarios import Scenario  # noqa: E402
from proxy.evaluation import run_eval  # noqa: E402
from proxy.records import serialised, shared_prefix_tokens  # noqa: E402
from proxy.tokens import TokenCounter  # noqa: E402

PRICING: tuple[tuple[str, CacheRule], ...] = (
    ("cached 50%", RULES["openai"]),
    ("cached 10%", RULES["openai-gpt5"]),
    ("anthropic", dataclasses.replace(RULES["anthropic"], min_tokens=0)),
)
Prompt = list[dict[str, Any]]


@dataclass
class Bill:
    """One run (raw or managed) of one set, priced under each rule."""

    cost: dict[str, float] = field(default_factory=lambda: {name: 0.0 for name, _ in PRICING})
    tokens: int = 0
    requests: int = 0
    shares: list[float] = field(default_factory=list)  # prefix share, first requests excluded


@dataclass
class SetBill:
    raw: Bill = field(default_factory=Bill)
    managed: Bill = field(default_factory=Bill)
    floor: dict[str, float] = field(default_factory=lambda: {name: 0.0 for name, _ in PRICING})
    # A prompt of min(budget, raw) tokens, new turns outside the cached prefix, billed
    # under the rule's minimum and blocks.
    floor_budget: dict[str, float] = field(
        default_factory=lambda: {name: 0.0 for name, _ in PRICING}
    )
    ceiling: list[float] = field(default_factory=list)
    conversations: int = 0
    recall: dict[str, float] = field(default_factory=dict)
    stale: dict[str, int] = field(default_factory=dict)


class Pricer:
    def __init__(self) -> None:
        self.count = TokenCounter("cl100k_base")

    def sizes(self, prompt: Prompt) -> tuple[list[str], list[int]]:
        texts = [serialised(m) for m in prompt]
        return texts, [self.count(t) for t in texts]

    def _run(self, prompts: Sequence[Prompt], bill: Bill) -> list[tuple[int, int]]:
        """Price one conversation's prompts; returns (tokens, shared prefix) per request."""
        out = []
        before: list[str] = []
        for i, prompt in enumerate(prompts):
            texts, sizes = self.sizes(prompt)
            total = sum(sizes)
            shared = shared_prefix_tokens(before, texts, sizes, self.count) if i else 0
            for name, rule in PRICING:
                bill.cost[name] += estimate_bill(total, shared, rule)
            bill.tokens += total
            bill.requests += 1
            if i:
                bill.shares.append(shared / total if total else 0.0)
            out.append((total, shared))
            before = texts
        return out

    def add(
        self, result: SetBill, raw: Sequence[Prompt], managed: Sequence[Prompt], budget: int
    ) -> None:
        """One conversation: its raw and managed prompts, request by request."""
        raw_sizes = self._run(raw, result.raw)
        managed_sizes = self._run(managed, result.managed)
        result.conversations += 1
        for i, ((raw_total, raw_shared), (managed_total, _)) in enumerate(
            zip(raw_sizes, managed_sizes, strict=True)
        ):
            new = raw_total - raw_shared  # the last answer and the new input (all, at first)
            sized = max(new, min(budget, raw_total))
            for name, rule in PRICING:
                full = rule.write if rule.explicit else 1.0
                rest = max(0, min(budget, managed_total) - new)
                result.floor[name] += new * full + rest * rule.read
                result.floor_budget[name] += estimate_bill(sized, sized - new, rule)
            if i and managed_total:
                result.ceiling.append(max(0.0, 1 - new / managed_total))


def _prompts(rows: list[dict[str, Any]]) -> list[Prompt]:
    return [row["record"]["forwarded"] for row in rows]


async def bill_scenarios(directory: Path, policy: str) -> SetBill:
    """Replay a scenario set raw and managed and price both."""
    runs: dict[str, dict[str, list[Prompt]]] = {"raw": {}, "managed": {}}
    budgets: dict[str, int] = {}
    result = SetBill()
    for mode in ("raw", "managed"):

        def collect(scenario: Scenario, rows: list[dict[str, Any]], mode: str = mode) -> None:
            runs[mode][scenario.id] = _prompts(rows)
            budgets[scenario.id] = scenario.budget

        report = await run_eval(
            directory, mode=mode, policy=policy if mode == "managed" else None, on_records=collect
        )
        result.recall[mode] = float(report["total"]["recall"])
        result.stale[mode] = int(report["total"]["stale"])
    pricer = Pricer()
    for scenario_id, raw in runs["raw"].items():
        managed = runs["managed"].get(scenario_id)
        if managed is None or len(managed) != len(raw):
            print(f"{scenario_id}: runs differ in length, left out", file=sys.stderr)
            continue
        pricer.add(result, raw, managed, budgets[scenario_id])
    return result


async def bill_locomo(data: Path, conversations: int, budget: int, policy: str) -> SetBill:
    """LoCoMo conversations replayed raw and managed at `budget` (locomo.py's replay)."""
    import httpx

    from bench._harness import serve_proxy, stub_settings
    from bench.locomo import load_samples
    from proxy.stub.server import StubUpstream

    samples = load_samples(data)[:conversations]
    result = SetBill()
    pricer = Pricer()
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as stub:
        settings = stub_settings(stub.url, Path(tmp) / "locomo.db")
        async with (
            serve_proxy(settings) as base_url,
            httpx.AsyncClient(base_url=base_url, timeout=120) as client,
        ):
            for sample in samples:
                system = [{"role": "system", "content": sample.system}]
                prompts: dict[str, list[Prompt]] = {"raw": [], "managed": []}
                for mode in ("raw", "managed"):
                    headers = {
                        "X-Memory-Mode": mode,
                        "X-Memory-Budget": str(budget),
                        "X-Memory-Policy": policy,
                        "X-Memory-Session": f"locomo-{sample.id}-{mode}",
                    }
                    for point in sample.replay_points:
                        reply = {"content": sample.messages[point]["content"]}
                        stub.state.responder = lambda body, reply=reply: reply
                        resp = await client.post(
                            "/v1/chat/completions",
                            json={
                                "model": "stub",
                                "messages": system + sample.messages[:point],
                            },
                            headers=headers,
                        )
                        resp.raise_for_status()
                        prompts[mode].append(stub.received[-1].body["messages"])
                    stub.reset()
                pricer.add(result, prompts["raw"], prompts["managed"], budget)
    return result


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def summary(name: str, result: SetBill) -> dict[str, Any]:
    raw, managed = result.raw, result.managed
    return {
        "set": name,
        "conversations": result.conversations,
        "requests": raw.requests,
        "tokens_raw": raw.tokens,
        "tokens_managed": managed.tokens,
        "prefix_share_raw": round(_mean(raw.shares), 3),
        "prefix_share_managed": round(_mean(managed.shares), 3),
        "prefix_ceiling": round(_mean(result.ceiling), 3),
        "recall": result.recall,
        "stale": result.stale,
        "rules": {
            rule: {
                "raw": round(raw.cost[rule], 1),
                "managed": round(managed.cost[rule], 1),
                "managed_over_raw": round(managed.cost[rule] / raw.cost[rule], 3)
                if raw.cost[rule]
                else None,
                "floor_over_raw": round(result.floor[rule] / raw.cost[rule], 3)
                if raw.cost[rule]
                else None,
                "floor_budget_over_raw": round(result.floor_budget[rule] / raw.cost[rule], 3)
                if raw.cost[rule]
                else None,
            }
            for rule, _ in PRICING
        },
    }


def markdown(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| set | rule | raw cost | managed cost | managed/raw | floor/raw | floor·B/raw |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for rule, figures in row["rules"].items():
            lines.append(
                f"| {row['set']} | {rule} | {figures['raw']:,.0f} | {figures['managed']:,.0f} | "
                f"{figures['managed_over_raw']:.3f} | {figures['floor_over_raw']:.3f} | "
                f"{figures['floor_budget_over_raw']:.3f} |"
            )
    lines += [
        "",
        "| set | requests | tokens managed/raw | prefix share managed (raw) | ceiling "
        "| recall raw / managed | stale raw / managed |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        ratio = row["tokens_managed"] / row["tokens_raw"] if row["tokens_raw"] else 0.0
        recall, stale = row["recall"], row["stale"]
        lines.append(
            f"| {row['set']} | {row['requests']} | {ratio:.3f} | "
            f"{row['prefix_share_managed']:.3f} ({row['prefix_share_raw']:.3f}) | "
            f"{row['prefix_ceiling']:.3f} | "
            + (
                f"{recall.get('raw', 0):.3f} / {recall.get('managed', 0):.3f} | "
                f"{stale.get('raw', 0)} / {stale.get('managed', 0)} |"
                if recall
                else "– | – |"
            )
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=Path, action="append", default=[])
    parser.add_argument("--policy", default="full")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--locomo", action="store_true", help="LoCoMo conversations instead")
    parser.add_argument(
        "--locomo-data", type=Path, default=ROOT.parent / "shared/eval/locomo/locomo10.json"
    )
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--budget", type=int, default=2000, help="LoCoMo budget")
    args = parser.parse_args()
    rows = []
    if args.locomo:
        result = asyncio.run(
            bill_locomo(args.locomo_data, args.conversations, args.budget, args.policy)
        )
        rows.append(summary(f"locomo@{args.budget}", result))
    for directory in args.scenarios or [ROOT.parent / "shared/eval/scenarios"]:
        if args.locomo and not args.scenarios:
            break
        rows.append(summary(directory.name, asyncio.run(bill_scenarios(directory, args.policy))))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(f"policy={args.policy}; costs in input-price units (one uncached token = 1)\n")
        print(markdown(rows))


if __name__ == "__main__":
    main()
