"""Where the cached prompt prefix breaks, request by request, on memory scenarios.

    python bench/prefix_breaks.py [--scenarios ../shared/eval/scenarios] [--policy full]

Replays the scenarios as `memproxy eval` does and reads the request records.
Each request after a session's first is a transition from the previous
prompt; it is classed by what the proxy did (the whole conversation still
fits and goes out unchanged; a compaction; the memory block laid out again;
nothing of that: plain) and by the first message that differs from the
previous prompt. For each class: how many, and the mean recorded prefix share
(tokens of the prompt that repeat the previous prompt's start).

`ceiling` is the mean share if nothing but the new client turns (the last
answer and the new input) were outside the repeated prefix: no compaction,
no late sections. A budgeted prompt cannot do better, since every request
adds those turns. The second figure is the same with every prompt as large
as the budget allows (the new turns over max(budget, prompt)): a bound for
any policy that stays within the budget, however it compacts. A benchmark:
it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a file: `python bench/prefix_breaks.py`

from policies.assemble.generated import (  # noqa: E402
    DELTA_HEADER,
    MEMORY_HEADER,
    RECALL_HEADER,
    REPLAY_HEADER,
)
from policies.assemble.summary import SUMMARY_HEADER  # noqa: E402
from proxy.eval_scenarios import Scenario  # noqa: E402
from proxy.evaluation import run_eval  # noqa: E402
from proxy.records import serialised  # noqa: E402
from proxy.tokens import TokenCounter  # noqa: E402

HEADERS = (
    (MEMORY_HEADER, "memory block"),
    (SUMMARY_HEADER, "summary"),
    (DELTA_HEADER, "memory delta"),
    (RECALL_HEADER, "recalled"),
    (REPLAY_HEADER, "replay"),
)


def section_of(message: dict[str, Any] | None, first_system: bool) -> str:
    """What a forwarded message is, from the header the assembler gave it."""
    if message is None:
        return "(none)"
    if message.get("role") != "system":
        return "turn"
    if first_system:
        return "system prompt"
    content = message.get("content") or ""
    for header, name in HEADERS:
        if isinstance(content, str) and content.startswith(header):
            return name
    return "summary chunk"


def transition_kind(record: dict[str, Any]) -> str:
    managed = record.get("managed")
    if managed is None or managed.get("passthrough"):
        return "unchanged (fits)"
    life = record.get("lifecycle") or {}
    if life.get("compactions"):
        return "compaction"
    if life.get("memory_layout") == "rebuilt":
        return "memory re-layout"
    return "plain"


class Tally:
    def __init__(self) -> None:
        self.count = TokenCounter("cl100k_base")
        self.shares: dict[str, list[float]] = defaultdict(list)
        self.breaks: Counter[tuple[str, str, str]] = Counter()
        self.ceiling: list[float] = []
        self.bound: list[float] = []

    def add(self, scenario: Scenario, rows: list[dict[str, Any]]) -> None:
        for before, now in itertools.pairwise(rows):
            if now["prefix_share"] is None:
                continue
            kind = transition_kind(now["record"])
            self.shares[kind].append(float(now["prefix_share"]))
            prev, cur = before["record"]["forwarded"], now["record"]["forwarded"]
            i = next((k for k, (a, b) in enumerate(zip(prev, cur, strict=False)) if a != b), None)
            if i is None:
                i = min(len(prev), len(cur))
            was = section_of(prev[i] if i < len(prev) else None, i == 0)
            is_now = section_of(cur[i] if i < len(cur) else None, i == 0)
            self.breaks[(kind, is_now, was)] += 1
            sizes = [self.count(serialised(m)) for m in cur]
            turns = zip(cur, sizes, strict=True)
            new = sum(n for m, n in turns if m["role"] != "system" and m not in prev)
            self.ceiling.append(1 - new / sum(sizes) if sizes else 0.0)
            # Any prompt within the budget: at best as large as the budget,
            # with only the new turns after the repeated part.
            self.bound.append(max(0.0, 1 - new / max(scenario.budget, sum(sizes))))

    def report(self) -> str:
        everything = [s for shares in self.shares.values() for s in shares]
        lines = [
            "| transition | requests | mean prefix share |",
            "|---|---|---|",
            *(
                f"| {kind} | {len(s)} | {sum(s) / len(s):.3f} |"
                for kind, s in sorted(self.shares.items(), key=lambda kv: -len(kv[1]))
            ),
            f"| **all** | {len(everything)} | {sum(everything) / max(1, len(everything)):.3f} |",
            "",
            f"ceiling (only the new client turns outside the prefix): "
            f"{sum(self.ceiling) / max(1, len(self.ceiling)):.3f}; "
            "with every prompt as large as the budget: "
            f"{sum(self.bound) / max(1, len(self.bound)):.3f}",
            "",
            "| transition | first differing message: now | was | requests |",
            "|---|---|---|---|",
            *(
                f"| {kind} | {now} | {was} | {n} |"
                for (kind, now, was), n in sorted(self.breaks.items(), key=lambda kv: -kv[1])
            ),
        ]
        return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenarios", type=Path, default=ROOT.parent / "shared/eval/scenarios")
    parser.add_argument("--policy", default="full")
    args = parser.parse_args()
    tally = Tally()
    report = asyncio.run(run_eval(args.scenarios, policy=args.policy, on_records=tally.add))
    total = report["total"]
    print(
        f"policy={report['policy']}: recall {total['recall']:.3f}, stale {total['stale']}, "
        f"mean tokens {total['mean_tokens']:.0f}, prefix share {total['prefix_share']:.3f}\n"
    )
    print(tally.report())


if __name__ == "__main__":
    main()
