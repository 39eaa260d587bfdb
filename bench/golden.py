"""The golden corpus: what the rule extractor does to every message of every scenario set.

    python -m bench.golden            # compare with tests/golden/, print a diff, exit 1 if any
    python -m bench.golden --update   # rewrite tests/golden/ from the current rules
    python -m bench.golden --ops-only # skip the eval figures (the slow part)
    python -m bench.golden --set fresh3 --set bench   # only these sets
    python -m bench.golden --linkers  # decisions per linker over the corpus

A change to a rule shows its consequences here as a diff over every set at
once: which message now adds, supersedes, revokes or flags something else.
Each set gets `tests/golden/<set>.jsonl`, one line per message;
`tests/golden/linkers.json` counts each set's decisions per linker (which
rule of the linking chain replaced, revoked or flagged what), and
`tests/golden/figures.json` holds each set's eval totals (full, user_turns,
layered). Nothing is rewritten without `--update`.

The files hold no sentence of a scenario: a value is written as where it
stands in its source message (`@ordinal:start-end`), or, when the extractor
trimmed or joined text, as a short digest (`#digest/length`). The diff
resolves both back to text, so it reads as sentences, while the corpus can
sit in the repository without copying evaluation text into it.

`bench/scenarios/fresh14` is held out: it is never read here.
"""

from __future__ import annotations

import argparse
import asyncio
import difflib
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.extraction_check import message_text, previous_answer, token_counter  # noqa: E402
from policies.extract.extraction import RuleExtractor  # noqa: E402
from policies.extract.linking import decisions  # noqa: E402
from policies.memory.reducer import apply_extraction  # noqa: E402
from policies.types import (  # noqa: E402
    Add,
    Confirm,
    Conflict,
    Extraction,
    ExtractionContext,
    MemoryItem,
    MemoryOp,
    Revoke,
    Supersede,
    Turn,
)

GOLDEN = ROOT / "tests" / "golden"
HELD_OUT = frozenset({"fresh14"})
POLICIES = ("full", "user_turns", "layered")
DEV = Path("/work/shared/eval/scenarios")


def scenario_sets() -> dict[str, Path]:
    """Every set by name: the development set (when this machine has it), `bench`
    (the top-level files of bench/scenarios) and each `fresh*` folder but the held-out one."""
    sets: dict[str, Path] = {}
    if DEV.is_dir():
        sets["dev"] = DEV
    sets["bench"] = ROOT / "bench" / "scenarios"
    for folder in sorted((ROOT / "bench" / "scenarios").glob("fresh*")):
        if folder.is_dir() and folder.name not in HELD_OUT:
            sets[folder.name] = folder
    return sets


# -- folding a scenario through the extractor --------------------------------


@dataclass(frozen=True, slots=True)
class Step:
    """One message and what the extractor made of it."""

    scenario: str
    ordinal: int
    role: str
    text: str
    extraction: Extraction


def fold(scenario: dict[str, Any], count: Callable[[str], int]) -> Iterator[Step]:
    """The scenario's messages in order, each extracted against the memory so far
    (as `bench/extraction_check.py` and the proxy fold them)."""
    extractor = RuleExtractor()
    items: list[MemoryItem] = []
    counter = iter(range(1, 1_000_000))
    user_index = 0
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
        extraction = extractor.extract(turn, ctx)
        yield Step(scenario["id"], ordinal, msg["role"], text, extraction)
        items = apply_extraction(items, extraction, ordinal)
        if msg["role"] == "user":
            user_index += 1


def load_set(path: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(path.glob("*.json"))]


# -- writing text without copying it -----------------------------------------


class Texts:
    """Writes a text as a reference into the scenario's messages, and reads it back."""

    def __init__(self, scenario: dict[str, Any]) -> None:
        self.messages = [message_text(m) for m in scenario["messages"]]
        self.digested: dict[str, str] = {}  # digest ref -> text, from this run

    def ref(self, text: str, ordinal: int) -> str:
        if not text:
            return ""
        # The source message first, then the earlier ones (a restored or joined value).
        for o in [ordinal, *range(ordinal - 1, -1, -1)]:
            at = self.messages[o].find(text) if 0 <= o < len(self.messages) else -1
            if at >= 0:
                return f"@{o}:{at}-{at + len(text)}"
        ref = f"#{digest(text)}/{len(text)}"
        self.digested[ref] = text
        return ref

    def resolve(self, ref: str) -> str:
        if ref.startswith("@"):
            o, span = ref[1:].split(":")
            start, end = (int(x) for x in span.split("-"))
            return self.messages[int(o)][start:end]
        # A digest reads back only when this run produced the same text.
        return self.digested.get(ref, ref)


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def _item(item: MemoryItem, texts: Texts) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": item.id,
        "type": item.type,
        "slot": item.slot,
        "value": texts.ref(item.value, item.source_ordinal),
        "source": item.source,
        "importance": round(item.importance, 4),
    }
    if item.status != "active":
        out["status"] = item.status
    if item.superseded_by:
        out["superseded_by"] = item.superseded_by
    if item.replaces:
        out["replaces"] = texts.ref(item.replaces, item.source_ordinal)
    if item.pinned:
        out["pinned"] = True
    return out


def op_record(op: MemoryOp, texts: Texts, ordinal: int) -> dict[str, Any]:
    """An op as the golden file keeps it: what it does, to which item, with what."""
    if isinstance(op, Add):
        return {"op": "add", "item": _item(op.item, texts)}
    if isinstance(op, Supersede):
        return {"op": "supersede", "old": op.old_id, "item": _item(op.item, texts)}
    if isinstance(op, Revoke):
        return {"op": "revoke", "old": op.old_id, "reason": texts.ref(op.reason, ordinal)}
    if isinstance(op, Conflict):
        return {
            "op": "conflict",
            "old": op.old_id,
            "item": _item(op.item, texts),
            "note": texts.ref(op.note, ordinal),
        }
    assert isinstance(op, Confirm)
    return {"op": "confirm", "item": op.item_id}


def step_record(step: Step, texts: Texts) -> dict[str, Any]:
    ex = step.extraction
    return {
        "scenario": step.scenario,
        "ordinal": step.ordinal,
        "role": step.role,
        "operation": ex.operation,
        "reason": ex.reason,
        "ops": [op_record(op, texts, step.ordinal) for op in ex.ops],
    }


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def set_lines(
    path: Path, count: Callable[[str], int], linkers: Counter[str] | None = None
) -> tuple[list[str], dict[str, Texts]]:
    """The golden lines of one set, and each scenario's texts (to read the refs back);
    `linkers` counts the decisions of each linker on the way."""
    lines: list[str] = []
    texts: dict[str, Texts] = {}
    for scenario in load_set(path):
        t = texts[scenario["id"]] = Texts(scenario)
        for step in fold(scenario, count):
            lines.append(_line(step_record(step, t)))
            if linkers is not None:
                linkers.update(f"{d['linker']} {d['op']}" for d in decisions(step.extraction.ops))
    return lines, texts


def linker_table(counts: dict[str, Counter[str]]) -> str:
    """Decisions per linker (rows) and set (columns), with a total column."""
    keys = sorted({k for c in counts.values() for k in c}, key=lambda k: (k.split()[1], k))
    names = list(counts)
    width = max([len(k) for k in keys] + [10])
    head = f"{'linker op':{width}} " + " ".join(f"{n[:7]:>7}" for n in names) + f" {'total':>7}"
    rows = [head, "-" * len(head)]
    for k in keys:
        cells = " ".join(f"{counts[n][k]:7d}" for n in names)
        rows.append(f"{k:{width}} {cells} {sum(counts[n][k] for n in names):7d}")
    return "\n".join(rows)


# -- eval figures --------------------------------------------------------------


def eval_figures(path: Path) -> dict[str, dict[str, float]]:
    """`memproxy eval --scenarios PATH --policy P --json` totals, per policy."""
    from proxy.evaluation import run_eval

    out: dict[str, dict[str, float]] = {}
    for policy in POLICIES:
        report = asyncio.run(run_eval(path, policy=policy))
        out[policy] = {k: round(float(v), 4) for k, v in sorted(report["total"].items())}
    return out


# -- comparing -------------------------------------------------------------------


def _readable(line: str, texts: dict[str, Texts]) -> str:
    """A golden line with its refs read back into text, for a diff a person can follow."""
    record = json.loads(line)
    t = texts.get(record["scenario"])
    head = f"{record['scenario']} #{record['ordinal']} {record['role']}: {record['operation']}"
    parts = [head + (f" ({record['reason']})" if record["reason"] else "")]
    for op in record["ops"]:
        item = op.get("item")
        desc = op["op"] + (f" {op['old']}" if "old" in op else "")
        if isinstance(item, dict):
            value = t.resolve(item["value"]) if t else item["value"]
            desc += f" -> {item['id']} [{item['type']}/{item['slot']}] {value}"
        elif item:
            desc += f" {item}"
        if op.get("reason"):
            desc += f" ({t.resolve(op['reason']) if t else op['reason']})"
        parts.append("    " + desc)
    return "\n".join(parts)


def diff_lines(name: str, old: list[str], new: list[str], texts: dict[str, Texts]) -> list[str]:
    """A unified diff of one set's golden lines, each changed line read back into text."""
    if old == new:
        return []
    out: list[str] = []
    for line in difflib.unified_diff(old, new, f"golden/{name}", f"now/{name}", n=0, lineterm=""):
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            body = line[1:]
            try:
                shown = _readable(body, texts)
            except (ValueError, KeyError, IndexError):
                shown = body
            out.append(line[0] + " " + shown.replace("\n", "\n" + line[0] + " "))
        else:
            out.append(line)
    return out


def _figure_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for name in sorted(set(old) | set(new)):
        for policy in sorted(set(old.get(name, {})) | set(new.get(name, {}))):
            a, b = old.get(name, {}).get(policy, {}), new.get(name, {}).get(policy, {})
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    out.append(f"  {name} {policy} {key}: {a.get(key)} -> {b.get(key)}")
    return out


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.jsonl"


def read_golden(name: str) -> list[str]:
    path = golden_path(name)
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


LINKERS_FILE = GOLDEN / "linkers.json"


def read_linkers() -> dict[str, dict[str, int]]:
    """Decisions per linker ("explicit supersede") and set, as last updated."""
    if not LINKERS_FILE.exists():
        return {}
    data: dict[str, dict[str, int]] = json.loads(LINKERS_FILE.read_text(encoding="utf-8"))
    return data


def linker_diff(old: dict[str, dict[str, int]], new: dict[str, dict[str, int]]) -> list[str]:
    out = []
    for name in sorted(set(old) | set(new)):
        a, b = old.get(name, {}), new.get(name, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key, 0) != b.get(key, 0):
                out.append(f"  {name} {key}: {a.get(key, 0)} -> {b.get(key, 0)}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite tests/golden/")
    parser.add_argument("--ops-only", action="store_true", help="skip the eval figures")
    parser.add_argument("--set", action="append", default=[], help="only this set (repeatable)")
    parser.add_argument(
        "--linkers", action="store_true", help="print decisions per linker and set, then stop"
    )
    args = parser.parse_args(argv)
    sets = scenario_sets()
    if args.set:
        unknown = sorted(set(args.set) - set(sets))
        if unknown:
            print(f"no set {', '.join(unknown)} (there: {', '.join(sets)})", file=sys.stderr)
            return 2
        sets = {k: v for k, v in sets.items() if k in args.set}
    count = token_counter()
    if args.linkers:
        counts = {name: Counter[str]() for name in sets}
        for name, path in sets.items():
            set_lines(path, count, counts[name])
        print(linker_table(counts))
        return 0
    changed = False
    GOLDEN.mkdir(parents=True, exist_ok=True)
    old_linkers, new_linkers = read_linkers(), read_linkers()
    for name, path in sets.items():
        counter = Counter[str]()
        lines, texts = set_lines(path, count, counter)
        new_linkers[name] = dict(sorted(counter.items()))
        diff = diff_lines(name, read_golden(name), lines, texts)
        if diff:
            changed = True
            print("\n".join(diff))
        if args.update:
            golden_path(name).write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{name}: {len(lines)} messages, {'changed' if diff else 'same'}", file=sys.stderr)
    ldiff = linker_diff(old_linkers, new_linkers)
    if ldiff:
        changed = True
        print("decisions per linker:\n" + "\n".join(ldiff))
    if args.update:
        text = json.dumps(new_linkers, indent=1, sort_keys=True, ensure_ascii=False)
        LINKERS_FILE.write_text(text + "\n", encoding="utf-8")
    if not args.ops_only:
        figures_file = GOLDEN / "figures.json"
        old = json.loads(figures_file.read_text(encoding="utf-8")) if figures_file.exists() else {}
        new = dict(old)
        for name, path in sets.items():
            new[name] = eval_figures(path)
            print(f"{name}: figures {new[name]['full']}", file=sys.stderr)
        fdiff = _figure_diff(old, new)
        if fdiff:
            changed = True
            print("eval figures:\n" + "\n".join(fdiff))
        if args.update:
            text = json.dumps(new, indent=1, sort_keys=True, ensure_ascii=False)
            figures_file.write_text(text + "\n", encoding="utf-8")
    if args.update:
        return 0
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
