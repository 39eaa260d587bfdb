"""Store faults on the real PostgreSQL server, in both `memory.on_store_error` modes.

The faults are real server states on a throwaway database: the server gone
for it (every connection terminated with `pg_terminate_backend`, new ones
refused with `ALLOW_CONNECTIONS false`), then back; a table locked by another
connection (`LOCK TABLE ... IN ACCESS EXCLUSIVE MODE`), which every query of
ours waits behind until `lock_timeout` (`memory.store_timeout_s`) ends it; the
database made read-only (`default_transaction_read_only`). No request hangs;
`open` forwards the client's messages marked degraded, `closed` answers 503;
afterwards the session goes on from exactly what the store acknowledged.
Skipped without MEMPROXY_TEST_PG_URL.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine

from tests.databases import pg_base_url, temp_pg_database
from tests.integration.store_fault_support import answer_of, assert_store_unavailable

TIMEOUT_S = 1.5  # memory.store_timeout_s (0.5 s timed out under load average ~5)
KINDS = ["gone", "locked", "read-only"]
# PostgreSQL's own words for each fault, as clients and records see them: which
# one depends on whether a request meets a terminated connection first.
TERMINATED = (
    "terminating connection",
    "connection is closed",
    "connection was closed",
    "connection was lost",
)
REASONS = {
    "gone": ("not currently accepting connections", *TERMINATED),
    "locked": ("lock timeout",),
    "read-only": ("read-only transaction", *TERMINATED),
}


class PgFault:
    """Starts and clears one real fault on a throwaway database."""

    def __init__(self, kind: str, base_url: str, url: str) -> None:
        self.kind, self.base_url, self.url = kind, base_url, url
        self.name = make_url(url).database
        self._holder: AsyncConnection | None = None

    async def _admin(self, *statements: str) -> None:
        """As the operator, from another database of the same server."""
        admin = create_async_engine(self.base_url, isolation_level="AUTOCOMMIT")
        try:
            async with admin.connect() as conn:
                for statement in statements:
                    await conn.execute(text(statement))
        finally:
            await admin.dispose()

    def _terminate(self) -> str:
        return (
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            f" WHERE datname = '{self.name}' AND pid <> pg_backend_pid()"
        )

    async def start(self) -> None:
        if self.kind == "gone":
            await self._admin(
                f'ALTER DATABASE "{self.name}" ALLOW_CONNECTIONS false', self._terminate()
            )
        elif self.kind == "locked":
            holder = await create_async_engine(self.url).connect()
            await holder.begin()
            await holder.execute(text("LOCK TABLE messages IN ACCESS EXCLUSIVE MODE"))
            self._holder = holder
        else:
            # Applies to new sessions: end the current ones, as an operator would.
            await self._admin(
                f'ALTER DATABASE "{self.name}" SET default_transaction_read_only = on',
                self._terminate(),
            )

    async def clear(self) -> None:
        if self.kind == "gone":
            await self._admin(f'ALTER DATABASE "{self.name}" ALLOW_CONNECTIONS true')
        elif self._holder is not None:
            await self._holder.rollback()
            await self._holder.close()
            await self._holder.engine.dispose()
            self._holder = None
        elif self.kind == "read-only":
            await self._admin(f'ALTER DATABASE "{self.name}" RESET default_transaction_read_only')


@pytest.fixture
async def pg() -> AsyncIterator[tuple[str, str]]:
    base = pg_base_url()
    async with temp_pg_database(base) as url:
        yield base, url


async def _start(proxy_factory: Any, url: str, mode: str) -> Any:
    proxy = await proxy_factory(
        memory={"database_url": url, "on_store_error": mode, "store_timeout_s": TIMEOUT_S}
    )
    await proxy.services.upstream.ready()  # litellm's import is not the store's wait
    return proxy


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


async def _turns(proxy: Any, session: str) -> list[str]:
    stored = await proxy.services.store.load_messages(session)
    assert [m.ordinal for m in stored] == list(range(len(stored)))
    return [f"{m.role}:{m.text}" for m in stored]


@pytest.mark.parametrize("mode", ["open", "closed"])
@pytest.mark.parametrize("kind", KINDS)
async def test_postgresql_fault_then_the_session_resumes(
    proxy_factory: Any, stub_upstream: Any, pg: tuple[str, str], kind: str, mode: str
) -> None:
    base, url = pg
    proxy = await _start(proxy_factory, url, mode)
    history = [{"role": "system", "content": "Be brief."}, _user("book the venue for May 3")]
    first = await proxy.chat(history)
    assert first.status_code == 200, first.text
    session = first.headers["X-Memory-Session"]
    await proxy.settle()
    history += [answer_of(first), _user("change it to May 10")]
    calls = len(stub_upstream.received)

    fault = PgFault(kind, base, url)
    await fault.start()
    try:
        started = time.monotonic()
        during = await proxy.chat(history)
        elapsed = time.monotonic() - started
    finally:
        await fault.clear()
    assert elapsed < 4 * TIMEOUT_S + 3, elapsed  # bounded, never hung
    if mode == "open":
        assert during.status_code == 200, during.text
        assert during.headers["X-Memory-Degraded"] == "1"
        assert during.headers["X-Memory-Mode"] == "raw"
        assert stub_upstream.received[-1].body["messages"] == history
        history += [answer_of(during), _user("and add a projector")]
        acknowledged = ["user:book the venue for May 3", "assistant:", "user:change it to May 10"]
    else:
        assert_store_unavailable(during, REASONS[kind])
        assert len(stub_upstream.received) == calls  # nothing went upstream
        acknowledged = ["user:book the venue for May 3", "assistant:"]

    after = await proxy.chat(history)
    assert after.status_code == 200, after.text
    assert "X-Memory-Degraded" not in after.headers
    assert after.headers["X-Memory-Session"] == session
    await proxy.settle()
    stored = await _turns(proxy, session)
    # What was acknowledged before the fault is there, then the turns since, once each.
    assert [t if t.startswith("user:") else "assistant:" for t in stored[: len(acknowledged)]] == (
        acknowledged
    )
    expected_len = len(history) - 1 + 1  # the client's turns (no system) + the new answer
    assert len(stored) == expected_len, stored
    assert stored[-2] == f"user:{history[-1]['content']}"

    if mode == "open":
        # The degraded exchange was recorded once the store took writes again.
        row = await proxy.services.store.get_request(during.headers["X-Memory-Request-Id"])
        if row is not None:  # the log gives up after a few tries: "when possible"
            degraded = json.loads(row["record_json"])["degraded"]
            assert any(reason in degraded for reason in REASONS[kind]), degraded


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_postgresql_gone_while_the_answer_is_written(
    proxy_factory: Any, stub_upstream: Any, pg: tuple[str, str], mode: str
) -> None:
    """Memory was read; the server goes away while the provider answers."""
    base, url = pg
    proxy = await _start(proxy_factory, url, mode)
    fault = PgFault("gone", base, url)
    loop = asyncio.get_running_loop()

    async def stored_then_gone() -> None:
        # The new turn is written beside the upstream call: let it land first, so
        # the fault hits the answer's write, the case this test is about.
        for _ in range(3000):
            if len(await proxy.services.store.load_messages(session)) >= 3:
                break
            await asyncio.sleep(0.01)
        await fault.start()

    def gone_then_answer(_body: dict[str, Any]) -> None:
        # The stub's thread: run the operator's statements on the test's loop.
        asyncio.run_coroutine_threadsafe(stored_then_gone(), loop).result(timeout=30)
        stub_upstream.state.responder = None

    history = [_user("the invoice number is INV-2291")]
    first = await proxy.chat(history)
    assert first.status_code == 200
    session = first.headers["X-Memory-Session"]
    await proxy.settle()
    history += [answer_of(first), _user("send it to accounts")]
    stub_upstream.state.responder = gone_then_answer
    try:
        resp = await proxy.chat(history)
    finally:
        await fault.clear()
    if mode == "open":
        assert resp.status_code == 200, resp.text
        assert resp.headers["X-Memory-Degraded"] == "1"
        answer = answer_of(resp)
    else:
        assert_store_unavailable(resp, REASONS["gone"])
        assert "the answer could not be stored" in resp.json()["error"]["message"]
        answer = {"role": "assistant", "content": "echo: send it to accounts"}
    await proxy.settle()
    # The user's turn was stored before the fault; no half exchange became an answer.
    assert await _turns(proxy, session) == [
        "user:the invoice number is INV-2291",
        f"assistant:{first.json()['choices'][0]['message']['content']}",
        "user:send it to accounts",
    ]
    history += [answer, _user("thanks")]
    after = await proxy.chat(history)
    assert after.status_code == 200, after.text
    assert "X-Memory-Degraded" not in after.headers
    assert after.headers["X-Memory-Session"] == session
    await proxy.settle()
    assert [t.split(":")[0] for t in await _turns(proxy, session)] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]
