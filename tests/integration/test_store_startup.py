"""A database that is missing or unreachable when the server starts.

The server starts anyway. Until the store answers, `/health` is 503 and says
why, and chat follows `memory.on_store_error`: `open` forwards the client's
messages unmanaged with `X-Memory-Degraded: 1`, `closed` answers 503 in
OpenAI's error shape. Once the store answers (its directory created, its
PostgreSQL server up, its database created) it is migrated and memory
resumes, without a restart. A URL that can never work is a config error.

The faults are real: a SQLite path whose directory does not exist yet; a
TCP port with nothing listening, where a forwarder to the real PostgreSQL
server is started later ("the server came up"); a PostgreSQL database that
is created after the proxy started.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from proxy.config import ConfigError, settings_from_dict
from tests.databases import create_pg_database, drop_pg_database, pg_base_url
from tests.integration.store_fault_support import answer_of, assert_store_unavailable

TIMEOUT_S = 0.5  # memory.store_timeout_s
# PostgreSQL refuses at once, but on a loaded machine the event loop can be
# starved past an attempt's bound (CI saw it once, with litellm importing in a
# thread); that attempt is then reported as a timeout, which is also true.
_STARVED = "the store did not answer in time"


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


async def _wait_healthy(proxy: Any, within_s: float = 10.0) -> None:
    """Poll /health as a load balancer would, until the store is back."""
    deadline = time.monotonic() + within_s
    while True:
        health = await proxy.client.get("/health")
        if health.status_code == 200:
            assert health.json() == {"status": "ok", "store": "ok"}
            return
        assert time.monotonic() < deadline, health.text
        await asyncio.sleep(0.2)


async def _assert_unavailable_health(proxy: Any, mode: str, reasons: tuple[str, ...]) -> None:
    health = await proxy.client.get("/health")
    assert health.status_code == 503, health.text
    body = health.json()
    assert body["status"] == "degraded"
    assert body["store"] == "unavailable"
    assert body["on_store_error"] == mode
    assert any(reason in body["reason"] for reason in reasons), body
    assert (await proxy.client.get("/health/live")).status_code == 200


async def _degraded_then_managed(
    proxy: Any, stub_upstream: Any, reasons: tuple[str, ...], cure: Any
) -> None:
    """Open mode: raw and marked while the store is away, memory once it is there."""
    history = [{"role": "system", "content": "Answer briefly."}, _user("plan the offsite")]
    await proxy.services.upstream.ready()  # litellm's import is not the store's wait
    started = time.monotonic()
    degraded = await proxy.chat(history)
    assert time.monotonic() - started < 4 * TIMEOUT_S + 3
    assert degraded.status_code == 200, degraded.text
    assert degraded.headers["X-Memory-Degraded"] == "1"
    assert degraded.headers["X-Memory-Mode"] == "raw"
    assert "X-Memory-Session" not in degraded.headers
    assert stub_upstream.received[-1].body["messages"] == history
    await _assert_unavailable_health(proxy, "open", reasons)

    await cure()
    await _wait_healthy(proxy)
    history += [answer_of(degraded), _user("we are twelve people, budget 3000 EUR")]
    managed = await proxy.chat(history)
    assert managed.status_code == 200, managed.text
    assert "X-Memory-Degraded" not in managed.headers
    assert managed.headers["X-Memory-Mode"] == "managed"
    session = managed.headers["X-Memory-Session"]
    await proxy.settle()
    # The turns of the degraded exchange were ingested with the continuation.
    stored = await proxy.services.store.load_messages(session)
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[0].text == "plan the offsite"
    assert stored[2].text == "we are twelve people, budget 3000 EUR"


async def _closed_then_served(
    proxy: Any, stub_upstream: Any, reasons: tuple[str, ...], cure: Any
) -> None:
    calls = len(stub_upstream.received)
    refused = await proxy.chat([_user("plan the offsite")])
    assert_store_unavailable(refused, reasons)
    assert len(stub_upstream.received) == calls  # nothing went upstream
    await _assert_unavailable_health(proxy, "closed", reasons)

    await cure()
    await _wait_healthy(proxy)
    served = await proxy.chat([_user("plan the offsite")])
    assert served.status_code == 200, served.text
    await proxy.settle()
    stored = await proxy.services.store.load_messages(served.headers["X-Memory-Session"])
    assert [m.role for m in stored] == ["user", "assistant"]


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_sqlite_directory_created_after_start(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path, mode: str
) -> None:
    db = tmp_path / "not-yet" / "memproxy.db"
    proxy = await proxy_factory(
        memory={
            "database_url": f"sqlite+aiosqlite:///{db}",
            "on_store_error": mode,
            "store_timeout_s": TIMEOUT_S,
        }
    )
    assert not db.exists()

    async def cure() -> None:
        db.parent.mkdir()

    check = _degraded_then_managed if mode == "open" else _closed_then_served
    await check(proxy, stub_upstream, ("unable to open database file",), cure)
    assert db.exists()


class PortForwarder:
    """A TCP port where "the database server" comes up later: a forwarder to the real one."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def reserve(self) -> int:
        """A free port with nothing listening on it (yet)."""
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        return self.port

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self.target)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        for task in (
            asyncio.create_task(pipe(reader, up_writer)),
            asyncio.create_task(pipe(up_reader, writer)),
        ):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


@pytest.fixture
async def blank_pg_url() -> AsyncIterator[str]:
    base = pg_base_url()
    url = await create_pg_database(base)
    try:
        yield url
    finally:
        await drop_pg_database(base, url)


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_postgresql_server_coming_up_after_start(
    proxy_factory: Any, stub_upstream: Any, blank_pg_url: str, mode: str
) -> None:
    real = make_url(blank_pg_url)
    forwarder = PortForwarder(real.host or "127.0.0.1", real.port or 5432)
    port = forwarder.reserve()  # nothing listens there: connection refused
    url = real.set(host="127.0.0.1", port=port).render_as_string(hide_password=False)
    proxy = await proxy_factory(
        memory={"database_url": url, "on_store_error": mode, "store_timeout_s": TIMEOUT_S}
    )
    check = _degraded_then_managed if mode == "open" else _closed_then_served
    try:
        reasons = ("could not reach the store", _STARVED)
        await check(proxy, stub_upstream, reasons, forwarder.start)
    finally:
        await proxy.services.store.close()  # its connections run through the forwarder
        await forwarder.stop()


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_postgresql_database_created_after_start(
    proxy_factory: Any, stub_upstream: Any, mode: str
) -> None:
    base = pg_base_url()
    name = f"memproxy_test_later_{mode}_{int(time.time() * 1000) % 10**9}"
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    proxy = await proxy_factory(
        memory={"database_url": url, "on_store_error": mode, "store_timeout_s": TIMEOUT_S}
    )

    async def cure() -> None:
        from sqlalchemy import text
        from sqlalchemy.ext.asyncio import create_async_engine

        admin = create_async_engine(base, isolation_level="AUTOCOMMIT")
        try:
            async with admin.connect() as conn:
                await conn.execute(text(f'CREATE DATABASE "{name}"'))
        finally:
            await admin.dispose()

    check = _degraded_then_managed if mode == "open" else _closed_then_served
    try:
        reasons = (f'database "{name}" does not exist', _STARVED)
        await check(proxy, stub_upstream, reasons, cure)
    finally:
        await proxy.services.store.close()
        await drop_pg_database(base, url)


def test_a_url_that_can_never_work_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"memory\.database_url: not a database URL") as err:
        settings_from_dict({"memory": {"database_url": "postgres-at-the-usual-place"}}, env={})
    assert "usual-place" not in str(err.value)
    with pytest.raises(ConfigError, match=r"unsupported driver 'mysql\+aiomysql'") as err:
        settings_from_dict({"memory": {"database_url": "mysql+aiomysql://u:hunter2@h/db"}}, env={})
    assert "hunter2" not in str(err.value)
    # A synchronous driver cannot serve an async engine: said at start-up too.
    with pytest.raises(ConfigError, match=r"unsupported driver 'sqlite'"):
        settings_from_dict({}, env={"MEMPROXY_DATABASE_URL": "sqlite:///x.db"})
