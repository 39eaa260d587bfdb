"""The store's engine: connections, write transactions, and store faults.

One async SQLAlchemy engine. SQLite has one writer, so writers queue on a
lock that gives up on a failing store instead of serving a busy timeout each;
PostgreSQL connections older than the last fault are checked on checkout.
An unreachable store is retried on use. The times of the last fault and
commit those two go by are kept by `proxy.store.fault_watch.FaultWatch`.
Every other concern of the store (`proxy.store.repo.Store`) reads through
`_connect` and writes through `_begin`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Self

from sqlalchemy import event, select
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from proxy.store.fault_watch import FaultWatch
from proxy.store.faults import StoreUnavailable, pg_connect_args, store_fault
from proxy.store.locks import AdvisoryLocks
from proxy.store.migrations import apply_migrations
from proxy.store.rows import without_nul

log = logging.getLogger("memproxy.store")

# An unreachable store is tried again on use, at most this often.
_RETRY_S = 1.0

# SQLite's page cache, per connection, in KiB (a negative cache_size is KiB). Set
# here rather than left to the build's default (2,000 KiB for most, larger for
# some), so the proxy's memory has a known bound: this times the pool's
# connections (5, plus 10 overflow), whatever the database's size.
SQLITE_CACHE_KIB = 2048


def _sqlite_pragmas(busy_ms: int) -> Any:
    def apply(dbapi_conn: Any, _record: ConnectionPoolEntry) -> None:
        # WAL lets readers proceed during a write; busy_timeout turns "database is
        # locked" into a short, bounded wait instead of an error under concurrency.
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        cur.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
        cur.close()

    return apply


def _note_birth(_dbapi_conn: Any, record: ConnectionPoolEntry) -> None:
    record.info["born"] = time.monotonic()


class StoreEngine:
    """The engine, its readiness and its faults; what every store concern builds on."""

    def __init__(
        self, engine: AsyncEngine, locks: AdvisoryLocks | None = None, timeout_s: float = 5.0
    ) -> None:
        self.engine = engine
        # SQLite has one writer at a time; concurrent write transactions from the
        # pool's connections would fail fast with "database is locked" when a
        # reader upgrades. Writers queue here instead (PostgreSQL needs no lock).
        self._write_lock = asyncio.Lock() if engine.dialect.name == "sqlite" else None
        # PostgreSQL may be shared by several replicas: `locks` extends the
        # per-process session locks to all of them, and each session's version
        # (bumped by every write) tells this process when its caches are stale.
        self.shared = engine.dialect.name == "postgresql"
        self.locks = locks
        self.timeout_s = timeout_s
        self.faults = FaultWatch(timeout_s)
        # Reachable and migrated. A store that is not (a directory not created
        # yet, PostgreSQL still starting) is retried on use, at most once per
        # `_RETRY_S`; until then every use fails fast with `StoreUnavailable`.
        self.ready = False
        self.unavailable_reason: str | None = None
        self._ready_lock = asyncio.Lock()
        self._next_attempt = 0.0

    async def ensure_ready(self) -> None:
        """Connect and migrate if not done yet; `StoreUnavailable` if that fails."""
        if self.ready:
            return
        async with self._ready_lock:
            if self.ready:
                return
            if time.monotonic() < self._next_attempt:
                raise StoreUnavailable(self.unavailable_reason or "not reachable yet")
            try:
                async with asyncio.timeout(2 * self.timeout_s):
                    async with self.engine.begin() as conn:
                        await apply_migrations(conn)
            except Exception as exc:
                reason = store_fault(exc)
                if reason is None:
                    raise
                self.unavailable_reason = reason
                self._next_attempt = time.monotonic() + _RETRY_S
                raise StoreUnavailable(reason) from None
            self.ready, self.unavailable_reason = True, None

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[AsyncConnection]:
        await self.ensure_ready()
        async with self.faults.noting_faults(), self.engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[AsyncConnection]:
        await self.ensure_ready()
        if self._write_lock is None:
            async with self.faults.noting_faults(), self.engine.begin() as conn:
                yield conn
            return
        await self.faults.wait_for_write_lock(self._write_lock)
        try:
            async with self.engine.begin() as conn:
                yield conn
            self.faults.note_commit()
        except Exception as exc:
            if store_fault(exc) is not None:
                self.faults.note_fault()
            raise
        finally:
            self._write_lock.release()

    def note_fault(self) -> None:
        """A store fault was seen: pooled connections older than now are suspect."""
        self.faults.note_fault()

    @classmethod
    async def open(cls, url: str, *, timeout_s: float = 5.0, require: bool = True) -> Self:
        """`timeout_s` bounds every store wait (`memory.store_timeout_s`).

        `require=False` (the server): an unreachable database does not stop
        start-up; the store stays unavailable, and is retried on use, until
        it answers. Tools that need the data (`memproxy inspect`) require it.
        """
        kwargs: dict[str, Any] = {}
        if url.startswith("sqlite"):
            kwargs["connect_args"] = {"timeout": timeout_s}
        else:
            # A request holds a connection only per query (the long-held session
            # locks have connections of their own, see `locks.py`). Recycling
            # stays ahead of proxies or firewalls that drop idle connections.
            kwargs.update(
                pool_size=10,
                max_overflow=10,
                pool_recycle=1800,
                pool_timeout=timeout_s,
                connect_args=pg_connect_args(timeout_s),
            )
        engine = create_async_engine(url, **kwargs)
        if engine.dialect.name == "sqlite":
            sync_engine: Engine = engine.sync_engine
            event.listen(sync_engine, "connect", _sqlite_pragmas(int(timeout_s * 1000)))
        locks = AdvisoryLocks(url, timeout_s) if engine.dialect.name == "postgresql" else None
        store = cls(engine, locks, timeout_s)
        if engine.dialect.name == "postgresql":
            event.listen(engine.sync_engine, "connect", _note_birth)
            event.listen(engine.sync_engine, "checkout", store.faults.verify_on_checkout)
            if locks is not None:
                locks.on_fault = store.note_fault
        try:
            await store.ensure_ready()
        except StoreUnavailable as exc:
            if require:
                await store.close()
                raise
            log.warning("memory store unavailable at start-up (%s); retried on use", exc)
        return store

    async def close(self) -> None:
        if self.locks is not None:
            await self.locks.aclose()
        await self.engine.dispose()

    def _rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return without_nul(rows) if self.shared else rows

    async def ping(self) -> None:
        async with self._connect() as conn:
            await conn.execute(select(1))
