"""`memproxy serve | eval | logs | inspect ID | ab-report | bench`."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

from proxy.config import ConfigError, Settings, find_config, load_settings
from proxy.store.faults import StoreUnavailable

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8400
LIVE_FLAGS = ("model", "judge", "out", "resume", "max_tokens", "yes")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _load(path: str | None) -> Settings:
    """The config as every command finds it: --config, $MEMPROXY_CONFIG, ./config.yaml."""
    try:
        return load_settings(find_config(path))
    except ConfigError as exc:
        print(f"memproxy: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def _load_existing_store(path: str | None) -> Settings:
    """The config of a command that reads the store: it must not create an empty one.

    Run from another folder, `./memproxy.db` (the default, relative) names a file
    that does not exist; opening it would create it, migrate it and print nothing.
    """
    settings = _load(path)
    from sqlalchemy.engine import make_url

    url = make_url(settings.memory.database_url)
    database = url.database or ""
    if url.drivername.startswith("sqlite") and database not in ("", ":memory:"):
        file = Path(database)
        if not file.is_file():
            source = find_config(path)
            where = f"config {source}" if source else "the default config (no config file found)"
            print(
                f"memproxy: no database at {file.resolve()} (memory.database_url from {where}). "
                "Run this from the folder where `memproxy serve` ran, or point at the right "
                "one with --config PATH, MEMPROXY_CONFIG or MEMPROXY_DATABASE_URL.",
                file=sys.stderr,
            )
            raise SystemExit(2)
    return settings


def _announce(settings: Settings, host: str, port: int) -> None:
    """Warnings about the config, then where to send requests and where the inspector is.

    With no admin key configured and a loopback host, one is generated for this
    run, so `/ui` works out of the box; it is printed here and nowhere else.
    """
    from proxy.config_checks import startup_warnings

    for line in startup_warnings(settings):
        print(f"memproxy: warning: {line}", file=sys.stderr)
    shown = f"[{host}]" if ":" in host else host
    base = f"http://{shown}:{port}"
    names = ", ".join(e.model_name for e in settings.model_list) or "(none configured)"
    print(f"memproxy: OpenAI base_url {base}/v1 (models: {names})", file=sys.stderr)
    server = settings.server
    if server.admin_key is None and _is_loopback(host):
        server.admin_key = secrets.token_urlsafe(18)
        print(
            f"memproxy: inspector {base}/ui#key={server.admin_key} "
            "(admin key generated for this run; set server.admin_key to keep one)",
            file=sys.stderr,
        )
    elif server.admin_key is None:
        print(
            "memproxy: inspector and /memory/... disabled: set server.admin_key "
            "(or MEMPROXY_ADMIN_KEY) to use them",
            file=sys.stderr,
        )
    else:
        print(f"memproxy: inspector {base}/ui (admin key: server.admin_key)", file=sys.stderr)


def cmd_serve(args: argparse.Namespace) -> int:
    settings = _load(args.config)
    if not settings.server.api_keys and not _is_loopback(args.host) and not args.insecure:
        print(
            f"memproxy: refusing to listen on {args.host} with no server.api_keys configured: "
            "anyone who can reach it could use your provider keys. Configure server.api_keys, "
            "bind to 127.0.0.1, or pass --insecure.",
            file=sys.stderr,
        )
        return 2
    if args.workers < 1:
        print("memproxy: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.workers > 1 and settings.memory.database_url.startswith("sqlite"):
        # SQLite could be shared (WAL, busy timeout), but the order of a session's
        # requests and the matching of conversations live in each process: two
        # workers would interleave a session's turns. PostgreSQL extends both
        # across processes (advisory locks), so several workers need it.
        print(
            "memproxy: --workers > 1 needs PostgreSQL (memory.database_url: "
            "postgresql+asyncpg://..., or MEMPROXY_DATABASE_URL): with SQLite, each worker "
            "would order a session's requests on its own. Use one worker with SQLite.",
            file=sys.stderr,
        )
        return 2
    import uvicorn

    from proxy.http.app import create_app

    _announce(settings, args.host, args.port)
    try:
        app = create_app(settings)
    except (ConfigError, ValueError) as exc:
        print(f"memproxy: {exc}", file=sys.stderr)
        return 2
    if args.workers > 1:
        chosen = find_config(args.config)
        if chosen:
            os.environ["MEMPROXY_CONFIG"] = str(Path(chosen).resolve())
        if settings.server.admin_key and not os.environ.get("MEMPROXY_ADMIN_KEY"):
            os.environ["MEMPROXY_ADMIN_KEY"] = settings.server.admin_key  # a generated one
        uvicorn.run(
            "proxy.http.app:create_app_from_env",
            factory=True,
            host=args.host,
            port=args.port,
            workers=args.workers,
            log_level=args.log_level,
        )
        return 0
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


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

        return live_eval(args, _load(args.config))
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

    entry = _load(args.config).find_model(args.llm_model)
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


def cmd_logs(args: argparse.Namespace) -> int:
    from proxy.logs_cli import show_logs

    settings = _load_existing_store(args.config)
    return asyncio.run(show_logs(settings, args))


def cmd_inspect(args: argparse.Namespace) -> int:
    from proxy.inspect_cli import show_request

    settings = _load_existing_store(args.config)
    return asyncio.run(show_request(settings, args.request_id))


def cmd_ab_report(args: argparse.Namespace) -> int:
    from proxy.ab_report_cli import show_ab

    judge_only = [f"--{k}" for k in ("sample", "tenant", "since", "yes") if getattr(args, k)]
    if judge_only and not args.judge:
        print(f"memproxy: {', '.join(judge_only)} only go with --judge", file=sys.stderr)
        return 2
    settings = _load_existing_store(args.config)
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


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`memproxy serve`: run the proxy."""
    serve = sub.add_parser("serve", help="run the proxy")
    serve.add_argument(
        "--config", default=None, help="default: $MEMPROXY_CONFIG, else ./config.yaml"
    )
    serve.add_argument("--host", default=DEFAULT_HOST)
    serve.add_argument("--port", type=int, default=DEFAULT_PORT)
    serve.add_argument(
        "--workers", type=int, default=1, help="worker processes (more than 1: PostgreSQL only)"
    )
    serve.add_argument(
        "--insecure", action="store_true", help="allow a non-loopback host without server.api_keys"
    )
    serve.add_argument("--log-level", default="info")
    serve.set_defaults(func=cmd_serve)


def _add_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    """The `memproxy` command line: one subcommand per `_add_*` step."""
    parser = argparse.ArgumentParser(
        prog="memproxy", description="OpenAI-compatible proxy that manages conversation memory"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (_add_serve, _add_eval, _add_logs, _add_inspect, _add_ab_report, _add_bench):
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
