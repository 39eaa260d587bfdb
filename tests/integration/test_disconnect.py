"""A streaming client that goes away mid-answer (the proxy served by uvicorn over TCP).

An in-process ASGI transport cannot disconnect, so the app runs in a real
uvicorn server on 127.0.0.1 and the client drops its socket after two chunks.
The provider's stream must be closed (the stub records how it ended), the
user's turn kept, no half answer stored as a complete assistant turn, and the
next request must work.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from proxy.config import settings_from_dict
from proxy.http.app import create_app
from proxy.store.repo import Store
from tests.conftest import make_config

LONG = " ".join(f"word{i}" for i in range(200))


class Served:
    """`create_app(settings)` behind uvicorn in a daemon thread."""

    def __init__(self, config: dict[str, Any]) -> None:
        app = create_app(settings_from_dict(config, env={}))
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="critical", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, args=([self._sock],), daemon=True)

    def __enter__(self) -> Served:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            assert time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()


@pytest.fixture
def served(stub_upstream: Any, tmp_path: Path) -> Iterator[tuple[Served, Path]]:
    db = tmp_path / "memproxy.db"
    with Served(make_config(stub_upstream.url, db)) as server:
        yield server, db


async def _poll(check: Any, timeout_s: float = 15) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


async def test_client_disconnect_mid_stream(
    served: tuple[Served, Path], stub_upstream: Any
) -> None:
    server, db = served
    stub_upstream.state.script["tell me everything"] = {"content": LONG}
    stub_upstream.state.chunk_delay_s = 0.3  # ~5 chunks: the client leaves after 2
    history = [{"role": "user", "content": "tell me everything"}]
    body = {"model": "stub", "messages": history, "stream": True}
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
        seen: list[str] = []
        async with client.stream("POST", "/v1/chat/completions", json=body) as resp:
            assert resp.status_code == 200
            session = resp.headers["X-Memory-Session"]
            request_id = resp.headers["X-Memory-Request-Id"]
            async for line in resp.aiter_lines():
                if line.startswith("data: "):
                    seen.append(line)
                if len(seen) == 2:
                    break  # leaving the block closes the connection mid-stream
        assert seen[-1] != "data: [DONE]"

        # The provider's stream was closed by the proxy, not read to its end.
        upstream = stub_upstream.received[-1]

        async def stream_ended() -> str | None:
            return upstream.stream_end

        assert await _poll(stream_ended) == "closed"

        store = await Store.open(f"sqlite+aiosqlite:///{db}")
        try:

            async def recorded() -> dict[str, Any] | None:
                return await store.get_request(request_id)

            row = await _poll(recorded)
            assert row["status"] == 499
            record = json.loads(row["record_json"])
            assert record["error"] == "client disconnected"
            assert record["response"]["message"] is None
            # The user's turn stays; no half answer became an assistant turn.
            turns = await store.load_messages(session)
            assert [(t.role, t.text) for t in turns] == [("user", "tell me everything")]

            # The next request works: the client asks again, and gets a whole answer.
            stub_upstream.state.chunk_delay_s = 0.0
            again = await client.post("/v1/chat/completions", json={**body, "stream": False})
            assert again.status_code == 200, again.text
            assert again.headers["X-Memory-Session"] == session
            assert again.json()["choices"][0]["message"]["content"] == LONG
            turns = await store.load_messages(session)
            assert [t.role for t in turns] == ["user", "assistant"]
            assert turns[1].text == LONG
        finally:
            await store.close()
