"""Store faults: a locked, missing, read-only or full database (real SQLite files).

`memory.on_store_error: open` answers with `X-Memory-Degraded: 1` (the client's
own messages unmanaged when the store fails before forwarding); `closed`
answers 503 in OpenAI's error shape. A continuation's new turns are written
beside the upstream call: when that write fails the answer is not stored after
them (open: delivered, marked degraded; closed: withheld). Either way no
request hangs, nothing is half-stored, and once the fault clears the session
goes on exactly where the store left it.

The faults are real SQLite conditions: another connection holding the write
lock past the busy timeout; the database directory gone; SQLite's own
read-only state (`PRAGMA query_only`, since these tests may run as root, for
whom a chmod changes nothing); a database at its size limit
(`PRAGMA max_page_count`), which fails exactly as a full disk does.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from tests.integration.store_fault_support import answer_of, assert_store_unavailable

# memory.store_timeout_s: a locked store costs a request about this long.
# (0.3 s timed out a first, unfaulted request in a loaded CI run.)
TIMEOUT_S = 1.0
BURST = 20


# Both rounds of a two-turn conversation, stored whole.
BOTH_ROUNDS = ["user:first", "assistant:echo:", "user:second", "assistant:echo:"]


class StoreFault:
    """Starts and clears one real fault on the proxy's SQLite file."""

    def __init__(self, kind: str, db: Path, proxy: Any) -> None:
        self.kind, self.db, self.proxy = kind, db, proxy
        self._holder: sqlite3.Connection | None = None
        self._pragma: Callable[..., None] | None = None

    @property
    def _engine(self) -> Any:
        return self.proxy.services.store.engine

    def hold_lock(self) -> None:
        """Another process's writer, mid-transaction (thread-safe: the stub may call it)."""
        holder = sqlite3.connect(self.db, timeout=10, check_same_thread=False)
        holder.execute("BEGIN IMMEDIATE")
        holder.execute("CREATE TABLE IF NOT EXISTS other_app (x)")
        self._holder = holder

    async def start(self) -> None:
        if self.kind == "locked":
            self.hold_lock()
        elif self.kind == "missing":
            await self._engine.dispose()
            self.db.parent.rename(self.db.parent.with_name("moved-away"))
        else:
            await self._with_pragma()

    async def _with_pragma(self) -> None:
        pages = sqlite3.connect(self.db).execute("PRAGMA page_count").fetchone()[0]
        statement = (
            "PRAGMA query_only=ON" if self.kind == "read-only" else f"PRAGMA max_page_count={pages}"
        )

        def apply(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute(statement)
            cur.close()

        self._pragma = apply
        event.listen(self._engine.sync_engine, "connect", apply)
        await self._engine.dispose()  # every connection from now on has it

    async def clear(self) -> None:
        if self._holder is not None:
            self._holder.rollback()
            self._holder.close()
            self._holder = None
        if self.kind == "missing" and not self.db.parent.exists():
            self.db.parent.with_name("moved-away").rename(self.db.parent)
        if self._pragma is not None:
            event.remove(self._engine.sync_engine, "connect", self._pragma)
            self._pragma = None
            await self._engine.dispose()


FAULTS = ["locked", "missing", "read-only", "full"]
REASONS = {  # SQLite's own words for each fault, as recorded
    "locked": "database is locked",
    "missing": "unable to open database file",
    "read-only": "attempt to write a readonly database",
    "full": "database or disk is full",
}


async def _start(proxy_factory: Any, tmp_path: Path, mode: str) -> tuple[Any, Path]:
    db = tmp_path / "data" / "memproxy.db"
    db.parent.mkdir()
    proxy = await proxy_factory(
        memory={
            "database_url": f"sqlite+aiosqlite:///{db}",
            "on_store_error": mode,
            "store_timeout_s": TIMEOUT_S,
        }
    )
    return proxy, db


def _user(text: str) -> dict[str, Any]:
    # Long enough that storing it needs new pages (the "full" fault).
    return {"role": "user", "content": f"{text} " + "padding " * 800}


async def _turns(proxy: Any, session: str) -> list[str]:
    stored = await proxy.services.store.load_messages(session)
    assert [m.ordinal for m in stored] == list(range(len(stored)))
    return [f"{m.role}:{m.text.split()[0]}" for m in stored]


@pytest.mark.parametrize("kind", FAULTS)
async def test_fail_open_answers_unstored_and_the_session_resumes(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path, kind: str
) -> None:
    """The continuation's turns fail to store while the provider answers."""
    proxy, db = await _start(proxy_factory, tmp_path, "open")
    history = [{"role": "system", "content": "Be brief."}, _user("first")]
    first = await proxy.chat(history)
    assert first.status_code == 200, first.text
    session = first.headers["X-Memory-Session"]
    await proxy.settle()
    history += [answer_of(first), _user("second")]

    fault = StoreFault(kind, db, proxy)
    await fault.start()
    started = time.monotonic()
    degraded = await proxy.chat(history)
    assert time.monotonic() - started < 5 * TIMEOUT_S + 3
    assert degraded.status_code == 200, degraded.text
    assert degraded.headers["X-Memory-Degraded"] == "1"
    assert stub_upstream.received[-1].body["messages"][-1] == history[-1]
    assert degraded.json()["choices"][0]["message"]["content"].startswith("echo: second")
    await fault.clear()
    await proxy.settle()
    # Nothing of the failed request is stored: not its turn, not the answer after it.
    assert await _turns(proxy, session) == ["user:first", "assistant:echo:"]

    # Recorded once the store took writes again (the log retries a failed batch).
    row = await proxy.services.store.get_request(degraded.headers["X-Memory-Request-Id"])
    assert row is not None
    record = json.loads(row["record_json"])
    assert REASONS[kind] in record["degraded"]
    assert row["mode"] == degraded.headers["X-Memory-Mode"]

    history += [answer_of(degraded), _user("third")]
    after = await proxy.chat(history)
    assert after.status_code == 200, after.text
    assert "X-Memory-Degraded" not in after.headers
    assert after.headers["X-Memory-Session"] == session
    await proxy.settle()
    assert await _turns(proxy, session) == [
        "user:first",
        "assistant:echo:",
        "user:second",
        "assistant:echo:",
        "user:third",
        "assistant:echo:",
    ]


@pytest.mark.parametrize("kind", FAULTS)
async def test_fail_closed_is_a_503_and_the_retry_succeeds(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path, kind: str
) -> None:
    proxy, db = await _start(proxy_factory, tmp_path, "closed")
    history = [_user("first")]
    first = await proxy.chat(history)
    assert first.status_code == 200, first.text
    session = first.headers["X-Memory-Session"]
    await proxy.settle()
    history += [answer_of(first), _user("second")]
    calls = len(stub_upstream.received)

    fault = StoreFault(kind, db, proxy)
    await fault.start()
    started = time.monotonic()
    refused = await proxy.chat(history)
    assert time.monotonic() - started < 5 * TIMEOUT_S + 3
    assert_store_unavailable(refused)
    assert REASONS[kind] in refused.json()["error"]["message"]
    # The turn was written beside the upstream call; its answer is withheld.
    assert len(stub_upstream.received) == calls + 1
    assert "could not be stored" in refused.json()["error"]["message"]
    await fault.clear()
    await proxy.settle()
    assert await _turns(proxy, session) == ["user:first", "assistant:echo:"]

    retry = await proxy.chat(history)
    assert retry.status_code == 200, retry.text
    assert retry.headers["X-Memory-Session"] == session
    await proxy.settle()
    assert await _turns(proxy, session) == BOTH_ROUNDS


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_store_failing_while_the_answer_is_written(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path, mode: str
) -> None:
    """The lock is taken while the provider answers: memory was read, the answer can't be stored."""
    proxy, db = await _start(proxy_factory, tmp_path, mode)
    fault = StoreFault("locked", db, proxy)
    history = [_user("first")]

    def lock_then_answer(body: dict[str, Any]) -> None:
        fault.hold_lock()  # runs in the stub's thread, after the proxy's prepare
        stub_upstream.state.responder = None

    stub_upstream.state.responder = lock_then_answer
    resp = await proxy.chat(history)
    await fault.clear()
    if mode == "open":
        assert resp.status_code == 200, resp.text
        assert resp.headers["X-Memory-Degraded"] == "1"
        answer = answer_of(resp)
    else:
        assert_store_unavailable(resp)
        assert "the answer could not be stored" in resp.json()["error"]["message"]
        answer = {"role": "assistant", "content": "echo: first (retried elsewhere)"}
    session = resp.headers["X-Memory-Session"]
    await proxy.settle()
    # The user's turn stays; no answer was stored as a complete assistant turn.
    assert await _turns(proxy, session) == ["user:first"]

    history += [answer, _user("second")]
    after = await proxy.chat(history)
    assert after.status_code == 200, after.text
    assert after.headers["X-Memory-Session"] == session
    assert "X-Memory-Degraded" not in after.headers
    await proxy.settle()
    assert await _turns(proxy, session) == BOTH_ROUNDS


async def test_streaming_fail_open_and_closed(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    proxy, db = await _start(proxy_factory, tmp_path, "open")
    fault = StoreFault("locked", db, proxy)
    await fault.start()
    body = {"model": "stub", "messages": [_user("streamed")], "stream": True}
    async with proxy.client.stream("POST", "/v1/chat/completions", json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["X-Memory-Degraded"] == "1"
        lines = [line async for line in resp.aiter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    proxy.services.settings.memory.on_store_error = "closed"
    async with proxy.client.stream("POST", "/v1/chat/completions", json=body) as resp:
        assert resp.status_code == 503
        await resp.aread()
        assert_store_unavailable(resp)
    await fault.clear()


async def test_a_locked_store_never_hangs_a_burst(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    """New conversations while another process holds the write lock.

    Unbounded, they would queue behind each other's busy timeouts (BURST x TIMEOUT_S);
    bounded, each gives up after about one or two timeouts and is served degraded.
    """
    proxy, db = await _start(proxy_factory, tmp_path, "open")
    warm = await proxy.chat([_user("warm-up")])  # litellm's import is not the store's wait
    assert warm.status_code == 200
    fault = StoreFault("locked", db, proxy)
    await fault.start()
    started = time.monotonic()
    chats = [[_user(f"conversation-{n}")] for n in range(BURST)]
    results = await asyncio.gather(*(proxy.chat(c) for c in chats))
    elapsed = time.monotonic() - started
    await fault.clear()
    assert [r.status_code for r in results] == [200] * BURST
    assert all(r.headers.get("X-Memory-Degraded") == "1" for r in results)
    assert elapsed < BURST * TIMEOUT_S, elapsed
    # And then every conversation is stored normally.
    again = await asyncio.gather(*(proxy.chat(c) for c in chats))
    assert all("X-Memory-Degraded" not in r.headers for r in again)
    assert len({r.headers["X-Memory-Session"] for r in again}) == BURST


async def test_health_reports_a_missing_store(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    proxy, db = await _start(proxy_factory, tmp_path, "open")
    fault = StoreFault("missing", db, proxy)
    await fault.start()
    health = await proxy.client.get("/health")
    assert health.status_code == 503
    body = health.json()
    assert (body["status"], body["store"], body["on_store_error"]) == (
        "degraded",
        "unavailable",
        "open",
    )
    assert body["reason"]  # the driver's own words, e.g. "disk I/O error"
    assert "forwarded unmanaged" in body["chat"]
    live = await proxy.client.get("/health/live")
    assert live.status_code == 200  # the process is fine: no reason to restart it
    await fault.clear()
    health = await proxy.client.get("/health")
    assert health.json() == {"status": "ok", "store": "ok"}


def test_on_store_error_is_validated(tmp_path: Path) -> None:
    from proxy.config import ConfigError, settings_from_dict

    with pytest.raises(ConfigError, match=r"memory\.on_store_error"):
        settings_from_dict({"memory": {"on_store_error": "maybe"}}, env={})
    with pytest.raises(ConfigError, match=r"memory\.store_timeout_s"):
        settings_from_dict({"memory": {"store_timeout_s": 0}}, env={})


def test_fault_reasons_never_quote_sql() -> None:
    from sqlalchemy import exc as sa

    from proxy.store.faults import StoreBusy, store_fault

    orig = sqlite3.OperationalError("database is locked")
    locked = sa.OperationalError("INSERT INTO messages VALUES (?)", ("secret text",), orig)
    assert store_fault(locked) == "database is locked"
    assert store_fault(StoreBusy("timed out")) == "timed out"
    integrity = sa.IntegrityError("INSERT", (), sqlite3.IntegrityError("UNIQUE constraint failed"))
    assert store_fault(integrity) is None  # a bug, not a fault: stays a 500
    assert store_fault(ValueError("x")) is None


def _stored_count(db: Path, session: str) -> int:
    """The session's turns as another connection sees the file (committed only)."""
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT count(*) FROM messages WHERE session_id = ?", (session,))
        return int(row.fetchone()[0])


async def test_the_new_turn_is_stored_before_the_first_streamed_byte(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path
) -> None:
    """The turn is written beside the upstream call, but lands before the answer starts."""
    proxy, db = await _start(proxy_factory, tmp_path, "closed")
    history = [_user("first")]
    first = await proxy.chat(history)
    session = first.headers["X-Memory-Session"]
    await proxy.settle()
    history += [answer_of(first), _user("second")]
    body = json.dumps({"model": "stub", "messages": history, "stream": True}).encode()
    seen: list[int] = []

    sent = asyncio.Event()
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": body, "more_body": False}
        await sent.wait()  # the client stays connected until the answer is complete
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        # The ASGI server would put these bytes on the wire now.
        if message["type"] == "http.response.body" and message.get("body") and not seen:
            seen.append(_stored_count(db, session))
        if message["type"] == "http.response.body" and not message.get("more_body"):
            sent.set()

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json")],
        "client": ("127.0.0.1", 1),
        "server": ("memproxy.test", 80),
    }
    await proxy.app(scope, receive, send)
    assert seen == [3]  # first, its answer, second: committed before the first chunk
    await proxy.settle()
    assert await _turns(proxy, session) == BOTH_ROUNDS


@pytest.mark.parametrize("mode", ["open", "closed"])
async def test_a_failed_turn_write_leaves_nothing_half_stored(
    proxy_factory: Any, stub_upstream: Any, tmp_path: Path, mode: str
) -> None:
    """Streamed: closed sends no byte of the answer; open relays it unstored. Either
    way neither the turn, nor memory from it, nor the answer is stored."""
    proxy, db = await _start(proxy_factory, tmp_path, mode)
    history = [_user("first")]
    first = await proxy.chat(history)
    session = first.headers["X-Memory-Session"]
    await proxy.settle()
    items_before = await proxy.services.store.load_items(session)
    # A turn that makes memory: the items would be written after the turn, so never.
    history += [answer_of(first), {"role": "user", "content": "From now on, my budget is $420."}]
    fault = StoreFault("locked", db, proxy)
    await fault.start()
    body = {"model": "stub", "messages": history, "stream": True}
    async with proxy.client.stream("POST", "/v1/chat/completions", json=body) as resp:
        chunks = [line async for line in resp.aiter_lines() if line.startswith("data: ")]
        if mode == "closed":
            assert resp.status_code == 503
            assert chunks == []
        else:
            assert resp.status_code == 200
            assert resp.headers["X-Memory-Degraded"] == "1"
            assert chunks[-1] == "data: [DONE]"
    await fault.clear()
    await proxy.settle()
    assert await _turns(proxy, session) == ["user:first", "assistant:echo:"]
    after = await proxy.services.store.load_items(session)
    assert [i.value for i in after] == [i.value for i in items_before]

    # Resent once the store is back: stored whole, memory included.
    again = await proxy.chat(history)
    assert again.status_code == 200, again.text
    assert again.headers["X-Memory-Session"] == session
    await proxy.settle()
    assert await _turns(proxy, session) == [
        "user:first",
        "assistant:echo:",
        "user:From",
        "assistant:echo:",
    ]
    assert any("420" in i.value for i in await proxy.services.store.load_items(session))
