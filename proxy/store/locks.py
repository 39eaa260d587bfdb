"""Named locks shared by every replica on one PostgreSQL database.

Each process keeps its own asyncio locks and FIFO queues (`proxy.sessions`);
these advisory locks extend them across processes. A lock is a PostgreSQL
session-level advisory lock taken with `pg_try_advisory_lock` on one of a few
long-lived autocommit connections of this process, chosen by the key: holding
a lock costs no connection of the query pool (a session is held for a whole
upstream call) and no open transaction.

The same connection may take a key it already holds: PostgreSQL counts, and
each `release` gives one back. That is what lets a process hand a session on
to its next queued request while the previous unlock is still in flight.
Another process waiting for the key polls with a short, growing delay.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Callable

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from proxy.store.faults import StoreUnavailable, pg_connect_args, store_fault

log = logging.getLogger("memproxy.locks")

_TRY = text("SELECT pg_try_advisory_lock(:k)")
_UNLOCK = text("SELECT pg_advisory_unlock(:k)")
_FIRST_DELAY_S, _MAX_DELAY_S = 0.002, 0.02


def lock_key(name: str) -> int:
    """A signed 64-bit key (PostgreSQL's bigint) for a lock name."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


class AdvisoryLocks:
    # Lock operations on one connection run one after another (a round trip
    # each, two per request and lock): a few connections let concurrent
    # requests take and give back their locks in parallel.
    def __init__(self, url: str, timeout_s: float = 5.0, connections: int = 4) -> None:
        self._engine: AsyncEngine = create_async_engine(
            url, poolclass=NullPool, connect_args=pg_connect_args(timeout_s)
        )
        self._conns: list[AsyncConnection | None] = [None] * connections
        self._guards = [asyncio.Lock() for _ in range(connections)]
        self._pending: set[asyncio.Task[bool]] = set()
        # Told when a lock connection fails: the store's pool may be hit too.
        self.on_fault: Callable[[], None] | None = None

    async def _run(self, slot: int, statement: object, key: int) -> bool:
        async with self._guards[slot]:
            kept = self._conns[slot] is not None
            try:
                return await self._once(slot, statement, key)
            except Exception:
                if not kept:
                    raise
                # The kept connection broke (its backend was terminated, the
                # server restarted): its locks are gone with it, so a fresh
                # connection is as good; one try, then the fault is the caller's.
                return await self._once(slot, statement, key)

    async def _once(self, slot: int, statement: object, key: int) -> bool:
        conn = self._conns[slot]
        try:
            if conn is None:
                conn = await self._engine.connect()
                conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
                self._conns[slot] = conn
            return bool(await conn.scalar(statement, {"k": key}))  # type: ignore[call-overload]
        except BaseException as exc:
            # A broken connection has lost its locks with it; start afresh.
            self._conns[slot] = None
            if self.on_fault is not None and isinstance(exc, Exception):
                self.on_fault()
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
            if isinstance(exc, OSError):  # the driver's raw socket error: the store's
                raise StoreUnavailable(store_fault(exc) or "unreachable") from exc
            raise

    def _slot(self, key: int) -> int:
        return key % len(self._conns)

    async def acquire(self, name: str) -> None:
        key = lock_key(name)
        slot, delay = self._slot(key), _FIRST_DELAY_S
        while True:
            attempt = asyncio.ensure_future(self._run(slot, _TRY, key))
            try:
                taken = await asyncio.shield(attempt)
            except asyncio.CancelledError:
                # The attempt runs on: if it took the lock, give it back.
                attempt.add_done_callback(lambda done: self._undo(done, name))
                raise
            if taken:
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY_S)

    def _undo(self, attempt: asyncio.Future[bool], name: str) -> None:
        if not attempt.cancelled() and attempt.exception() is None and attempt.result():
            self.release(name)

    def release(self, name: str) -> None:
        """Give the lock back (in the background: callers release synchronously)."""
        key = lock_key(name)
        task = asyncio.ensure_future(self._run(self._slot(key), _UNLOCK, key))
        self._pending.add(task)
        task.add_done_callback(self._released)

    def _released(self, task: asyncio.Task[bool]) -> None:
        self._pending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("advisory unlock failed: %s", task.exception())

    async def aclose(self) -> None:
        if self._pending:
            await asyncio.gather(*list(self._pending), return_exceptions=True)
        for i, conn in enumerate(self._conns):
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
                self._conns[i] = None
        await self._engine.dispose()
