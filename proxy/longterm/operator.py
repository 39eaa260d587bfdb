"""Operator changes to long-term memory (admin API) against the consolidation worker."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from proxy.longterm.jobs import ConsolidationJob


def _drop_older(marks: dict[Any, float], oldest: float) -> None:
    """Drop the leading marks (oldest first) made before `oldest`."""
    while marks:
        key, when = next(iter(marks.items()))
        if when >= oldest:
            return
        del marks[key]


class OperatorGuard:
    """The lock a job's read-merge-write and an operator change share, and the
    erasures and deleted conversations that make queued jobs obsolete
    (`oldest_pending`: when the oldest job still queued or running was made)."""

    def __init__(self, oldest_pending: Callable[[], float] = lambda: math.inf) -> None:
        self._oldest_pending = oldest_pending
        # Held by the worker for each job and by operator changes: one job runs at a
        # time anyway, and a change never interleaves with a job's read-merge-write.
        self.busy = asyncio.Lock()
        # Deletion marks, oldest first: a queued job older than a mark is skipped.
        # Kept only while a job older than them is queued or running (`prune`),
        # so they are bounded by the deletions made while the queue is busy.
        self._erased: dict[tuple[str | None, str], float] = {}  # (tenant or all, user) -> when
        self._deleted_sessions: dict[str, float] = {}  # session id -> when

    @asynccontextmanager
    async def operator_change(self) -> AsyncIterator[None]:
        """Hold off consolidation while an operator changes a user's items."""
        async with self.busy:
            yield

    def mark_erased(self, user_id: str, tenant_id: str | None) -> None:
        """The user's jobs queued until now are skipped. Call under `busy`."""
        self._erased.pop((tenant_id, user_id), None)
        self._erased[(tenant_id, user_id)] = time.monotonic()
        self.prune()

    def forget_session(self, session_id: str) -> None:
        """A deleted conversation: its queued jobs are skipped (they would bring back
        what the deletion took from long-term memory). Call under `operator_change`."""
        self._deleted_sessions.pop(session_id, None)
        self._deleted_sessions[session_id] = time.monotonic()
        self.prune()

    def prune(self) -> None:
        """Drop the marks older than every job still queued or running: no job they
        could skip is left (a later job is queued after them), and none will be."""
        oldest = self._oldest_pending()
        _drop_older(self._erased, oldest)
        _drop_older(self._deleted_sessions, oldest)

    def marks(self) -> int:
        """Deletion marks held (bounded by the deletions made while jobs are queued)."""
        return len(self._erased) + len(self._deleted_sessions)

    def erased_since(self, job: ConsolidationJob) -> bool:
        marks = (
            self._erased.get((job.tenant_id, job.user_id)),
            self._erased.get((None, job.user_id)),
            self._deleted_sessions.get(job.session_id),
        )
        return any(m is not None and m >= job.queued_at for m in marks)
