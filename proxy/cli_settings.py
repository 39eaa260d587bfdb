"""The config as every `memproxy` command finds it, and the check of the commands that
read the store; a config that cannot be read ends the command with its reason."""

from __future__ import annotations

import sys
from pathlib import Path

from proxy.config import ConfigError, find_config, load_settings
from proxy.settings import Settings


def load_settings_or_exit(path: str | None) -> Settings:
    """The config as every command finds it: --config, $MEMPROXY_CONFIG, ./config.yaml."""
    try:
        return load_settings(find_config(path))
    except ConfigError as exc:
        print(f"memproxy: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def load_store_settings_or_exit(path: str | None) -> Settings:
    """The config of a command that reads the store: it must not create an empty one.

    Run from another folder, `./memproxy.db` (the default, relative) names a file
    that does not exist; opening it would create it, migrate it and print nothing.
    """
    settings = load_settings_or_exit(path)
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
