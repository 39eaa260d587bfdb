"""deploy/: the compose file, nginx config and replica config agree with each other.

Docker is not available to the tests; these checks keep the files consistent
with the repository (paths, ports, the database URL, a config that loads).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from proxy.config import load_settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_compose_builds_the_image_and_mounts_files_that_exist() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"postgres", "memproxy", "lb"}
    build = services["memproxy"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).is_file()
    for service in services.values():
        for volume in service.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith("./"):
                assert (DEPLOY / source).is_file(), source
    url = services["memproxy"]["environment"]["MEMPROXY_DATABASE_URL"]
    assert url.startswith("postgresql+asyncpg://")
    assert "@postgres:5432/" in url
    assert services["memproxy"]["expose"] == ["8400"]
    assert services["memproxy"]["depends_on"]["postgres"]["condition"] == "service_healthy"


def test_nginx_balances_over_the_replicas_and_streams() -> None:
    conf = (DEPLOY / "nginx.conf").read_text()
    assert re.search(r"server\s+memproxy:8400;", conf)
    assert re.search(r"proxy_pass\s+http://memproxy;", conf)
    assert re.search(r"proxy_buffering\s+off;", conf)
    assert re.search(r"listen\s+8400;", conf)


def test_replica_config_loads_and_requires_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMPROXY_API_KEY", "sk-memproxy-test")
    monkeypatch.setenv("MEMPROXY_ADMIN_KEY", "admin-test")
    monkeypatch.delenv("MEMPROXY_DATABASE_URL", raising=False)
    settings = load_settings(DEPLOY / "config.yaml")
    assert settings.server.api_keys == ["sk-memproxy-test"]
    assert settings.memory.database_url.startswith("postgresql+asyncpg://")
