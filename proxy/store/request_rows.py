"""Request records in the store: written in batches by the request log, read by
`memproxy logs` / `inspect` and the inspector page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, insert, select

from proxy.store import schema as t
from proxy.store.engine import StoreEngine


class RequestRows(StoreEngine):
    """Save, purge, fetch and list request records."""

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


def _like_escape(text: str) -> str:
    """`text` as a literal inside a LIKE pattern (escape character: backslash)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
