"""Reading sessions and their turns from the store: lookups, listings, chain matches."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import select

from proxy.store import schema as t
from proxy.store.engine import StoreEngine
from proxy.store.rows import (
    ChainMatch,
    SessionRow,
    StoredMessage,
    message_from_row,
    session_from_row,
)


class SessionQueries(StoreEngine):
    """Sessions and messages as stored (reads only)."""

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
