"""Tenants, sessions and their turns in the store.

`Conversations` creates tenants and sessions; reading them is
`session_queries.SessionQueries`, writing their turns is `turn_writes.TurnWrites`
(`write_turns` replaces a session's turns from an ordinal on, with what was
derived from the discarded ones, in one transaction: continuation, regenerate
and fork are all this one write).
"""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from proxy.store import schema as t
from proxy.store.rows import SessionRow
from proxy.store.session_queries import SessionQueries
from proxy.store.turn_writes import TurnWrites


class Conversations(SessionQueries, TurnWrites):
    """Tenants and sessions, their reads and their turn writes."""

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
