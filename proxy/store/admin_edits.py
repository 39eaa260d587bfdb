"""Inspection and operator changes to a session (admin API, CLI).

An edit bumps the session's version like any write, so replicas reload it;
erasing a session takes everything derived from it along, long-term rows included.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import delete, select, update

from policies.types import MemoryItem
from proxy.store import schema as t
from proxy.store.long_term import forget_session_rows
from proxy.store.replicas import ReplicaCoherence
from proxy.store.rows import SessionRow, item_to_row, session_from_row


class AdminEdits(ReplicaCoherence):
    """Forks of a session, its summary as shown, item edits, erasure."""

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
        return [session_from_row(r) for r in rows]

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
