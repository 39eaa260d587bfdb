"""Loading `config.yaml` into `Settings`: validated once at start-up, env overrides
applied.

Values of the form `os.environ/NAME` are read from the environment. A config error
names the offending key (`memory.budget_tokens: ...`). The settings themselves, and
the rules a valid file keeps, are `proxy.settings`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from proxy.settings import Settings

ENV_PREFIX = "os.environ/"


class ConfigError(Exception):
    """Raised for an invalid configuration; the message names the key."""


def _resolve_env(value: Any) -> Any:
    """Replace `os.environ/NAME` strings with the variable's value (None if unset)."""
    if isinstance(value, str) and value.startswith(ENV_PREFIX):
        return os.environ.get(value[len(ENV_PREFIX) :])
    if isinstance(value, dict):
        return {k: _resolve_env(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve_env(v) for v in value]
    return value


def _unset_env(params: Any, prefix: str = "") -> list[tuple[str, str]]:
    """(key, NAME) of each `os.environ/NAME` in `params` whose variable is unset."""
    out: list[tuple[str, str]] = []
    if isinstance(params, dict):
        for key, value in params.items():
            out += _unset_env(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(params, list):
        for i, value in enumerate(params):
            out += _unset_env(value, f"{prefix}[{i}]")
    elif isinstance(params, str) and params.startswith(ENV_PREFIX):
        name = params[len(ENV_PREFIX) :]
        if not os.environ.get(name):
            out.append((prefix, name))
    return out


def _format_error(err: ValidationError) -> str:
    lines = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "(root)"
        lines.append(f"{key}: {e['msg']}")
    return "invalid config: " + "; ".join(lines)


def settings_from_dict(data: dict[str, Any], *, env: dict[str, str] | None = None) -> Settings:
    """Validate a config mapping; env overrides (`MEMPROXY_DATABASE_URL`) win."""
    env = dict(os.environ) if env is None else env
    if not isinstance(data, dict):
        raise ConfigError("invalid config: the top level must be a mapping")
    entries = data.get("model_list")
    unset = (
        [_unset_env(e.get("litellm_params")) if isinstance(e, dict) else [] for e in entries]
        if isinstance(entries, list)
        else []
    )
    data = _resolve_env(data)
    try:
        settings = Settings.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_error(err)) from None
    for entry, missing in zip(settings.model_list, unset, strict=False):
        entry.record_missing_env(missing)
    if env.get("MEMPROXY_DATABASE_URL"):
        settings.memory.database_url = env["MEMPROXY_DATABASE_URL"]
    # Keys without editing the file (a container: `docker run -e MEMPROXY_API_KEYS=...`).
    if env.get("MEMPROXY_API_KEYS"):
        settings.server.api_keys = [
            k.strip() for k in env["MEMPROXY_API_KEYS"].split(",") if k.strip()
        ]
    if env.get("MEMPROXY_ADMIN_KEY"):
        settings.server.admin_key = env["MEMPROXY_ADMIN_KEY"]
    check_database_url(settings.memory.database_url)
    return settings


SUPPORTED_DRIVERS = ("sqlite+aiosqlite", "postgresql+asyncpg")


def check_database_url(url: str) -> None:
    """A URL that can never work is a config error at start-up; an unreachable
    database is not (the store is retried, see `Store.ensure_ready`).

    The message never repeats the URL: it may hold a password.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    expected = "expected sqlite+aiosqlite:///PATH or postgresql+asyncpg://USER@HOST:PORT/DB"
    try:
        driver = make_url(url).drivername
    except (ArgumentError, ValueError):
        raise ConfigError(
            f"invalid config: memory.database_url: not a database URL; {expected}"
        ) from None
    if driver not in SUPPORTED_DRIVERS:
        raise ConfigError(
            f"invalid config: memory.database_url: unsupported driver {driver!r}; {expected}"
        )


DEFAULT_CONFIG_FILE = "config.yaml"


def find_config(path: str | os.PathLike[str] | None = None) -> str | None:
    """The config file the CLI uses: `--config`, else `$MEMPROXY_CONFIG`, else
    `./config.yaml` when there is one, else None (defaults)."""
    if path:
        return str(path)
    if os.environ.get("MEMPROXY_CONFIG"):
        return os.environ["MEMPROXY_CONFIG"]
    return DEFAULT_CONFIG_FILE if Path(DEFAULT_CONFIG_FILE).is_file() else None


def load_settings(path: str | os.PathLike[str] | None = None) -> Settings:
    """Load `path`, else `$MEMPROXY_CONFIG`; no file at all means defaults."""
    chosen = path or os.environ.get("MEMPROXY_CONFIG")
    if not chosen:
        return settings_from_dict({})
    file = Path(chosen)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {file}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {file} is not valid YAML: {exc}") from None
    return settings_from_dict(data)
