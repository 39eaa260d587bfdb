"""`memproxy eval`: replay scenarios through a local proxy and score them (offline;
`--live` for final answers by a real model, in `proxy.live_cli`)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from proxy.cli_settings import load_settings_or_exit

LIVE_FLAGS = ("model", "judge", "out", "resume", "max_tokens", "yes")


def cmd_eval(args: argparse.Namespace) -> int:
    # --yes also confirms --llm-model's spending.
    live_only = [
        f"--{k.replace('_', '-')}"
        for k in LIVE_FLAGS
        if getattr(args, k) and not (k == "yes" and args.llm_model)
    ]
    if args.live:
        if not args.model:
            print("memproxy: eval --live needs --model NAME (a model_list model)", file=sys.stderr)
            return 2
        from proxy.live_cli import live_eval

        return live_eval(args, load_settings_or_exit(args.config))
    if live_only:
        print(f"memproxy: {', '.join(live_only)} only go with --live", file=sys.stderr)
        return 2
    from proxy.eval_report import format_table, inspect_hint
    from proxy.eval_scenarios import EvalError
    from proxy.evaluation import new_db_path, run_eval

    live = None
    if args.llm_model:
        live = _recording_model(args)
        if live is None:
            return 2
    try:
        db = new_db_path(Path(args.db)) if args.db else None
        report = asyncio.run(
            run_eval(
                Path(args.scenarios),
                mode=args.mode,
                policy=args.policy,
                progress=not args.json,
                only=args.scenario or (),
                db_path=db,
                api=args.api,
                extractor=args.extractor,
                llm_replies=Path(args.llm_replies) if args.llm_replies else None,
                llm_record=Path(args.llm_record) if args.llm_record else None,
                llm_live=live,
            )
        )
    except EvalError as exc:
        print(f"memproxy: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(format_table(report))
        if db is not None:
            print(inspect_hint(report, db))
    return 0


def _recording_model(args: argparse.Namespace) -> Any:
    """--llm-model: the config's model_list entry that answers live, once the user
    agreed to spend on it (None: refused or unknown, said on stderr)."""
    from proxy.live_cli import confirm_spend

    entry = load_settings_or_exit(args.config).find_model(args.llm_model)
    if entry is None:
        print(f"memproxy: --llm-model {args.llm_model!r}: not in model_list", file=sys.stderr)
        return None
    if not args.llm_record:
        print("memproxy: --llm-model needs --llm-record NEW.jsonl (its replies)", file=sys.stderr)
        return None
    estimate = (
        f"memproxy eval --llm-model {args.llm_model}: at most one call per replayed request "
        "whose turns hold an uncertain link (a few hundred tokens each), on your provider key"
    )
    return entry if confirm_spend(estimate, yes=args.yes) else None


def add_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`memproxy eval`: replay scenarios through a local proxy and score them
    (offline; `--live` for final answers by a real model)."""
    ev = sub.add_parser("eval", help="replay memory scenarios through a local proxy and score")
    ev.add_argument("--scenarios", required=True, help="directory of scenario JSON files")
    ev.add_argument("--mode", default="managed", choices=["managed", "raw"])
    ev.add_argument(
        "--policy",
        default=None,
        help="preset: raw | window | summary_buffer | full | user_turns | layered",
    )
    ev.add_argument("--json", action="store_true")
    ev.add_argument(
        "--api",
        default="chat",
        choices=["chat", "responses", "messages"],
        help="wire API the replayed requests use (default: chat completions)",
    )
    ev.add_argument(
        "--scenario", action="append", metavar="ID", help="only this scenario (repeatable)"
    )
    ev.add_argument(
        "--db",
        metavar="PATH",
        help="keep the store (request records included) in this new SQLite file",
    )
    ev.add_argument(
        "--extractor",
        default="rules",
        choices=["rules", "llm", "hybrid"],
        help="memory.extractor; llm and hybrid are answered from --llm-replies",
    )
    ev.add_argument(
        "--llm-replies",
        metavar="FILE",
        help="recorded model replies (JSONL: hash, reply); a prompt without one falls back",
    )
    ev.add_argument(
        "--llm-record",
        metavar="FILE",
        help="new JSONL file: every prompt the model is asked, with its recorded reply or null",
    )
    ev.add_argument(
        "--llm-model",
        metavar="NAME",
        help="a model_list model of --config that answers what --llm-replies lacks, "
        "recorded in --llm-record (spends; --yes)",
    )
    # Live: the final answers by a model_list model, on the user's key (docs/live-eval.md).
    ev.add_argument("--live", action="store_true", help="final answers by a real model, scored")
    ev.add_argument("--model", help="--live: the model_list model that answers")
    ev.add_argument("--judge", metavar="MODEL", help="--live: a model_list model that judges")
    ev.add_argument("--config", default=None, help="--live: config.yaml with the model_list")
    ev.add_argument("--out", metavar="FILE", help="--live: new results file (JSONL)")
    ev.add_argument("--resume", metavar="FILE", help="--live: run what FILE lacks, append")
    ev.add_argument("--max-tokens", type=int, help="--live: max_tokens of each final answer")
    ev.add_argument("--yes", action="store_true", help="--live: spend without asking")
    ev.set_defaults(func=cmd_eval)
