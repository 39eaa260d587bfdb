"""The first ten minutes (issue #22), as a new user runs them: the README's commands.

`memproxy serve --config config.yaml` on the shipped config, with no provider
key in the environment, answers the openai SDK through the built-in demo model,
prints the inspector's URL with a working admin key, warns about the models
whose keys are missing, and answers those with a 502 the SDK does not retry.
The CLI finds the config the same way and never creates an empty database.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from tests.e2e.serving import free_port

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")


def memproxy_command() -> list[str]:
    """`memproxy`, the console script of this environment (as the README runs it)."""
    script = Path(sys.executable).with_name("memproxy")
    return [str(script)] if script.exists() else [sys.executable, "-m", "proxy.cli"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_KEYS}
    for name in ("MEMPROXY_CONFIG", "MEMPROXY_DATABASE_URL", "MEMPROXY_API_KEYS"):
        env.pop(name, None)
    env.pop("MEMPROXY_ADMIN_KEY", None)
    return {**env, "LITELLM_LOCAL_MODEL_COST_MAP": "True", **extra}


def wait_healthy(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"memproxy serve did not come up:\n{log.read_text(errors='replace')}")


@pytest.fixture(scope="module")
def readme_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A fresh folder holding the shipped config.yaml; `memproxy serve` run in it."""
    folder = tmp_path_factory.mktemp("first-run")
    shutil.copy(REPO / "config.yaml", folder / "config.yaml")
    port = free_port()
    log = folder / "serve.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(
            [*memproxy_command(), "serve", "--config", "config.yaml", "--port", str(port)],
            cwd=folder,
            env=clean_env(),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(proc, url, log)
        yield {"url": url, "log": log, "folder": folder}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_readme_command_answers_the_sdk_without_a_provider_key(
    readme_server: dict[str, Any],
) -> None:
    client = openai.OpenAI(base_url=f"{readme_server['url']}/v1", api_key="anything")
    raw = client.chat.completions.with_raw_response.create(
        model="demo",
        messages=[
            {"role": "system", "content": "You are a concise travel helper."},
            {"role": "user", "content": "Plan a weekend in a lakeside town, under 300 euros."},
        ],
    )
    completion = raw.parse()
    text = completion.choices[0].message.content or ""
    assert text.startswith("memproxy demo model: no provider was called")
    assert f"is {raw.headers['x-memory-raw-tokens']} tokens" in text
    assert f"forwarded {raw.headers['x-memory-context-tokens']} tokens" in text
    assert "under 300 euros" in text
    assert completion.usage is not None
    assert completion.usage.prompt_tokens == int(raw.headers["x-memory-context-tokens"])

    # Streamed, the same words; deterministic for the same request.
    again = client.chat.completions.create(
        model="demo",
        messages=[
            {"role": "system", "content": "You are a concise travel helper."},
            {"role": "user", "content": "Plan a weekend in a lakeside town, under 300 euros."},
        ],
        stream=True,
    )
    streamed = "".join(c.choices[0].delta.content or "" for c in again if c.choices)
    assert streamed == text


def test_serve_prints_the_inspector_url_with_a_working_admin_key(
    readme_server: dict[str, Any],
) -> None:
    log = readme_server["log"].read_text(errors="replace")
    found = re.search(r"inspector (http://127\.0\.0\.1:\d+/ui)#key=(\S+)", log)
    assert found, log
    page, key = found.groups()
    assert httpx.get(page, timeout=10).status_code == 200
    sessions = httpx.get(
        f"{readme_server['url']}/memory/sessions",
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )
    assert sessions.status_code == 200
    assert "OpenAI base_url" in log


def test_a_model_missing_its_key_is_warned_about_and_answers_a_502_not_retried(
    readme_server: dict[str, Any],
) -> None:
    log = readme_server["log"].read_text(errors="replace")
    assert re.search(r"warning: .*\(gpt-4o-mini\).*OPENAI_API_KEY", log), log
    assert re.search(r"warning: .*\(claude-sonnet\).*ANTHROPIC_API_KEY", log), log
    sent: list[str] = []
    http = httpx.Client(event_hooks={"request": [lambda r: sent.append(str(r.url))]})
    # The SDK's default: two retries on a 5xx, unless the server says not to.
    client = openai.OpenAI(
        base_url=f"{readme_server['url']}/v1", api_key="anything", http_client=http
    )
    with pytest.raises(openai.InternalServerError) as caught:
        client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "hello"}]
        )
    assert caught.value.status_code == 502
    assert "OPENAI_API_KEY" in str(caught.value)
    assert len(sent) == 1


def test_the_cli_finds_config_yaml_like_serve_and_never_creates_a_database(
    readme_server: dict[str, Any], tmp_path: Path
) -> None:
    folder = readme_server["folder"]
    # Where serve ran: ./config.yaml and its ./memproxy.db are found without --config.
    logs = subprocess.run(
        [*memproxy_command(), "logs", "-n", "1"],
        cwd=folder,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert logs.returncode == 0, logs.stderr
    assert "model: `" in logs.stdout
    # Anywhere else: a clear error naming the file, and no empty database left behind.
    for command in (["logs"], ["inspect", "01NOSUCHREQUEST0000000000"], ["ab-report"]):
        result = subprocess.run(
            [*memproxy_command(), *command],
            cwd=tmp_path,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert f"no database at {tmp_path / 'memproxy.db'}" in result.stderr
        assert "--config" in result.stderr
        assert not (tmp_path / "memproxy.db").exists()


def _readme_block(language: str, after: str) -> str:
    """The first fenced `language` block after the line containing `after`."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(after)
    found = re.search(rf"```{language}\n(.*?)```", text[start:], flags=re.S)
    assert found, f"no ```{language} block after {after!r} in README.md"
    return found.group(1)


def test_the_readme_example_prints_what_the_readme_shows(
    readme_server: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert "pip install -e . && memproxy serve --config config.yaml" in _readme_block(
        "bash", "## Run it"
    )
    code = _readme_block("python", "Point any OpenAI client at it")
    port = readme_server["url"].rsplit(":", 1)[1]
    exec(compile(code.replace(":8400/", f":{port}/"), "README.md", "exec"), {})
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("```\nmemproxy demo model:") + len("```\n")
    shown = text[start : text.index("```", start)]
    assert capsys.readouterr().out == shown
