"""What a `memproxy eval --live` run will do, before it does it: its options, the
results file it appends to (and what that file already holds), and the estimate
of what the remaining arms cost (tokens × litellm's local prices)."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proxy.answers import Tokens, bill
from proxy.eval_scenarios import EvalError, Scenario
from proxy.eval_scoring import format_tokens
from proxy.judge import check_messages
from proxy.settings import Settings
from proxy.tokens import TokenCounter, encoding_for_model
from proxy.upstream import Upstream

ARMS = ("raw", "managed")
# Output tokens assumed per answer when --max-tokens does not bound them.
ASSUMED_ANSWER_TOKENS = 1000
ASSUMED_VERDICT_TOKENS = 80


@dataclass
class LiveOptions:
    scenarios: Path
    model: str
    judge: str | None = None
    out: Path | None = None  # a new results file (default: live-eval-<time>.jsonl)
    resume: Path | None = None  # an earlier run's file: run only what it lacks
    max_tokens: int | None = None
    only: Sequence[str] = ()
    policy: str | None = None
    db_path: Path | None = None
    progress: bool = False


@dataclass
class Estimate:
    """What the remaining arms would cost, before anything is sent."""

    model: str
    judge: str | None
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0  # a bound (--max-tokens) or an assumption
    bounded: bool = False  # completion_tokens is --max-tokens' bound
    judge_calls: int = 0
    judge_prompt_tokens: int = 0
    judge_completion_tokens: int = 0
    cost: float | None = None
    judge_cost: float | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def total(self) -> float | None:
        if self.cost is None or (self.judge and self.judge_cost is None):
            return None
        return self.cost + (self.judge_cost or 0.0)

    def text(self) -> str:
        lines = [
            f"{self.requests} final requests to {self.model}: about {self.prompt_tokens} input "
            f"and {'up to' if self.bounded else 'an assumed'} {self.completion_tokens} "
            "output tokens"
            + (f" (≈ ${self.cost:.4f})" if self.cost is not None else " (no price known)")
        ]
        if self.judge:
            lines.append(
                f"{self.judge_calls} judge calls to {self.judge}: about "
                f"{self.judge_prompt_tokens} input and {self.judge_completion_tokens} output "
                "tokens"
                + (f" (≈ ${self.judge_cost:.4f})" if self.judge_cost is not None else "")
                + ", more where a malformed verdict is retried"
            )
        total = self.total
        lines.append(
            f"estimated total: ${total:.4f} (prices from litellm's local cost map; "
            "no prompt-cache discounts counted)"
            if total is not None
            else "estimated total: unknown (a model has no price in litellm's cost map)"
        )
        return "\n".join(lines + self.notes)


# --- the results file ---------------------------------------------------------------


def read_results(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the run's header, its result and error lines); a torn last line is ignored."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvalError(f"cannot read {path}: {exc.strerror}") from None
    rows = []
    for line in lines:
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # written when the run was killed mid-line
    if not rows or rows[0].get("type") != "run":
        raise EvalError(f"{path} is not a `memproxy eval --live` results file")
    return rows[0], rows[1:]


def append_result(path: Path, row: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.flush()


def open_results(options: LiveOptions) -> tuple[Path, set[tuple[str, str]]]:
    """The file results go to and the (scenario, arm) pairs it already holds."""
    if options.resume is not None:
        header, rows = read_results(options.resume)
        for key, given in (("model", options.model), ("judge", options.judge)):
            if header.get(key) != given:
                raise EvalError(
                    f"{options.resume} is a run with --{key} {header.get(key)}; "
                    f"resume it with the same --{key}"
                )
        done = {(r["scenario"], r["arm"]) for r in rows if r.get("type") == "result"}
        return options.resume, done
    path = options.out or Path(time.strftime("live-eval-%Y%m%dT%H%M%SZ.jsonl", time.gmtime()))
    if path.exists():
        raise EvalError(f"{path} exists; give a new file for --out, or --resume {path}")
    header = {
        "type": "run",
        "model": options.model,
        "judge": options.judge,
        "scenarios": str(options.scenarios),
        "policy": options.policy or "default",
        "started_at": time.time(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    append_result(path, header)
    return path, set()


def check_models(settings: Settings, options: LiveOptions) -> None:
    names = [e.model_name for e in settings.model_list]
    for flag, name in (("--model", options.model), ("--judge", options.judge)):
        if name is not None and settings.find_model(name) is None:
            raise EvalError(
                f"{flag} {name!r} is not a model_list model_name in the config "
                f"(there: {', '.join(names) or 'none'})"
            )


def final_messages(scenario: Scenario) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": scenario.system},
        *scenario.messages,
        {"role": "user", "content": scenario.final_user},
    ]


def estimate(
    upstream: Upstream,
    todo: Sequence[tuple[Scenario, str]],
    options: LiveOptions,
) -> Estimate:
    """Tokens of the remaining final requests (managed: at most its budget) and judge
    calls, priced with litellm's local cost map."""
    target = upstream.resolve(options.model)
    counter = TokenCounter(encoding_for_model(target.provider_model))
    answer_tokens = options.max_tokens or ASSUMED_ANSWER_TOKENS
    est = Estimate(options.model, options.judge, requests=len(todo))
    est.bounded = options.max_tokens is not None
    for scenario, arm in todo:
        raw = format_tokens(counter, final_messages(scenario))
        est.prompt_tokens += raw if arm == "raw" else min(raw, int(scenario.budget * 1.05))
        est.completion_tokens += answer_tokens
        if options.judge:
            for check in scenario.checks:
                rubric = check_messages(check, scenario.final_user, "")
                est.judge_calls += 1
                est.judge_prompt_tokens += format_tokens(counter, rubric) + answer_tokens
                est.judge_completion_tokens += ASSUMED_VERDICT_TOKENS
    if options.max_tokens is None:
        est.notes.append(
            f"(output assumed {ASSUMED_ANSWER_TOKENS} tokens an answer; --max-tokens bounds it)"
        )
    est.cost = bill(
        upstream.pricing.prices(options.model), Tokens(est.prompt_tokens, est.completion_tokens)
    )
    if options.judge:
        est.judge_cost = bill(
            upstream.pricing.prices(options.judge),
            Tokens(est.judge_prompt_tokens, est.judge_completion_tokens),
        )
    memory = upstream.settings.memory
    if "llm" in (memory.extractor, memory.summarizer):
        est.notes.append(
            f"(memory.extractor/summarizer: llm calls {memory.llm_model} on every request "
            "of the history too; those calls are not in this estimate)"
        )
    elif memory.extractor == "hybrid":
        est.notes.append(
            f"(memory.extractor: hybrid calls {memory.llm_model} on requests whose turns "
            "hold an uncertain link; those calls are not in this estimate)"
        )
    return est


def select(scenarios: list[Scenario], only: Sequence[str], directory: Path) -> list[Scenario]:
    if not only:
        return scenarios
    unknown = sorted(set(only) - {s.id for s in scenarios})
    if unknown:
        known = ", ".join(s.id for s in scenarios)
        raise EvalError(f"no scenario {', '.join(unknown)} in {directory} (there: {known})")
    return [s for s in scenarios if s.id in only]
