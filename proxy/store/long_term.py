"""A user's long-term items in the store (issue #9): rows, vectors, session deletion.

Mixed into `Store` (it uses the store's engine and write transaction) so the
pipeline keeps one store object; kept here so `repo.py` stays about sessions.
Vectors are stored as base64 float32: a user's rows are read on every request
with a user scope, and decoding them must stay cheap.
"""

from __future__ import annotations

import base64
import json
import time
from array import array
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from sqlalchemy import delete, insert, or_, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from policies.longterm.items import LongTermItem, LongTermVersion
from policies.longterm.retire import forget_session
from proxy.store import schema as t


def pack_vector(vector: Sequence[float] | None) -> str | None:
    if vector is None:
        return None
    return base64.b64encode(array("f", vector).tobytes()).decode("ascii")


def unpack_vector(text: str | None) -> Sequence[float] | None:
    """The stored vector as a float32 array: no per-element conversion on load."""
    if not text:
        return None
    values = array("f")
    values.frombytes(base64.b64decode(text))
    return values


def long_term_to_row(tenant_id: str, user_id: str, item: LongTermItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "tenant_id": tenant_id,
        "user_id": user_id,
        "kind": item.kind,
        "type": item.type,
        "slot": item.slot,
        "value": item.value,
        "status": item.status,
        "source_session_id": item.source_session_id,
        "source_item_id": item.source_item_id,
        "first_session_id": item.first_session_id,
        "first_seen": item.first_seen,
        "last_confirmed": item.last_confirmed,
        "confirmations": item.confirmations,
        "history_json": json.dumps(
            [[v.value, v.session_id, v.at, v.note] for v in item.history], ensure_ascii=False
        ),
        "updated_at": time.time(),
        "embedding": pack_vector(item.embedding),
        "embedding_model": item.embedding_model if item.embedding is not None else None,
        "value_sessions_json": json.dumps(item.value_sessions),
    }


def long_term_from_row(row: Any) -> LongTermItem:
    history = [LongTermVersion(v, s, a, n) for v, s, a, n in json.loads(row.history_json)]
    if row.value_sessions_json is None:
        # Written before migration 005: the conversation that last stated the value,
        # and the first one if the value never changed.
        stated = [row.source_session_id]
        if not history and row.first_session_id != row.source_session_id:
            stated.insert(0, row.first_session_id)
    else:
        stated = list(json.loads(row.value_sessions_json))
    return LongTermItem(
        id=row.id,
        kind=row.kind,
        type=row.type,
        slot=row.slot,
        value=row.value,
        status=row.status,
        source_session_id=row.source_session_id,
        source_item_id=row.source_item_id,
        first_session_id=row.first_session_id,
        first_seen=row.first_seen,
        last_confirmed=row.last_confirmed,
        confirmations=row.confirmations,
        history=history,
        value_sessions=stated,
        embedding=unpack_vector(row.embedding),
        embedding_model=row.embedding_model,
    )


def _like(text: str) -> str:
    """`text` as a literal inside a LIKE pattern (escape character: backslash)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class LongTermRows:
    """The long-term queries of `Store`."""

    engine: AsyncEngine

    def _begin(self) -> AbstractAsyncContextManager[AsyncConnection]:
        raise NotImplementedError  # Store's write transaction

    def _connect(self) -> AbstractAsyncContextManager[AsyncConnection]:
        raise NotImplementedError  # Store's read connection (once the store is ready)

    async def load_long_term(
        self, tenant_id: str | None, user_id: str, *, active_only: bool = False
    ) -> list[LongTermItem]:
        """A user's long-term items (one tenant, or every tenant when None), oldest first."""
        c = t.long_term_items.c
        query = select(t.long_term_items).where(c.user_id == user_id).order_by(c.first_seen, c.id)
        if tenant_id is not None:
            query = query.where(c.tenant_id == tenant_id)
        if active_only:
            query = query.where(c.status == "active")
        async with self._connect() as conn:
            rows = (await conn.execute(query)).all()
        return [long_term_from_row(r) for r in rows]

    async def long_term_tenants(self, user_id: str) -> list[str]:
        """Tenants in which a user has long-term items."""
        c = t.long_term_items.c
        async with self._connect() as conn:
            rows = await conn.execute(
                select(c.tenant_id).where(c.user_id == user_id).distinct().order_by(c.tenant_id)
            )
            return [str(r[0]) for r in rows]

    async def long_term_tenant(self, user_id: str, item_id: str) -> str | None:
        """The tenant a user's item belongs to (None: no such item of that user)."""
        c = t.long_term_items.c
        async with self._connect() as conn:
            found = await conn.scalar(
                select(c.tenant_id).where(c.id == item_id, c.user_id == user_id)
            )
        return str(found) if found is not None else None

    async def save_long_term(
        self, tenant_id: str, user_id: str, items: Sequence[LongTermItem]
    ) -> None:
        """Upsert a user's items (consolidation, operator edits) in one transaction."""
        if not items:
            return
        async with self._begin() as conn:
            await _write(conn, tenant_id, user_id, items)

    async def delete_long_term(
        self, user_id: str, *, tenant_id: str | None = None, item_id: str | None = None
    ) -> int:
        """Erase one item, or all of a user's items (in one tenant or all); returns the count."""
        c = t.long_term_items.c
        query = delete(t.long_term_items).where(c.user_id == user_id)
        if tenant_id is not None:
            query = query.where(c.tenant_id == tenant_id)
        if item_id is not None:
            query = query.where(c.id == item_id)
        async with self._begin() as conn:
            result = await conn.execute(query)
        return int(result.rowcount or 0)


async def _write(
    conn: AsyncConnection, tenant_id: str, user_id: str, items: Sequence[LongTermItem]
) -> None:
    c = t.long_term_items.c
    await conn.execute(delete(t.long_term_items).where(c.id.in_([i.id for i in items])))
    await conn.execute(
        insert(t.long_term_items), [long_term_to_row(tenant_id, user_id, i) for i in items]
    )


async def forget_session_rows(conn: AsyncConnection, session_id: str) -> tuple[int, int]:
    """Inside a session's deletion: take back what it told long-term memory
    (`policies.longterm.retire.forget_session`); returns (rows changed, rows deleted)."""
    c = t.long_term_items.c
    pattern = _like(session_id)
    query = select(t.long_term_items).where(
        or_(
            c.first_session_id == session_id,
            c.source_session_id == session_id,
            c.history_json.like(pattern, escape="\\"),
            c.value_sessions_json.like(pattern, escape="\\"),
        )
    )
    found = (await conn.execute(query)).all()
    owners = {r.id: (r.tenant_id, r.user_id) for r in found}
    changed, deleted = forget_session([long_term_from_row(r) for r in found], session_id)
    if deleted:
        await conn.execute(delete(t.long_term_items).where(c.id.in_(deleted)))
    for row in changed:
        await _write(conn, *owners[row.id], [row])
    return len(changed), len(deleted)
