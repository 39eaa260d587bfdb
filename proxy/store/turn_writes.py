"""Writing a session's turns: `write_turns` replaces them from an ordinal on, with
what was derived from the discarded ones (summary chunks, items), in one
transaction: continuation, regenerate and fork are all this one write.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from policies.types import MemoryItem
from proxy.store import schema as t
from proxy.store.memory_rows import DROP_ITEMS, DROP_MESSAGES, DROP_SUMMARIES, MemoryRows
from proxy.store.rows import SessionRow, StoredMessage


class TurnWrites(MemoryRows):
    """A turn write (it also rolls back the memory it outdated)."""

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
            await conn.execute(DROP_MESSAGES, {"drop_session": session.id, "drop_from": start})
        if rows:
            await conn.execute(insert(t.messages), self._rows(rows))
        if replace:
            # A summary chunk covering any replaced turn came from discarded turns.
            await conn.execute(DROP_SUMMARIES, {"drop_session": session.id, "drop_from": start})
        if drop_items_from is not None:
            await conn.execute(
                DROP_ITEMS, {"drop_session": session.id, "drop_from": drop_items_from}
            )
        if items:
            await self._upsert_items(conn, session.id, items)
