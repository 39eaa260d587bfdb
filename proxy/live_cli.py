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

from proxy.config import Settings


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
    from proxy.evaluation import EvalError, new_db_path
    from proxy.live_eval import LiveOptions, run_live
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
