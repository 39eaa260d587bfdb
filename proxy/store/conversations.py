"""Tenants, sessions and their turns in the store.

`write_turns` replaces a session's turns from an ordinal on, with what was
derived from the discarded ones (summary chunks, items), in one transaction:
continuation, regenerate and fork are all this one write.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from policies.types import MemoryItem
from proxy.store import schema as t
from proxy.store.memory_rows import MemoryRows
from proxy.store.rows import (
    ChainMatch,
    SessionRow,
    StoredMessage,
    message_from_row,
    session_from_row,
)


class Conversations(MemoryRows):
    """Sessions and messages (a turn write also rolls back the memory it outdated)."""

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
        return session_from_row(row) if row else None

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
        return session_from_row(row) if row else None

    async def sessions_named(self, external_id: str) -> list[SessionRow]:
        """Sessions a client named `external_id` (`X-Memory-Session`), in any tenant."""
        query = select(t.sessions).where(t.sessions.c.external_id == external_id)
        async with self._connect() as conn:
            rows = (await conn.execute(query.order_by(t.sessions.c.updated_at.desc()))).all()
        return [session_from_row(r) for r in rows]

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
        return [session_from_row(r) for r in rows]

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
        return [message_from_row(r) for r in rows]

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
