"""Run `memproxy serve` as a subprocess for end-to-end tests."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def serve(
    config_path: Path, port: int, timeout_s: float = 120, args: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """Start the proxy and wait for `/health`; generous timeout for a loaded 2-core box.

    `args` go to `memproxy serve` after the usual ones (e.g. `--workers 2`).
    """
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    # A file, not a pipe: nobody drains a pipe while the server runs, and a full
    # pipe would block the server's logging.
    log = config_path.with_suffix(".log").open("ab")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "proxy.cli",
            "serve",
            "--config",
            str(config_path),
            "--port",
            str(port),
            "--log-level",
            "warning",
            *args,
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    log.close()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    err = config_path.with_suffix(".log").read_text(errors="replace")
    raise AssertionError(f"memproxy serve did not come up:\n{err}")
