"""`memproxy serve | eval | logs | inspect ID | ab-report | bench`.

`serve` and `eval` live in their own modules (`proxy.serve_cli`, `proxy.eval_cli`);
the commands that read the store are wired here. Each command imports what it runs
when it runs: `memproxy --help` loads neither the server nor litellm.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

from proxy.cli_settings import load_store_settings_or_exit
from proxy.eval_cli import add_eval
from proxy.serve_cli import add_serve
from proxy.store.faults import StoreUnavailable


def cmd_logs(args: argparse.Namespace) -> int:
    from proxy.logs_cli import show_logs

    settings = load_store_settings_or_exit(args.config)
    return asyncio.run(show_logs(settings, args))


def cmd_inspect(args: argparse.Namespace) -> int:
    from proxy.inspect_cli import show_request

    settings = load_store_settings_or_exit(args.config)
    return asyncio.run(show_request(settings, args.request_id))


def cmd_ab_report(args: argparse.Namespace) -> int:
    from proxy.ab_report_cli import show_ab

    judge_only = [f"--{k}" for k in ("sample", "tenant", "since", "yes") if getattr(args, k)]
    if judge_only and not args.judge:
        print(f"memproxy: {', '.join(judge_only)} only go with --judge", file=sys.stderr)
        return 2
    settings = load_store_settings_or_exit(args.config)
    if args.judge:
        from proxy.live_cli import ab_judge

        return ab_judge(args, settings)
    return asyncio.run(show_ab(settings, args))


def cmd_bench(args: argparse.Namespace) -> int:
    root = Path(__file__).resolve().parent.parent / "bench"
    script = root / f"{args.name}.py"
    if not script.exists():
        names = sorted(p.stem for p in root.glob("[!_]*.py")) if root.is_dir() else []
        print(
            f"memproxy: no bench script {args.name!r}; available: {', '.join(names)}",
            file=sys.stderr,
        )
        return 2
    return subprocess.call([sys.executable, str(script), *args.rest])


def _add_logs(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`memproxy logs`: recent requests."""
    logs = sub.add_parser("logs", help="recent requests (Markdown; --json for JSON)")
    logs.add_argument("--config", default=None)
    logs.add_argument("-n", type=int, default=10)
    logs.add_argument("--session", default=None, help="a session id, or the name a client gave it")
    logs.add_argument("--json", action="store_true")
    logs.add_argument("-q", default=None, help="only requests whose record contains TEXT")
    logs.set_defaults(func=cmd_logs)


def _add_inspect(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`memproxy inspect`: one request's context, section by section."""
    insp = sub.add_parser("inspect", help="one request's context, section by section")
    insp.add_argument("request_id")
    insp.add_argument("--config", default=None)
    insp.set_defaults(func=cmd_inspect)


def _add_ab_report(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`memproxy ab-report`: A/B figures per mode (`--judge`: judged answers)."""
    ab = sub.add_parser("ab-report", help="A/B figures per mode from the request records")
    ab.add_argument("--config", default=None)
    ab.add_argument("--json", action="store_true")
    # Judged answers of recorded compare requests, on the user's key (docs/live-eval.md).
    ab.add_argument("--judge", metavar="MODEL", help="judge compare answers with this model")
    ab.add_argument("--sample", type=int, metavar="N", help="--judge: N compare requests")
    ab.add_argument("--seed", type=int, default=0, help="--judge: the sample's seed")
    ab.add_argument("--tenant", metavar="ID", help="--judge: only this tenant id")
    ab.add_argument("--since", metavar="WHEN", help="--judge: 24h, 7d, 2w or an ISO date")
    ab.add_argument("--yes", action="store_true", help="--judge: spend without asking")
    ab.set_defaults(func=cmd_ab_report)


def _add_bench(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`memproxy bench`: run a bench/ script."""
    bench = sub.add_parser("bench", help="run a bench/ script (overhead, history_scaling, ...)")
    bench.add_argument("name")
    bench.add_argument("rest", nargs=argparse.REMAINDER)
    bench.set_defaults(func=cmd_bench)


def build_parser() -> argparse.ArgumentParser:
    """The `memproxy` command line: one `add_*` step per subcommand."""
    parser = argparse.ArgumentParser(
        prog="memproxy", description="OpenAI-compatible proxy that manages conversation memory"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (add_serve, add_eval, _add_logs, _add_inspect, _add_ab_report, _add_bench):
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> Any:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except StoreUnavailable as exc:
        # `logs`, `inspect`, `ab-report` read the store: say why they cannot, no traceback.
        print(f"memproxy: the memory store is unavailable: {exc}", file=sys.stderr)
        raise SystemExit(1) from None


if __name__ == "__main__":
    raise SystemExit(main())
