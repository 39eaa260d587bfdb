"""The store: one async SQLAlchemy engine and the few queries the pipeline needs.

Every method is one short transaction. The pipeline batches its writes so a
request costs a handful of round trips whatever the history length.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import JSON, cast, delete, event, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import DisconnectionError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import ConnectionPoolEntry

from policies.types import ItemVersion, MemoryItem, MemoryLayout, SummaryChunk, SummaryLine
from proxy.store import schema as t
from proxy.store.faults import StoreBusy, StoreUnavailable, pg_connect_args, store_fault
from proxy.store.locks import AdvisoryLocks
from proxy.store.long_term import LongTermRows, forget_session_rows
from proxy.store.migrations import apply_migrations

log = logging.getLogger("memproxy.store")

# An unreachable store is tried again on use, at most this often.
_RETRY_S = 1.0

# Sessions whose version this process remembers; one forgotten is simply
# treated as changed elsewhere (its caches are dropped: safe, one reload).
_SEEN_SESSIONS = 20_000


@dataclass(frozen=True, slots=True)
class StoredMessage:
    ordinal: int
    role: str
    message: dict[str, Any]
    text: str
    tool_call_id: str | None
    tool_call_ids: tuple[str, ...]
    content_hash: str
    chain_hash: str
    tokens: int
    created_at: float


@dataclass(slots=True)
class SessionRow:
    id: str
    tenant_id: str
    external_id: str | None
    parent_id: str | None
    fork_ordinal: int | None
    system: list[dict[str, Any]] | None
    message_count: int
    arm: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class ChainMatch:
    session_id: str
    length: int  # number of leading turns shared with the incoming history


def _sqlite_pragmas(busy_ms: int) -> Any:
    def apply(dbapi_conn: Any, _record: ConnectionPoolEntry) -> None:
        # WAL lets readers proceed during a write; busy_timeout turns "database is
        # locked" into a short, bounded wait instead of an error under concurrency.
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute(f"PRAGMA busy_timeout={busy_ms}")
        cur.close()

    return apply


def _note_birth(_dbapi_conn: Any, record: ConnectionPoolEntry) -> None:
    record.info["born"] = time.monotonic()


def _without_nul(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """PostgreSQL text cannot hold NUL characters (SQLite can); drop them."""
    return [
        {
            k: v.replace("\x00", "") if isinstance(v, str) and "\x00" in v else v
            for k, v in r.items()
        }
        for r in rows
    ]


def _session_from_row(row: Any) -> SessionRow:
    return SessionRow(
        id=row.id,
        tenant_id=row.tenant_id,
        external_id=row.external_id,
        parent_id=row.parent_id,
        fork_ordinal=row.fork_ordinal,
        system=json.loads(row.system_json) if row.system_json else None,
        message_count=row.message_count,
        arm=row.arm,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _message_from_row(row: Any) -> StoredMessage:
    return StoredMessage(
        ordinal=row.ordinal,
        role=row.role,
        message=json.loads(row.message_json),
        text=row.text,
        tool_call_id=row.tool_call_id,
        tool_call_ids=tuple(json.loads(row.tool_call_ids)) if row.tool_call_ids else (),
        content_hash=row.content_hash,
        chain_hash=row.chain_hash,
        tokens=row.tokens,
        created_at=row.created_at,
    )


def item_to_row(session_id: str, item: MemoryItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "session_id": session_id,
        "type": item.type,
        "slot": item.slot,
        "value": item.value,
        "source": item.source,
        "source_ordinal": item.source_ordinal,
        "importance": item.importance,
        "status": item.status,
        "superseded_by": item.superseded_by,
        "replaces": item.replaces,
        "pinned": int(item.pinned),
        "exposure": item.exposure,
        "last_used_ordinal": item.last_used_ordinal,
        "versions_json": json.dumps(
            [[v.ordinal, v.status, v.value, v.note] for v in item.versions], ensure_ascii=False
        ),
        "updated_at": time.time(),
    }


def item_from_row(row: Any) -> MemoryItem:
    return MemoryItem(
        id=row.id,
        type=row.type,
        slot=row.slot,
        value=row.value,
        source=row.source,
        source_ordinal=row.source_ordinal,
        importance=row.importance,
        status=row.status,
        superseded_by=row.superseded_by,
        replaces=row.replaces,
        pinned=bool(row.pinned),
        exposure=row.exposure,
        last_used_ordinal=row.last_used_ordinal,
        versions=[ItemVersion(o, s, v, n) for o, s, v, n in json.loads(row.versions_json)],
    )


def layout_to_json(layout: MemoryLayout) -> str:
    return json.dumps(
        {
            "stable_ids": list(layout.stable_ids),
            "anchor_count": layout.anchor_count,
            "known_ids": sorted(layout.known_ids),
            "tiers": dict(layout.tiers),
            "entity_line": layout.entity_line,
            "ordinal": layout.ordinal,
            "short_ids": sorted(layout.short_ids),
        },
        ensure_ascii=False,
    )


def layout_from_json(text: str) -> MemoryLayout:
    data = json.loads(text)
    return MemoryLayout(
        stable_ids=tuple(data["stable_ids"]),
        anchor_count=int(data["anchor_count"]),
        known_ids=frozenset(data["known_ids"]),
        tiers=dict(data["tiers"]),
        entity_line=str(data["entity_line"]),
        ordinal=int(data["ordinal"]),
        short_ids=frozenset(data.get("short_ids", ())),
    )


def chunk_to_row(
    session_id: str, chunk: SummaryChunk, text: str, tokens: int, now: float
) -> dict[str, Any]:
    lines = [
        [ln.ordinal, ln.role, ln.date, ln.score, int(ln.protected), list(ln.sentences)]
        for ln in chunk.lines
    ]
    return {
        "session_id": session_id,
        "upto_ordinal": chunk.upto,
        "text": text,
        "tokens": tokens,
        "created_at": now,
        "start_ordinal": chunk.start,
        "lines_json": json.dumps(lines, ensure_ascii=False),
        "method": chunk.method,
    }


def chunk_from_row(row: Any) -> SummaryChunk:
    lines = tuple(
        SummaryLine(
            ordinal=int(o),
            role=str(role),
            date=str(date),
            sentences=tuple(sentences),
            score=float(score),
            protected=bool(prot),
        )
        for o, role, date, score, prot, sentences in json.loads(row.lines_json)
    )
    return SummaryChunk(row.start_ordinal, row.upto_ordinal, lines, row.method)


class Store(LongTermRows):
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
        self._seen: OrderedDict[str, int] = OrderedDict()
        self._stale_listeners: list[Callable[[str], None]] = []
        self.timeout_s = timeout_s
        self._last_commit = self._last_fault = 0.0  # time.monotonic() of each
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
        async with self._noting_faults(), self.engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def _begin(self) -> AsyncIterator[AsyncConnection]:
        await self.ensure_ready()
        if self._write_lock is None:
            async with self._noting_faults(), self.engine.begin() as conn:
                yield conn
            return
        await self._wait_for_write_lock(self._write_lock)
        try:
            async with self.engine.begin() as conn:
                yield conn
            self._last_commit = time.monotonic()
        except Exception as exc:
            if store_fault(exc) is not None:
                self._last_fault = time.monotonic()
            raise
        finally:
            self._write_lock.release()

    @asynccontextmanager
    async def _noting_faults(self) -> AsyncIterator[None]:
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

    def note_fault(self) -> None:
        """A store fault was seen: pooled connections older than now are suspect."""
        self._last_fault = time.monotonic()

    def _verify_on_checkout(self, dbapi_conn: Any, record: ConnectionPoolEntry, _: Any) -> None:
        """PostgreSQL: a connection older than the last store fault is checked once.

        It may be dead (its backend terminated, the server restarted) or
        opened while the database was read-only, a state it keeps: the pool
        replaces it (DisconnectionError) with a new one, so the first requests
        after an outage do not fail on its leftovers. Costs nothing otherwise.
        """
        if record.info.get("born", 0.0) > self._last_fault:
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

    async def _wait_for_write_lock(self, lock: asyncio.Lock) -> None:
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
                failing = self._last_fault > max(started, self._last_commit)
                if failing or time.monotonic() - started >= 10 * self.timeout_s:
                    raise StoreBusy("timed out waiting for the store's write lock")
        except BaseException:
            if not acquire.cancel() and not acquire.cancelled() and acquire.exception() is None:
                lock.release()  # acquired just as we gave up: hand it on
            raise

    @classmethod
    async def open(cls, url: str, *, timeout_s: float = 5.0, require: bool = True) -> Store:
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
            event.listen(engine.sync_engine, "checkout", store._verify_on_checkout)
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

    # --- several replicas: which cached sessions another process changed ------------

    def on_stale(self, listener: Callable[[str], None]) -> None:
        """Call `listener(session_id)` when another process wrote to that session."""
        self._stale_listeners.append(listener)

    def _saw(self, session_id: str, version: int | None, *, expected: int | None) -> None:
        """Record `version` as seen; tell the listeners if it is not `expected`."""
        if version is None:
            self._seen.pop(session_id, None)
        else:
            self._seen[session_id] = version
            self._seen.move_to_end(session_id)
            while len(self._seen) > _SEEN_SESSIONS:
                self._seen.popitem(last=False)
        if expected is None or version != expected:
            for listener in self._stale_listeners:
                listener(session_id)

    async def sync(self, session_id: str) -> None:
        """Drop this process's copies of the session if another process wrote to it.

        Called with the session's (or its conversation's) lock held, before any
        cached turn, item or summary of it is used. A no-op on SQLite (one process).
        """
        if not self.shared:
            return
        async with self._connect() as conn:
            version = await conn.scalar(
                select(t.sessions.c.version).where(t.sessions.c.id == session_id)
            )
        seen = self._seen.get(session_id)
        if version is None or version != seen:
            self._saw(session_id, version, expected=None)

    async def _bump(self, conn: AsyncConnection, session_id: str, **values: Any) -> None:
        """Count a write to the session, first in its transaction.

        The row lock this takes orders the session's writers on PostgreSQL
        (SQLite already has one writer). A version that moved by more than our
        own write means another process wrote since we last looked.
        """
        bump = (
            update(t.sessions)
            .where(t.sessions.c.id == session_id)
            .values(version=t.sessions.c.version + 1, **values)
        )
        if not self.shared:
            # One process: nobody else to notice (and no RETURNING before SQLite 3.35).
            await conn.execute(bump)
            return
        version = await conn.scalar(bump.returning(t.sessions.c.version))
        if version is not None:
            seen = self._seen.get(session_id)
            self._saw(session_id, version, expected=None if seen is None else seen + 1)

    def _rows(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return _without_nul(rows) if self.shared else rows

    async def ping(self) -> None:
        async with self._connect() as conn:
            await conn.execute(select(1))

    # --- sessions -----------------------------------------------------------------

    async def ensure_tenant(self, tenant_id: str) -> None:
        if self.shared:
            # Replicas may see a new tenant at once: the second insert is a no-op.
            async with self._begin() as conn:
                await conn.execute(
                    pg_insert(t.tenants)
                    .values(id=tenant_id, created_at=time.time())
                    .on_conflict_do_nothing()
                )
            return
        async with self._begin() as conn:
            found = await conn.scalar(select(t.tenants.c.id).where(t.tenants.c.id == tenant_id))
            if found is None:
                await conn.execute(insert(t.tenants).values(id=tenant_id, created_at=time.time()))

    async def get_session(self, session_id: str) -> SessionRow | None:
        async with self._connect() as conn:
            row = (
                await conn.execute(select(t.sessions).where(t.sessions.c.id == session_id))
            ).first()
        return _session_from_row(row) if row else None

    async def find_external_session(self, tenant_id: str, external_id: str) -> SessionRow | None:
        async with self._connect() as conn:
            row = (
                await conn.execute(
                    select(t.sessions).where(
                        t.sessions.c.tenant_id == tenant_id,
                        t.sessions.c.external_id == external_id,
                    )
                )
            ).first()
        return _session_from_row(row) if row else None

    async def sessions_named(self, external_id: str) -> list[SessionRow]:
        """Sessions a client named `external_id` (`X-Memory-Session`), in any tenant."""
        query = select(t.sessions).where(t.sessions.c.external_id == external_id)
        async with self._connect() as conn:
            rows = (await conn.execute(query.order_by(t.sessions.c.updated_at.desc()))).all()
        return [_session_from_row(r) for r in rows]

    async def session_openings(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Each session's first user turn (its text): how a person tells sessions apart."""
        if not session_ids:
            return {}
        m = t.messages
        query = (
            select(m.c.session_id, m.c.ordinal, m.c.text)
            .where(m.c.session_id.in_(list(session_ids)), m.c.role == "user", m.c.ordinal < 8)
            .order_by(m.c.session_id, m.c.ordinal)
        )
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        out: dict[str, str] = {}
        for row in rows:
            out.setdefault(row.session_id, row.text)
        return out

    async def list_sessions(self, tenant_id: str | None, limit: int = 100) -> list[SessionRow]:
        query = select(t.sessions).order_by(t.sessions.c.updated_at.desc()).limit(limit)
        if tenant_id is not None:
            query = query.where(t.sessions.c.tenant_id == tenant_id)
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_session_from_row(r) for r in rows]

    async def match_chain(
        self, tenant_id: str, chain: Sequence[str], session_id: str | None = None
    ) -> ChainMatch | None:
        """The stored session sharing the longest prefix with `chain` (same tenant)."""
        if not chain:
            return None
        query = (
            select(t.messages.c.session_id, t.messages.c.ordinal, t.sessions.c.updated_at)
            .join(t.sessions, t.sessions.c.id == t.messages.c.session_id)
            .where(t.messages.c.tenant_id == tenant_id)
            .order_by(t.messages.c.ordinal.desc(), t.sessions.c.updated_at.desc())
            .limit(1)
        )
        if session_id is not None:
            query = query.where(t.messages.c.session_id == session_id)
        # Equal chain hashes mean equal prefixes, so the highest matching ordinal is the
        # longest shared prefix. Chunks (driver parameter limits) are tried from the end.
        for end in range(len(chain), 0, -900):
            part = list(chain[max(0, end - 900) : end])
            async with self._connect() as conn:
                row = (await conn.execute(query.where(t.messages.c.chain_hash.in_(part)))).first()
            if row is not None:
                return ChainMatch(row.session_id, row.ordinal + 1)
        return None

    async def create_session(
        self,
        tenant_id: str,
        *,
        external_id: str | None = None,
        parent_id: str | None = None,
        fork_ordinal: int | None = None,
        system: list[dict[str, Any]] | None = None,
        arm: str | None = None,
        session_id: str,
    ) -> SessionRow:
        now = time.time()
        row = SessionRow(
            id=session_id,
            tenant_id=tenant_id,
            external_id=external_id,
            parent_id=parent_id,
            fork_ordinal=fork_ordinal,
            system=system,
            message_count=0,
            arm=arm,
            created_at=now,
            updated_at=now,
        )
        async with self._begin() as conn:
            await conn.execute(
                insert(t.sessions).values(
                    id=row.id,
                    tenant_id=tenant_id,
                    external_id=external_id,
                    parent_id=parent_id,
                    fork_ordinal=fork_ordinal,
                    system_json=json.dumps(system, ensure_ascii=False) if system else None,
                    message_count=0,
                    arm=arm,
                    created_at=now,
                    updated_at=now,
                )
            )
        return row

    # --- messages ------------------------------------------------------------------

    async def load_messages(
        self, session_id: str, start: int = 0, end: int | None = None
    ) -> list[StoredMessage]:
        query = (
            select(t.messages)
            .where(t.messages.c.session_id == session_id, t.messages.c.ordinal >= start)
            .order_by(t.messages.c.ordinal)
        )
        if end is not None:
            query = query.where(t.messages.c.ordinal < end)
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        return [_message_from_row(r) for r in rows]

    async def write_turns(
        self,
        session: SessionRow,
        start: int,
        turns: Sequence[StoredMessage],
        *,
        system: list[dict[str, Any]] | None = None,
        items: Sequence[MemoryItem] | None = None,
        drop_items_from: int | None = None,
    ) -> None:
        """Replace the session's turns from `start` on with `turns`, in one transaction.

        Summary chunks covering any turn from `start` on go with them. `items`
        (if given) are upserted; `drop_items_from` deletes items created at or
        after that ordinal first (rollback of memory derived from discarded turns).
        """
        now = time.time()
        count = start + len(turns)
        values: dict[str, Any] = {"message_count": count, "updated_at": now}
        if system is not None:
            values["system_json"] = json.dumps(system, ensure_ascii=False)
        rows = [
            {
                "session_id": session.id,
                "ordinal": m.ordinal,
                "tenant_id": session.tenant_id,
                "role": m.role,
                "message_json": json.dumps(m.message, ensure_ascii=False),
                "text": m.text,
                "tool_call_id": m.tool_call_id,
                "tool_call_ids": json.dumps(list(m.tool_call_ids)) if m.tool_call_ids else None,
                "content_hash": m.content_hash,
                "chain_hash": m.chain_hash,
                "tokens": m.tokens,
                "created_at": m.created_at,
            }
            for m in turns
        ]
        # An append (the common case) has nothing to replace: no turn and no summary
        # chunk reaches past the session's count. One process knows that count; if it
        # were ever behind, the insert would collide with the first stored turn and the
        # write is done again in full.
        append = not self.shared and bool(rows) and start >= session.message_count
        try:
            async with self._begin() as conn:
                await self._write_turns(
                    conn, session, start, rows, values, items, drop_items_from, replace=not append
                )
        except IntegrityError:
            if not append:
                raise
            async with self._begin() as conn:
                await self._write_turns(
                    conn, session, start, rows, values, items, drop_items_from, replace=True
                )
        session.message_count = count
        session.updated_at = now
        if system is not None:
            session.system = system

    async def _write_turns(
        self,
        conn: AsyncConnection,
        session: SessionRow,
        start: int,
        rows: list[dict[str, Any]],
        values: dict[str, Any],
        items: Sequence[MemoryItem] | None,
        drop_items_from: int | None,
        *,
        replace: bool,
    ) -> None:
        await self._bump(conn, session.id, **values)
        if replace:
            await conn.execute(
                delete(t.messages).where(
                    t.messages.c.session_id == session.id, t.messages.c.ordinal >= start
                )
            )
        if rows:
            await conn.execute(insert(t.messages), self._rows(rows))
        if replace:
            # A summary chunk covering any replaced turn came from discarded turns.
            await conn.execute(
                delete(t.summaries).where(
                    t.summaries.c.session_id == session.id, t.summaries.c.upto_ordinal > start
                )
            )
        if drop_items_from is not None:
            await conn.execute(
                delete(t.memory_items).where(
                    t.memory_items.c.session_id == session.id,
                    t.memory_items.c.source_ordinal >= drop_items_from,
                )
            )
        if items:
            await self._upsert_items(conn, session.id, items)

    # --- memory items -------------------------------------------------------------

    async def load_items(self, session_id: str) -> list[MemoryItem]:
        async with self._connect() as conn:
            rows = (
                await conn.execute(
                    select(t.memory_items)
                    .where(t.memory_items.c.session_id == session_id)
                    .order_by(t.memory_items.c.source_ordinal, t.memory_items.c.id)
                )
            ).all()
        return [item_from_row(r) for r in rows]

    async def save_items(self, session_id: str, items: Sequence[MemoryItem]) -> None:
        if not items:
            return
        async with self._begin() as conn:
            await self._bump(conn, session_id)
            await self._upsert_items(conn, session_id, items)

    async def replace_items(self, session_id: str, items: Sequence[MemoryItem]) -> None:
        """Make the stored items exactly `items` (after a rollback)."""
        async with self._begin() as conn:
            await self._bump(conn, session_id)
            await conn.execute(
                delete(t.memory_items).where(t.memory_items.c.session_id == session_id)
            )
            if items:
                await conn.execute(
                    insert(t.memory_items), self._rows([item_to_row(session_id, i) for i in items])
                )

    # --- rolling summary ------------------------------------------------------------

    async def load_summary_chunks(self, session_id: str) -> list[SummaryChunk]:
        async with self._connect() as conn:
            rows = (
                await conn.execute(
                    select(t.summaries)
                    .where(t.summaries.c.session_id == session_id)
                    .order_by(t.summaries.c.upto_ordinal)
                )
            ).all()
        return [chunk_from_row(r) for r in rows]

    async def replace_summary_chunks(
        self,
        session_id: str,
        chunks: Sequence[tuple[SummaryChunk, str, int]],
        *,
        from_upto: int = 0,
    ) -> None:
        """Make the chunks ending after `from_upto` exactly `chunks` (chunk, text, tokens).

        `from_upto=0` rewrites the whole summary (a trim); appending a chunk
        passes the previous end so that nothing else is touched.
        """
        async with self._begin() as conn:
            await self._bump(conn, session_id)
            await conn.execute(
                delete(t.summaries).where(
                    t.summaries.c.session_id == session_id,
                    t.summaries.c.upto_ordinal > from_upto,
                )
            )
            if chunks:
                now = time.time()
                rows = [
                    chunk_to_row(session_id, c, text, tokens, now) for c, text, tokens in chunks
                ]
                await conn.execute(insert(t.summaries), self._rows(rows))

    async def copy_summary_chunks(self, source_id: str, target_id: str, upto: int) -> None:
        """A fork inherits the summary of the prefix it shares with its parent."""
        chunks = [c for c in await self.load_summary_chunks(source_id) if c.upto <= upto]
        if not chunks:
            return
        async with self._connect() as conn:
            rows = (
                await conn.execute(
                    select(
                        t.summaries.c.upto_ordinal, t.summaries.c.text, t.summaries.c.tokens
                    ).where(t.summaries.c.session_id == source_id)
                )
            ).all()
        texts = {r.upto_ordinal: (r.text, r.tokens) for r in rows}
        await self.replace_summary_chunks(
            target_id, [(c, *texts.get(c.upto, ("", 0))) for c in chunks]
        )

    async def save_layout(self, session_id: str, layout: MemoryLayout | None) -> None:
        """Keep the working-memory layout where every replica finds it."""
        text = layout_to_json(layout) if layout is not None else None
        async with self._begin() as conn:
            await self._bump(conn, session_id, layout_json=text)

    async def load_layout(self, session_id: str) -> MemoryLayout | None:
        async with self._connect() as conn:
            text = await conn.scalar(
                select(t.sessions.c.layout_json).where(t.sessions.c.id == session_id)
            )
        return layout_from_json(text) if text else None

    async def load_created_at(self, session_id: str) -> list[float]:
        """When each stored turn was written, by ordinal (dates of recalled turns)."""
        async with self._connect() as conn:
            rows = (
                await conn.execute(
                    select(t.messages.c.created_at)
                    .where(t.messages.c.session_id == session_id)
                    .order_by(t.messages.c.ordinal)
                )
            ).all()
        return [float(r.created_at) for r in rows]

    async def _upsert_items(self, conn: Any, session_id: str, items: Sequence[MemoryItem]) -> None:
        ids = [i.id for i in items]
        await conn.execute(delete(t.memory_items).where(t.memory_items.c.id.in_(ids)))
        rows = [item_to_row(session_id, i) for i in items]
        await conn.execute(insert(t.memory_items), self._rows(rows))

    # --- request records ------------------------------------------------------------

    async def save_requests(self, rows: Sequence[dict[str, Any]]) -> None:
        if rows:
            async with self._begin() as conn:
                await conn.execute(insert(t.requests), self._rows(list(rows)))

    async def purge_requests(self, older_than: float) -> int:
        """Delete request records created before `older_than` (log.retention_days)."""
        async with self._begin() as conn:
            result = await conn.execute(
                delete(t.requests).where(t.requests.c.created_at < older_than)
            )
        return int(result.rowcount or 0)

    async def get_request(self, request_id: str) -> dict[str, Any] | None:
        async with self._connect() as conn:
            row = (
                await conn.execute(select(t.requests).where(t.requests.c.id == request_id))
            ).first()
        return dict(row._mapping) if row else None

    async def list_requests(
        self,
        *,
        session_id: str | None = None,
        limit: int = 20,
        before: str | None = None,
        contains: str | None = None,
    ) -> list[dict[str, Any]]:
        query = select(t.requests).order_by(t.requests.c.id.desc()).limit(limit)
        if session_id:
            query = query.where(t.requests.c.session_id == session_id)
        if before:
            query = query.where(t.requests.c.id < before)
        if contains:
            pattern = f"%{_like_escape(contains)}%"
            query = query.where(t.requests.c.record_json.ilike(pattern, escape="\\"))
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        return [dict(r._mapping) for r in rows]

    async def list_compare_requests(
        self, *, tenant_id: str | None = None, since: float | None = None
    ) -> list[dict[str, Any]]:
        """Records of `compare` requests (both answers), oldest first (`ab-report --judge`)."""
        query = select(t.requests).where(t.requests.c.mode == "compare").order_by(t.requests.c.id)
        if tenant_id:
            query = query.where(t.requests.c.tenant_id == tenant_id)
        if since is not None:
            query = query.where(t.requests.c.created_at >= since)
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        return [dict(r._mapping) for r in rows]

    async def last_request_for_session(self, session_id: str) -> dict[str, Any] | None:
        rows = await self.list_requests(session_id=session_id, limit=1)
        return rows[0] if rows else None

    # --- inspection and operator changes (admin API, CLI) ------------------------

    async def child_sessions(self, session_id: str) -> list[SessionRow]:
        """Sessions forked from `session_id` (an edited turn)."""
        async with self._connect() as conn:
            rows = (
                await conn.execute(
                    select(t.sessions)
                    .where(t.sessions.c.parent_id == session_id)
                    .order_by(t.sessions.c.id)
                )
            ).all()
        return [_session_from_row(r) for r in rows]

    async def load_summary(self, session_id: str) -> dict[str, Any] | None:
        """The session's rolling summary: its chunks' texts joined, in order; None if none."""
        async with self._connect() as conn:
            rows = (
                await conn.execute(
                    select(t.summaries)
                    .where(t.summaries.c.session_id == session_id)
                    .order_by(t.summaries.c.upto_ordinal)
                )
            ).all()
        if not rows:
            return None
        return {
            "session_id": session_id,
            "upto_ordinal": rows[-1].upto_ordinal,
            "text": "\n".join(r.text for r in rows),
            "tokens": sum(r.tokens for r in rows),
            "created_at": max(r.created_at for r in rows),
            "chunks": [
                {
                    "start_ordinal": r.start_ordinal,
                    "upto_ordinal": r.upto_ordinal,
                    "method": r.method,
                    "tokens": r.tokens,
                }
                for r in rows
            ],
        }

    async def update_item(self, session_id: str, item: MemoryItem) -> bool:
        """Overwrite one stored item of `session_id`; False if it is not there."""
        row = self._rows([item_to_row(session_id, item)])[0]
        async with self._begin() as conn:
            await self._bump(conn, session_id)
            result = await conn.execute(
                update(t.memory_items)
                .where(t.memory_items.c.id == item.id, t.memory_items.c.session_id == session_id)
                .values(**{k: v for k, v in row.items() if k not in ("id", "session_id")})
            )
        return bool(result.rowcount)

    async def delete_session(self, session_id: str) -> bool:
        """Erase a session and everything derived from it, in one transaction.

        Forks keep their own copies of the shared turns, so they stay; only
        their pointer to the erased parent is cleared (no dangling id left).
        """
        async with self._begin() as conn:
            found = await conn.scalar(select(t.sessions.c.id).where(t.sessions.c.id == session_id))
            if found is None:
                return False
            for table in (t.messages, t.memory_items, t.summaries, t.requests):
                await conn.execute(delete(table).where(table.c.session_id == session_id))
            # What the conversation alone told the user's long-term memory goes too.
            await forget_session_rows(conn, session_id)
            await conn.execute(
                update(t.sessions)
                .where(t.sessions.c.parent_id == session_id)
                .values(parent_id=None)
            )
            await conn.execute(delete(t.sessions).where(t.sessions.c.id == session_id))
        return True

    async def request_facts(self) -> list[dict[str, Any]]:
        """Per request: the columns the A/B report aggregates, plus the recorded cost.

        The cost is read inside the database so the (large) records never travel.
        """
        col = t.requests.c.record_json
        cost: Any
        if self.engine.dialect.name == "sqlite":
            cost = func.json_extract(col, "$.cost")
        else:
            cost = cast(col, JSON)["cost"].as_float()
        query = select(
            t.requests.c.mode,
            t.requests.c.session_id,
            t.requests.c.status,
            t.requests.c.raw_tokens,
            t.requests.c.context_tokens,
            t.requests.c.proxy_ms,
            t.requests.c.upstream_ms,
            t.requests.c.prompt_tokens,
            t.requests.c.cached_tokens,
            t.requests.c.cache_write_tokens,
            t.requests.c.input_cost,
            cost.label("cost"),
        ).where(t.requests.c.mode != "passthrough")  # embeddings, files...: no A/B arm
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        return [dict(r._mapping) for r in rows]

    async def ab_stats(self) -> list[dict[str, Any]]:
        """Request records grouped by mode (the A/B arms), one summary row per mode."""
        arms: dict[str, list[dict[str, Any]]] = {}
        for fact in await self.request_facts():
            arms.setdefault(fact["mode"], []).append(fact)
        return [_arm_stats(mode, facts) for mode, facts in sorted(arms.items())]


def _percentile(values: Sequence[float], share: float) -> float | None:
    """Nearest-rank percentile (no interpolation: a reported latency really happened)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(share * len(ordered)))
    return round(ordered[rank - 1], 1)


def _arm_stats(mode: str, facts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    latencies = [
        (f["proxy_ms"] or 0.0) + (f["upstream_ms"] or 0.0)
        for f in facts
        if f["proxy_ms"] is not None or f["upstream_ms"] is not None
    ]
    costs = [float(f["cost"]) for f in facts if f["cost"] is not None]
    raw = sum(f["raw_tokens"] for f in facts)
    forwarded = sum(f["context_tokens"] for f in facts)
    # Prompt caching: what the provider reported, over the requests that reported it.
    prompt = sum(f.get("prompt_tokens") or 0 for f in facts)
    cached = sum(f.get("cached_tokens") or 0 for f in facts)
    input_costs = [float(f["input_cost"]) for f in facts if f.get("input_cost") is not None]
    return {
        "mode": mode,
        "requests": len(facts),
        "sessions": len({f["session_id"] for f in facts if f["session_id"]}),
        "raw_tokens": raw,
        "forwarded_tokens": forwarded,
        "forwarded_ratio": round(forwarded / raw, 4) if raw else None,
        "cost": round(sum(costs), 6) if costs else None,
        "input_tokens": prompt,
        "cached_tokens": cached,
        "cache_write_tokens": sum(f.get("cache_write_tokens") or 0 for f in facts),
        "cached_share": round(cached / prompt, 4) if prompt else None,
        "input_cost": round(sum(input_costs), 6) if input_costs else None,
        "latency_p50_ms": _percentile(latencies, 0.50),
        "latency_p95_ms": _percentile(latencies, 0.95),
        "errors": sum(1 for f in facts if f["status"] >= 400),
    }


def _like_escape(text: str) -> str:
    """`text` as a literal inside a LIKE pattern (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
