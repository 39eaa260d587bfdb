"""kill -9 under load, restart: every acknowledged turn is stored, sessions continue."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from tests.conftest import make_config
from tests.e2e.serving import free_port, serve

pytestmark = pytest.mark.e2e

CLIENTS = 8
CYCLES = int(os.environ.get("MEMPROXY_TEST_KILL_CYCLES", "2"))


class Client:
    """A chat client that keeps its history and only extends it on a 200."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.history: list[dict[str, Any]] = [{"role": "system", "content": f"client {n}"}]
        self.session: str | None = None
        self.pending: list[dict[str, Any]] | None = None
        self.rounds = 0

    async def round(self, http: httpx.AsyncClient) -> bool:
        messages = self.pending or [
            *self.history,
            {"role": "user", "content": f"client {self.n} round {self.rounds}: note {self.rounds}"},
        ]
        self.pending = messages
        try:
            resp = await http.post(
                "/v1/chat/completions", json={"model": "stub", "messages": messages}
            )
        except httpx.TransportError:
            return False
        assert resp.status_code == 200, resp.text
        if self.session is None:
            self.session = resp.headers["X-Memory-Session"]
        assert resp.headers["X-Memory-Session"] == self.session
        answer = resp.json()["choices"][0]["message"]["content"]
        self.history = [*messages, {"role": "assistant", "content": answer}]
        self.pending = None
        self.rounds += 1
        return True


async def _load(base: str, clients: list[Client], seconds: float) -> None:
    async with httpx.AsyncClient(base_url=base, timeout=10) as http:

        async def run(client: Client) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end and await client.round(http):
                pass

        await asyncio.gather(*(run(c) for c in clients))


def _stored(db: Path, session: str) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT role, text FROM messages WHERE session_id = ? ORDER BY ordinal", (session,)
        ).fetchall()
    return [(r, t) for r, t in rows]


def test_kill_and_restart_keeps_every_acknowledged_turn(stub: Any, tmp_path: Path) -> None:
    stub.reset()
    db = tmp_path / "crash.db"
    config_path = tmp_path / "config.yaml"
    config_path.write_text(yaml.safe_dump(make_config(stub.url, db)))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    clients = [Client(n) for n in range(CLIENTS)]
    for _ in range(CYCLES):
        proc = serve(config_path, port)

        async def load_then_kill(proc: subprocess.Popen[bytes] = proc) -> None:
            loop = asyncio.get_running_loop()
            loop.call_later(1.5, os.kill, proc.pid, signal.SIGKILL)
            await _load(base, clients, seconds=4)

        asyncio.run(load_then_kill())
        proc.wait(timeout=10)
        assert proc.returncode == -signal.SIGKILL
        for client in clients:
            if client.session is None:
                continue
            stored = _stored(db, client.session)
            acknowledged = [(m["role"], m["content"]) for m in client.history[1:]]
            assert stored[: len(acknowledged)] == acknowledged
            # At most the request in flight follows: its user turn, and its answer if the
            # kill came after the answer was stored but before the client read it.
            assert len(stored) - len(acknowledged) in (0, 1, 2)
    # After the last restart every session continues where it was.
    proc = serve(config_path, port)
    try:

        async def finish() -> None:
            async with httpx.AsyncClient(base_url=base, timeout=10) as http:
                for client in clients:
                    assert await client.round(http)  # resends a pending request if any
                    assert await client.round(http)

        asyncio.run(finish())
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert all(c.rounds >= 2 for c in clients)
    for client in clients:
        assert client.session is not None
        stored = _stored(db, client.session)
        assert stored == [(m["role"], m["content"]) for m in client.history[1:]]
