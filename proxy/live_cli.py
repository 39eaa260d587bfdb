"""The CLI side of the commands that spend the user's money: `memproxy eval --live`
and `memproxy ab-report --judge`. Both show an estimate and need a yes first:
`--yes`, or an answer at a terminal; with neither they refuse and say so."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from proxy.settings import Settings


def confirm_spend(
    estimate_text: str, *, yes: bool, stdin: TextIO | None = None, stderr: TextIO | None = None
) -> bool:
    """Show the estimate; True when the user agreed (or passed --yes)."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    stderr.write(estimate_text + "\n")
    if yes:
        return True
    if not stdin.isatty():
        stderr.write(
            "memproxy: this spends money on your provider key and needs a confirmation; "
            "stdin is not a terminal, so pass --yes to go ahead.\n"
        )
        return False
    stderr.write("Go ahead? [y/N] ")
    stderr.flush()
    answer = stdin.readline().strip().lower()
    return answer in ("y", "yes")


def live_eval(args: argparse.Namespace, settings: Settings) -> int:
    from proxy.eval_scenarios import EvalError
    from proxy.evaluation import new_db_path
    from proxy.live_eval import run_live
    from proxy.live_plan import LiveOptions
    from proxy.live_report import format_live_table

    def confirm(est: Any) -> bool:
        return confirm_spend(est.text(), yes=args.yes)

    try:
        options = LiveOptions(
            scenarios=Path(args.scenarios),
            model=args.model,
            judge=args.judge,
            out=Path(args.out) if args.out else None,
            resume=Path(args.resume) if args.resume else None,
            max_tokens=args.max_tokens,
            only=args.scenario or (),
            policy=args.policy,
            db_path=new_db_path(Path(args.db)) if args.db else None,
            progress=not args.json,
        )
        outcome = asyncio.run(run_live(settings, options, confirm))
    except EvalError as exc:
        print(f"memproxy: {exc}", file=sys.stderr)
        return 2
    if outcome.cancelled:
        print(f"memproxy: nothing sent (results file: {outcome.path})", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(outcome.report, ensure_ascii=False, indent=2))
    else:
        print(format_live_table(outcome.report))
    print(f"results: {outcome.path}", file=sys.stderr)
    if outcome.stopped:
        print(
            f"memproxy: stopped: {outcome.stopped}. What finished is in {outcome.path}; "
            f"run the same command with --resume {outcome.path} to continue.",
            file=sys.stderr,
        )
        return 1
    return 0


def ab_judge(args: argparse.Namespace, settings: Settings) -> int:
    import time

    from proxy.ab_judge import (
        ABJudgeError,
        bill_arms,
        build_ab_report,
        estimate_text,
        format_ab_report,
        judge_pairs,
        parse_since,
        sample,
        select_pairs,
    )
    from proxy.store.repo import Store
    from proxy.upstream import Upstream

    if settings.find_model(args.judge) is None:
        names = ", ".join(e.model_name for e in settings.model_list) or "none"
        print(f"memproxy: --judge {args.judge!r} is not a model_list model_name (there: {names})",
              file=sys.stderr)  # fmt: skip
        return 2
    if args.sample is not None and args.sample < 1:
        print("memproxy: --sample must be at least 1", file=sys.stderr)
        return 2
    try:
        since = parse_since(args.since, time.time()) if args.since else None
    except ABJudgeError as exc:
        print(f"memproxy: {exc}", file=sys.stderr)
        return 2

    async def run() -> int:
        store = await Store.open(settings.memory.database_url)
        try:
            selection = await select_pairs(store, args.tenant, since)
        finally:
            await store.close()
        upstream = Upstream(settings)
        await asyncio.to_thread(upstream.load)
        chosen = sample(selection.pairs, args.sample, args.seed)
        if chosen and not confirm_spend(estimate_text(upstream, args.judge, chosen), yes=args.yes):
            print("memproxy: nothing sent", file=sys.stderr)
            return 2
        judged = await judge_pairs(upstream, args.judge, chosen)
        report = build_ab_report(
            selection, judged, bill_arms(upstream, selection.pairs), args.judge
        )
        if args.json:
            print(json.dumps(report, ensure_ascii=False, indent=2))
        else:
            print(format_ab_report(report))
        return 0

    return asyncio.run(run())
