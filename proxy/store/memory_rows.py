"""A session's working memory in the store: items, rolling summary chunks, layout.

Every write bumps the session's version (`ReplicaCoherence._bump`) in the
same transaction, so other replicas drop their cached copies.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Column, Delete, Table, bindparam, delete, insert, select

from policies.types import MemoryItem, MemoryLayout, SummaryChunk
from proxy.store import schema as t
from proxy.store.replicas import ReplicaCoherence
from proxy.store.rows import (
    chunk_from_row,
    chunk_to_row,
    item_from_row,
    item_to_row,
    layout_from_json,
    layout_to_json,
)


def _drop_from(table: Table, ordinal: Column[Any], *, after: bool = False) -> Delete:
    """A session's rows from an ordinal on (`after`: past it), built once: a
    statement built per write cost SQLAlchemy ~0.14 ms more to construct and key
    for its compiled cache than executing a built one with new parameters."""
    start = bindparam("drop_from", type_=ordinal.type)
    return delete(table).where(
        table.c.session_id == bindparam("drop_session", type_=table.c.session_id.type),
        ordinal > start if after else ordinal >= start,
    )


DROP_MESSAGES = _drop_from(t.messages, t.messages.c.ordinal)
# A chunk up to (not including) `upto_ordinal` covers the turn at `start` when it ends past it.
DROP_SUMMARIES = _drop_from(t.summaries, t.summaries.c.upto_ordinal, after=True)
DROP_ITEMS = _drop_from(t.memory_items, t.memory_items.c.source_ordinal)


class MemoryRows(ReplicaCoherence):
    """Items, summary chunks and the memory layout of a session."""

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
            await conn.execute(DROP_SUMMARIES, {"drop_session": session_id, "drop_from": from_upto})
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

    async def _upsert_items(self, conn: Any, session_id: str, items: Sequence[MemoryItem]) -> None:
        ids = [i.id for i in items]
        await conn.execute(delete(t.memory_items).where(t.memory_items.c.id.in_(ids)))
        rows = [item_to_row(session_id, i) for i in items]
        await conn.execute(insert(t.memory_items), self._rows(rows))
