"""When the store last failed, and what that means for writers and connections.

A process sees the store fail (a locked or full database, a PostgreSQL
outage) one request at a time. `FaultWatch` keeps the time of the last fault
and of the last commit, so that writers queued for SQLite's write lock give
up on a failing store instead of each serving a busy timeout in turn, and
PostgreSQL connections opened before the last fault are checked on checkout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy.exc import DisconnectionError
from sqlalchemy.pool import ConnectionPoolEntry

from proxy.store.faults import StoreBusy, StoreUnavailable, store_fault


class FaultWatch:
    """The last store fault and commit seen by this process (`time.monotonic()`)."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.last_commit = self.last_fault = 0.0

    def note_fault(self) -> None:
        """A store fault was seen: pooled connections older than now are suspect."""
        self.last_fault = time.monotonic()

    def note_commit(self) -> None:
        self.last_commit = time.monotonic()

    @asynccontextmanager
    async def noting_faults(self) -> AsyncIterator[None]:
        try:
            yield
        except Exception as exc:
            reason = store_fault(exc)
            if reason is not None:
                self.note_fault()
                if isinstance(exc, OSError):
                    # The driver's raw socket error: named as the store's beyond here.
                    raise StoreUnavailable(reason) from exc
            raise

    def verify_on_checkout(self, dbapi_conn: Any, record: ConnectionPoolEntry, _: Any) -> None:
        """PostgreSQL: a connection older than the last store fault is checked once.

        It may be dead (its backend terminated, the server restarted) or
        opened while the database was read-only, a state it keeps: the pool
        replaces it (DisconnectionError) with a new one, so the first requests
        after an outage do not fail on its leftovers. Costs nothing otherwise.
        """
        if record.info.get("born", 0.0) > self.last_fault:
            return
        try:
            cursor = dbapi_conn.cursor()
            cursor.execute("SHOW default_transaction_read_only")
            read_only = cursor.fetchone()[0] == "on"
            cursor.close()
        except Exception:
            raise DisconnectionError("connection lost in a store outage") from None
        if read_only:
            raise DisconnectionError("connection opened while the database was read-only")
        record.info["born"] = time.monotonic()

    async def wait_for_write_lock(self, lock: asyncio.Lock) -> None:
        """Queue for the write lock, in order, but not behind a failing store.

        A long queue under load is fine: waiters keep their place. But when a
        write fails on a store fault while they wait (a lock held by another
        process, a full disk) and nothing commits after it, they give up
        (StoreBusy) instead of each serving a busy timeout in turn. A hard cap
        of 10 x `timeout_s` bounds every wait.
        """
        started = time.monotonic()
        acquire = asyncio.ensure_future(lock.acquire())
        try:
            while True:
                done, _ = await asyncio.wait({acquire}, timeout=self.timeout_s)
                if done:
                    return
                # A write failed on a store fault while we waited, and none has
                # committed since: the store is failing now, not just busy.
                failing = self.last_fault > max(started, self.last_commit)
                if failing or time.monotonic() - started >= 10 * self.timeout_s:
                    raise StoreBusy("timed out waiting for the store's write lock")
        except BaseException:
            if not acquire.cancel() and not acquire.cancelled() and acquire.exception() is None:
                lock.release()  # acquired just as we gave up: hand it on
            raise
