"""Operator changes to long-term memory (admin API) against the consolidation worker."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from proxy.longterm.jobs import ConsolidationJob


class OperatorGuard:
    """The lock a job's read-merge-write and an operator change share, and the
    erasures and deleted conversations that make queued jobs obsolete."""

    def __init__(self) -> None:
        # Held by the worker for each job and by operator changes: one job runs at a
        # time anyway, and a change never interleaves with a job's read-merge-write.
        self.busy = asyncio.Lock()
        self._erased: dict[tuple[str | None, str], float] = {}  # (tenant or all, user) -> when
        self._deleted_sessions: dict[str, float] = {}  # session id -> when

    @asynccontextmanager
    async def operator_change(self) -> AsyncIterator[None]:
        """Hold off consolidation while an operator changes a user's items."""
        async with self.busy:
            yield

    def mark_erased(self, user_id: str, tenant_id: str | None) -> None:
        """The user's jobs queued until now are skipped. Call under `busy`."""
        self._erased[(tenant_id, user_id)] = time.monotonic()

    def forget_session(self, session_id: str) -> None:
        """A deleted conversation: its queued jobs are skipped (they would bring back
        what the deletion took from long-term memory). Call under `operator_change`."""
        self._deleted_sessions[session_id] = time.monotonic()

    def erased_since(self, job: ConsolidationJob) -> bool:
        marks = (
            self._erased.get((job.tenant_id, job.user_id)),
            self._erased.get((None, job.user_id)),
            self._deleted_sessions.get(job.session_id),
        )
        return any(m is not None and m >= job.queued_at for m in marks)
