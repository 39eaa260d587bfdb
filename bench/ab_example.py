"""A worked A/B comparison: raw against managed context, end to end, offline.

    python bench/ab_example.py [--scenarios DIR ...] [--out DIR] [--split 0.5]

What a user does to A/B test memproxy, played by a script:

1. writes a config with `memory.ab_split: 0.5` (each new session is assigned,
   stickily, to the `raw` or the `managed` arm) and a `gpt-4o-mini` entry whose
   `api_base` is the local stub upstream (so litellm prices the usage with
   gpt-4o-mini's list price, and nothing leaves the machine);
2. runs `memproxy serve --config OUT/config.yaml` as a subprocess;
3. plays each scenario's conversation as an app would, through the official
   `openai` SDK: the full history every round, no session header, no mode
   header — the proxy picks the arm;
4. prints `memproxy ab-report --config OUT/config.yaml` (tokens, cost, latency
   and errors per arm) and, because the scenarios say what the user finally
   asked for, the share of those requirements that reached the upstream on
   the last round of each conversation, per arm.

The store stays in OUT, so `memproxy logs` / `memproxy inspect ID` work on it
afterwards. A benchmark, not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml
from openai import OpenAI

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, spawn_memproxy, wait_http  # noqa: E402
from proxy.chat_request import message_text  # noqa: E402
from proxy.eval_scenarios import Scenario, load_scenarios  # noqa: E402
from proxy.eval_scoring import score_final  # noqa: E402
from proxy.stub.server import StubUpstream  # noqa: E402


def write_config(out: Path, stub_url: str, split: float) -> Path:
    config = {
        "model_list": [
            {
                "model_name": "gpt-4o-mini",
                "litellm_params": {
                    "model": "openai/gpt-4o-mini",
                    "api_base": stub_url,
                    "api_key": "ab-example",
                },
            }
        ],
        "memory": {
            "database_url": f"sqlite+aiosqlite:///{out / 'memproxy.db'}",
            "ab_split": split,
        },
    }
    path = out / "config.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def start_proxy(config: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    proc = spawn_memproxy(config, port, log, log_level="info")
    wait_http(f"http://127.0.0.1:{port}/health", proc, f"memproxy serve (see {log})", 120)
    return proc


def play(client: OpenAI, stub: StubUpstream, scenario: Scenario) -> tuple[str, float]:
    """Play one conversation; returns (arm, share of final requirements forwarded)."""
    script = scenario.script()

    def responder(body: dict[str, Any]) -> dict[str, Any] | None:
        for msg in reversed(body.get("messages") or []):
            if msg.get("role") in ("user", "tool"):
                queue = script.get(message_text(msg))
                return queue.popleft() if queue else None
        return None

    stub.state.responder = responder
    history: list[dict[str, Any]] = [{"role": "system", "content": scenario.system}]
    rounds = [
        history + scenario.messages[:i]
        for i, msg in enumerate(scenario.messages)
        if msg["role"] == "assistant"
    ]
    rounds.append(history + scenario.messages + [{"role": "user", "content": scenario.final_user}])
    arm, recall = "?", 0.0
    for messages in rounds:
        kwargs: dict[str, Any] = {"tools": scenario.tools} if scenario.tools else {}
        raw = client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini",
            messages=messages,  # type: ignore[arg-type]
            extra_headers={"X-Memory-Budget": str(scenario.budget)},
            **kwargs,
        )
        arm = raw.headers.get("X-Memory-Mode", "?")
        raw.parse()
    forwarded = stub.received[-1].body["messages"]
    missed, _stale = score_final(scenario, forwarded, rounds[-1])
    if scenario.checks:
        recall = 1 - len(missed) / len(scenario.checks)
    return arm, recall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--scenarios",
        type=Path,
        action="append",
        help="scenario directory, repeatable (default: bench/scenarios, ../shared/eval/scenarios)",
    )
    parser.add_argument("--out", type=Path, default=None, help="keep config and store here")
    parser.add_argument("--split", type=float, default=0.5, help="share of sessions sent raw")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="memproxy-ab-"))
    out.mkdir(parents=True, exist_ok=True)
    directories = args.scenarios or [
        d
        for d in (ROOT / "bench" / "scenarios", ROOT.parent / "shared" / "eval" / "scenarios")
        if d.is_dir()
    ]
    scenarios = [s for d in directories for s in load_scenarios(d)]
    with StubUpstream() as stub:
        config = write_config(out, stub.url, args.split)
        port = free_port()
        proc = start_proxy(config, port, out / "serve.log")
        try:
            client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="app-key")
            by_arm: dict[str, list[float]] = defaultdict(list)
            for scenario in scenarios:
                arm, recall = play(client, stub, scenario)
                by_arm[arm].append(recall)
                print(f"{scenario.id:<36} arm={arm:<8} final requirements forwarded {recall:.2f}")
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"\n$ memproxy ab-report --config {config}")
    subprocess.run(
        [sys.executable, "-m", "proxy.cli", "ab-report", "--config", str(config)],
        check=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "110"},
    )
    print("final requirements that reached the upstream (scenario checks), per arm:")
    for arm, recalls in sorted(by_arm.items()):
        print(f"  {arm:<8} {len(recalls)} sessions, mean {statistics.fmean(recalls):.3f}")
    print(f"\nconfig and store kept in {out}")


if __name__ == "__main__":
    main()
