"""What the bench scripts share: a free port, the stub's `model_list` entry,
and `memproxy serve` started as a subprocess and waited for.

A helper module, not a benchmark: it measures nothing.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
# No network at start-up: litellm would otherwise fetch its model-cost map.
SERVE_ENV = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stub_model(stub_url: str) -> dict[str, Any]:
    """The `model_list` entry named `stub` that points at the local stub upstream."""
    return {
        "model_name": "stub",
        "litellm_params": {"model": "openai/stub-model", "api_base": stub_url, "api_key": "bench"},
        "model_info": {"max_input_tokens": 128_000},
    }


def wait_http(url: str, proc: subprocess.Popen[bytes], what: str, timeout_s: float = 180) -> None:
    """Wait until `url` answers 200; give up when `proc` exits or the time is up."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{what} exited with {proc.returncode}")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{what} did not answer {url}")


def spawn_memproxy(
    config_path: Path, port: int, log: Path | None = None, log_level: str = "warning"
) -> subprocess.Popen[bytes]:
    """`memproxy serve` on `port` (not waited for: see `wait_http`)."""
    out: IO[bytes] | None = log.open("ab") if log is not None else None
    cmd = [sys.executable, "-m", "proxy.cli", "serve", "--config", str(config_path)]
    cmd += ["--port", str(port), "--log-level", log_level]
    return subprocess.Popen(
        cmd,
        cwd=ROOT,
        env={**os.environ, **SERVE_ENV},
        stdout=out,
        stderr=subprocess.STDOUT if out is not None else None,
    )


def serve_memproxy(
    config: dict[str, Any], tmp: Path, log: Path | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """Write `config` under `tmp`, start `memproxy serve` on it; (process, base URL)."""
    path = tmp / "memproxy.yaml"
    path.write_text(yaml.safe_dump(config))
    port = free_port()
    proc = spawn_memproxy(path, port, log)
    base = f"http://127.0.0.1:{port}"
    wait_http(f"{base}/health", proc, "memproxy serve")
    return proc, base
