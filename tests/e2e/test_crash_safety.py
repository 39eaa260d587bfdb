"""kill -9 under load, restart: every acknowledged turn is stored, sessions continue."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
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
# Waits sized for a loaded 2-core machine: a slow answer is not what this tests
# (a client that times out simply resends its pending request later).
START_S, REQUEST_S = 300, 60
# The kill comes this long after the cycle's first acknowledged turn, so that
# every cycle kills a server that has acknowledged turns and has others in flight.
KILL_AFTER_S = 1.0


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


async def _load_then_kill(base: str, clients: list[Client], proc: subprocess.Popen[bytes]) -> int:
    """Clients chat until the server dies; returns the turns acknowledged in this cycle."""
    acknowledged = 0
    first = asyncio.Event()
    async with httpx.AsyncClient(base_url=base, timeout=REQUEST_S) as http:

        async def run(client: Client) -> None:
            nonlocal acknowledged
            while await client.round(http):
                acknowledged += 1
                first.set()

        async def kill() -> None:
            await asyncio.wait_for(first.wait(), timeout=START_S)
            await asyncio.sleep(KILL_AFTER_S)
            os.kill(proc.pid, signal.SIGKILL)

        await asyncio.gather(kill(), *(run(c) for c in clients))
    return acknowledged


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
        proc = serve(config_path, port, timeout_s=START_S)
        try:
            assert asyncio.run(_load_then_kill(base, clients, proc)) > 0
        finally:
            if proc.poll() is None:  # the load failed before the kill: no stray server
                proc.kill()
        proc.wait(timeout=30)
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
    proc = serve(config_path, port, timeout_s=START_S)
    try:

        async def finish() -> None:
            async with httpx.AsyncClient(base_url=base, timeout=REQUEST_S) as http:
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
