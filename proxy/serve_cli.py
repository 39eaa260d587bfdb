"""`memproxy serve`: check the config is safe to serve, say where the proxy listens, run it."""

from __future__ import annotations

import argparse
import ipaddress
import os
import secrets
import sys
from pathlib import Path

from proxy.cli_settings import load_settings_or_exit
from proxy.config import ConfigError, find_config
from proxy.settings import Settings

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8400


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
    settings = load_settings_or_exit(args.config)
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


def add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
