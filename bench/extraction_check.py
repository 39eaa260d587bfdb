"""Dev check of the rule extractor against the eval scenarios (not a test).

Folds `RuleExtractor` over every scenario's messages in order, renders the
active items as the working-memory block would, and reports per scenario:
recall (each check's `expect_any` phrase present in the block), stale (a
`stale_any` phrase on a rendered line holding none of the check's expected
phrases), the number of active items and their tokens against the
scenario's budget, and extraction time per message.

    python bench/extraction_check.py [--dir DIR] [--only SUBSTR] [-v] [--trace]

The scenarios are read in place (default: ../shared/eval/scenarios relative
to the repository root); nothing is copied into the repository. Our own
held-out sets are `bench/scenarios` and `bench/scenarios/fresh`.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from policies.extract.choices import LOOKBACK, answered_list  # noqa: E402
from policies.extract.extraction import RuleExtractor  # noqa: E402  (needs the path above)
from policies.memory.reducer import active_items, apply_extraction, render_item  # noqa: E402
from policies.types import ExtractionContext, MemoryItem, Turn  # noqa: E402


def token_counter() -> Callable[[str], int]:
    """cl100k through tiktoken, using the vocabulary file litellm ships.

    litellm is located without being imported (its import is slow and has
    side effects); only its bundled tokenizer directory is used, so this
    works offline.
    """
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.submodule_search_locations:
        base = Path(next(iter(spec.submodule_search_locations)))
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(base / "litellm_core_utils" / "tokenizers"))
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base")
    return lambda text: len(enc.encode(text))


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def previous_answer(messages: list[dict[str, Any]], ordinal: int) -> str:
    """The assistant message right before message `ordinal`, if it is one."""
    if not ordinal or messages[ordinal - 1].get("role") != "assistant":
        return ""
    back = [
        message_text(m)
        for m in reversed(messages[max(0, ordinal - 2 * LOOKBACK) : ordinal])
        if m.get("role") == "assistant"
    ]
    return answered_list(back, message_text(messages[ordinal]))


def message_text(msg: dict[str, Any]) -> str:
    content = msg.get("content")
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        text = "\n".join(parts)
    else:
        text = content or ""
    for call in msg.get("tool_calls") or []:
        fn = call.get("function", {})
        text += f"\n{fn.get('name', '')}({fn.get('arguments', '')})"
    return text.strip()


def _trace(ordinal: int, role: str, extraction: Any) -> None:
    print(f"  #{ordinal} {role}: {extraction.operation} ({extraction.reason})")
    for op in extraction.ops:
        item = getattr(op, "item", None)
        target = getattr(op, "old_id", None) or getattr(op, "item_id", None)
        label = type(op).__name__
        if item is not None:
            print(f"      {label} {target or ''} -> {item.id} {render_item(item)}")
        else:
            print(f"      {label} {target}")


def run_scenario(
    scenario: dict[str, Any], count: Callable[[str], int], trace: bool = False
) -> dict[str, Any]:
    extractor = RuleExtractor()
    items: list[MemoryItem] = []
    counter = iter(range(1, 1_000_000))
    user_index = 0
    timings: list[float] = []
    for ordinal, msg in enumerate(scenario["messages"]):
        text = message_text(msg)
        turn = Turn(
            ordinal, msg["role"], text, msg, count(text), tool_call_id=msg.get("tool_call_id")
        )
        ctx = ExtractionContext(
            system_prompt=scenario.get("system", ""),
            items=tuple(items),
            user_turn_index=user_index,
            new_id=lambda: f"m{next(counter)}",
            previous=previous_answer(scenario["messages"], ordinal),
        )
        start = time.perf_counter()
        extraction = extractor.extract(turn, ctx)
        timings.append((time.perf_counter() - start) * 1000)
        if trace and extraction.ops:
            _trace(ordinal, msg["role"], extraction)
        items = apply_extraction(items, extraction, ordinal)
        if msg["role"] == "user":
            user_index += 1
    lines = [render_item(it) for it in active_items(items)]
    block = "\n".join(lines)
    folded_block = _fold(block)
    folded_lines = [_fold(line) for line in lines]
    misses, stale = [], []
    for check in scenario["checks"]:
        expect = [_fold(p) for p in check["expect_any"]]
        if not any(p in folded_block for p in expect):
            misses.append(check["id"])
        for phrase in (_fold(p) for p in check.get("stale_any", [])):
            if any(phrase in ln and not any(e in ln for e in expect) for ln in folded_lines):
                stale.append(check["id"])
                break
    return {
        "id": scenario["id"],
        "checks": len(scenario["checks"]),
        "misses": misses,
        "stale": stale,
        "items": len(lines),
        "tokens": count(block),
        "budget": scenario["budget_tokens"],
        "ms_avg": sum(timings) / len(timings),
        "ms_max": max(timings),
        "block": block,
        "all_items": items,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=ROOT.parent / "shared/eval/scenarios")
    parser.add_argument("--only", default="", help="run scenarios whose file name contains this")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each rendered block")
    parser.add_argument("--trace", action="store_true", help="print the ops of every message")
    args = parser.parse_args()
    count = token_counter()
    rows = []
    for path in sorted(args.dir.glob("*.json")):
        if args.only in path.name:
            scenario = json.loads(path.read_text(encoding="utf-8"))
            if args.trace:
                print(f"== {scenario['id']}")
            rows.append(run_scenario(scenario, count, args.trace))
    header = f"{'scenario':34} {'recall':>7} {'stale':>5} {'items':>5} {'tokens':>6} " \
             f"{'budget':>6} {'share':>6} {'ms avg':>7} {'ms max':>7}"  # fmt: skip
    print(header)
    print("-" * len(header))
    for r in rows:
        recall = (r["checks"] - len(r["misses"])) / r["checks"]
        print(
            f"{r['id']:34} {recall:7.2f} {len(r['stale']):5d} {r['items']:5d} {r['tokens']:6d} "
            f"{r['budget']:6d} {r['tokens'] / r['budget']:6.1%} {r['ms_avg']:7.2f} "
            f"{r['ms_max']:7.2f}"
        )
        if r["misses"] or r["stale"]:
            print(f"    missed: {r['misses']}  stale: {r['stale']}")
        if args.verbose:
            print("    " + r["block"].replace("\n", "\n    "))
    if rows:
        checks = sum(r["checks"] for r in rows)
        missed = sum(len(r["misses"]) for r in rows)
        stale = sum(len(r["stale"]) for r in rows)
        items = sum(r["items"] for r in rows)
        tokens = sum(r["tokens"] for r in rows)
        print(f"{'total':34} {(checks - missed) / checks:7.3f} {stale:5d} {items:5d} {tokens:6d}")
    ok = all(not r["misses"] and not r["stale"] for r in rows)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
