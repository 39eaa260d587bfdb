"""The commands the containers run, run here without Docker (no engine in CI).

`Dockerfile`: its ENV lines and ENTRYPOINT, with the README's `docker run -e
MEMPROXY_API_KEYS=...`, the image's built-in config (the repository's
config.yaml) and /data mapped to a temporary folder. `deploy/compose.yaml`:
the memproxy service's environment, config mount and command, two replicas on
one PostgreSQL database (skipped without MEMPROXY_TEST_PG_URL). What is not
exercised: the image build itself, nginx, Docker's networking.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml

from tests.databases import create_pg_database, drop_pg_database, pg_base_url
from tests.e2e.serving import free_port
from tests.e2e.test_first_run import clean_env, memproxy_command, wait_healthy

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
API_KEY = "sk-memproxy-container-test"
ADMIN_KEY = "admin-container-test"


def dockerfile() -> tuple[dict[str, str], list[str], dict[str, Path]]:
    """The image's ENV, its ENTRYPOINT, and where each COPY'd container path comes from."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    env: dict[str, str] = {}
    entrypoint: list[str] = []
    copies: dict[str, Path] = {}
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "ENV":
            for pair in shlex.split(rest):
                name, _, value = pair.partition("=")
                env[name] = value
        elif word == "ENTRYPOINT":
            entrypoint = json.loads(rest)
        elif word == "COPY":
            *sources, target = rest.split()
            if len(sources) == 1:
                copies[target] = REPO / sources[0]
    return env, entrypoint, copies


def host_command(entrypoint: list[str], port: int, extra: list[str] | None = None) -> list[str]:
    """The ENTRYPOINT with this environment's `memproxy` and a free port for 8400."""
    assert entrypoint[0] == "memproxy"
    args = [*entrypoint[1:], *(extra or [])]
    args[args.index("--port") + 1] = str(port)
    return [*memproxy_command(), *args]


def start(cmd: list[str], env: dict[str, str], log: Path, cwd: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        proc.wait(timeout=30)


def test_the_readme_docker_run_command(tmp_path: Path) -> None:
    image_env, entrypoint, copies = dockerfile()
    assert entrypoint[:4] == ["memproxy", "serve", "--host", "0.0.0.0"]
    # /config/config.yaml is in the image; /data is the volume.
    config = copies[image_env["MEMPROXY_CONFIG"]]
    assert config == REPO / "config.yaml"
    data = tmp_path / "data"
    data.mkdir()
    database = image_env["MEMPROXY_DATABASE_URL"].replace("////data/", f"///{data}/")
    env = clean_env(
        **{**image_env, "MEMPROXY_CONFIG": str(config), "MEMPROXY_DATABASE_URL": database},
        MEMPROXY_API_KEYS=API_KEY,  # docker run -e MEMPROXY_API_KEYS=...
        MEMPROXY_ADMIN_KEY=ADMIN_KEY,
    )
    port = free_port()
    log = tmp_path / "container.log"

    # Without a key, serve refuses all interfaces (the README's command gives one).
    refused = subprocess.run(
        host_command(entrypoint, port),
        env={k: v for k, v in env.items() if k != "MEMPROXY_API_KEYS"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert refused.returncode == 2
    assert "server.api_keys" in refused.stderr

    proc = start(host_command(entrypoint, port), env, log, tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, log)
        anonymous = httpx.post(
            f"{url}/v1/chat/completions",
            json={"model": "demo", "messages": [{"role": "user", "content": "hi"}]},
            timeout=30,
        )
        assert anonymous.status_code == 401
        client = openai.OpenAI(base_url=f"{url}/v1", api_key=API_KEY)
        answer = client.chat.completions.create(
            model="demo", messages=[{"role": "user", "content": "Hello from a container."}]
        )
        assert (answer.choices[0].message.content or "").startswith("memproxy demo model")
        admin = httpx.get(
            f"{url}/memory/sessions",
            headers={"Authorization": f"Bearer {ADMIN_KEY}"},
            timeout=30,
        )
        assert admin.status_code == 200
        assert len(admin.json()["data"]) == 1
    finally:
        stop([proc])
    assert (data / "memproxy.db").is_file()
    assert "#key=" not in log.read_text()  # no generated admin key off loopback


def _compose_value(value: str, env: dict[str, str]) -> str:
    """`${NAME}`, `${NAME:-default}`, `${NAME:?message}` as Compose substitutes them."""

    def sub(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        if env.get(name):
            return env[name]
        if op == ":?":
            raise AssertionError(f"compose needs {name}: {arg}")
        return arg or ""

    return re.sub(r"\$\{(\w+)(?:(:-|:\?)([^}]*))?\}", sub, value)


@pytest.fixture
def pg_database() -> Iterator[str]:
    base = pg_base_url()
    url = asyncio.run(create_pg_database(base))
    try:
        yield url
    finally:
        asyncio.run(drop_pg_database(base, url))


def test_compose_memproxy_service_two_replicas_on_postgresql(
    tmp_path: Path, pg_database: str
) -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    service: dict[str, Any] = compose["services"]["memproxy"]
    image_env, entrypoint, _ = dockerfile()
    shell = {
        "POSTGRES_PASSWORD": "unused-here",
        "MEMPROXY_API_KEY": API_KEY,
        "MEMPROXY_ADMIN_KEY": ADMIN_KEY,
    }
    env = {k: _compose_value(str(v), shell) for k, v in service["environment"].items()}
    assert "@postgres:5432/memproxy" in env["MEMPROXY_DATABASE_URL"]
    env["MEMPROXY_DATABASE_URL"] = pg_database  # the compose network's postgres, here
    mounts = dict(v.split(":")[1::-1] for v in service["volumes"])  # container -> host
    config = (DEPLOY / mounts[image_env["MEMPROXY_CONFIG"]]).resolve()
    replicas = int(service["deploy"]["replicas"])
    assert replicas == 2
    ports = [free_port() for _ in range(replicas)]
    run_env = clean_env(**{**image_env, **env, "MEMPROXY_CONFIG": str(config)})
    procs = [
        start(
            host_command(entrypoint, port, list(service["command"])),
            run_env,
            tmp_path / f"replica-{i}.log",
            tmp_path,
        )
        for i, port in enumerate(ports)
    ]
    try:
        for i, (proc, port) in enumerate(zip(procs, ports, strict=True)):
            wait_healthy(proc, f"http://127.0.0.1:{port}", tmp_path / f"replica-{i}.log")
        clients = [
            openai.OpenAI(base_url=f"http://127.0.0.1:{p}/v1", api_key=API_KEY) for p in ports
        ]
        history: list[dict[str, Any]] = [{"role": "system", "content": "Help plan a move."}]
        sessions = set()
        for turn in range(4):
            history.append({"role": "user", "content": f"Box count update {turn}: {10 + turn}."})
            raw = clients[turn % replicas].chat.completions.with_raw_response.create(
                model="demo",
                messages=history,  # type: ignore[arg-type]
            )
            sessions.add(raw.headers["x-memory-session-id"])
            history.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
        assert len(sessions) == 1, "each turn went to the other replica: still one session"
        detail = httpx.get(
            f"http://127.0.0.1:{ports[0]}/memory/sessions/{sessions.pop()}",
            headers={"Authorization": f"Bearer {ADMIN_KEY}"},
            timeout=30,
        )
        assert detail.status_code == 200
        assert len(detail.json()["turns"]) == 8
    finally:
        stop(procs)
