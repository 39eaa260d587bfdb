"""Long-term memory across a user's conversations: the proxy side.

A user scope comes from `X-Memory-User`, else the request's `user` field;
without one nothing crosses conversations. It is always inside the caller's
tenant. Two paths:

- Backfill, on the request path: the user's items are read (with a timeout)
  and `policies.backfill` picks the background lines. A store error or a slow
  read only means no background this time: the chat goes on.
- Consolidation, off it: after a request's memory work, a job with a snapshot
  of the session's items and the turns goes to a bounded queue; one worker
  merges it into the user's items (`policies.longterm`). A failure is logged
  and counted; it never reaches a chat request. A full queue drops the job
  (the next request of the session brings the same items again).

Operator changes to a user's items wait for the job in flight (the worker
runs one at a time), and an erasure also discards the user's queued jobs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from policies.backfill import Backfill, BackfillQuery, backfill_cap, plan_backfill
from policies.budget import split_mandatory
from policies.longterm import (
    LongTermItem,
    LongTermParams,
    consolidation_candidates,
    merge_items,
    retire_revoked,
)
from policies.types import Candidate, MemoryItem, TokenCounter, Turn
from proxy.config import LongTermSettings
from proxy.ids import new_id
from proxy.store.repo import Store

log = logging.getLogger("memproxy.longterm")


def user_scope(header: str | None, params: Mapping[str, Any]) -> str | None:
    """`X-Memory-User`, else the request's `user` field, else None (no long-term memory)."""
    if header and header.strip():
        return header.strip()
    user = params.get("user")
    if isinstance(user, str) and user.strip():
        return user.strip()
    return None


@dataclass(frozen=True, slots=True)
class ConsolidationJob:
    """One request's contribution: the session's items after it, and its turns."""

    tenant_id: str
    user_id: str
    session_id: str
    items: tuple[MemoryItem, ...]
    turns: tuple[Turn, ...]
    start: int  # first ordinal this request added
    queued_at: float = field(default_factory=time.monotonic)


def _failed(reason: str) -> Backfill:
    """No background this time, and the request record says why."""
    return Backfill(candidates=[Candidate("longterm", "store", 0, 0.0, "dropped", reason)])


def _merge_job(
    existing: list[LongTermItem], job: ConsolidationJob, now: float
) -> list[LongTermItem]:
    """The user's rows that `job` retires, changes or adds."""
    retired = retire_revoked(
        existing,
        session_id=job.session_id,
        items=job.items,
        new_user_turns=[t for t in job.turns if t.role == "user" and t.ordinal >= job.start],
        since=job.start,
        now=now,
    )
    gone = {r.id for r in retired}
    picks = consolidation_candidates(job.items, job.turns)
    merged = merge_items(
        [r for r in existing if r.id not in gone and r.status == "active"],
        picks,
        session_id=job.session_id,
        items=job.items,
        now=now,
        new_id=new_id,
    )
    return [*retired, *merged]


class LongTermMemory:
    def __init__(
        self,
        store: Store,
        params: LongTermParams,
        *,
        enabled: bool = True,
        read_timeout_s: float = 1.0,
        queue_size: int = 1000,
    ) -> None:
        self.store = store
        self.params = params
        self.enabled = enabled
        self.read_timeout_s = read_timeout_s
        self._queue: asyncio.Queue[ConsolidationJob] = asyncio.Queue(maxsize=queue_size)
        self._worker: asyncio.Task[None] | None = None
        # Held by the worker for each job and by operator changes: one job runs at a
        # time anyway, and a change never interleaves with a job's read-merge-write.
        self._busy = asyncio.Lock()
        self._erased: dict[tuple[str | None, str], float] = {}  # (tenant or all, user) -> when
        self.consolidated = 0  # jobs merged
        self.failures = 0  # jobs that raised (store outage, bug): logged, chat unaffected
        self.dropped = 0  # jobs refused by a full queue

    @classmethod
    def from_settings(cls, store: Store, settings: LongTermSettings) -> LongTermMemory:
        params = LongTermParams.model_validate(
            settings.model_dump(include=set(LongTermParams.model_fields))
        )
        return cls(
            store,
            params,
            enabled=settings.enabled,
            read_timeout_s=settings.read_timeout_s,
            queue_size=settings.queue_size,
        )

    # --- backfill (request path) --------------------------------------------------

    async def backfill(
        self,
        tenant_id: str,
        user_id: str | None,
        session_id: str,
        turns: Sequence[Turn],
        items: Sequence[MemoryItem],
        budget: int,
        count: TokenCounter,
    ) -> Backfill | None:
        """The background block for this request (`turns`: system and conversation);
        None when there is no user scope."""
        if not self.enabled or user_id is None:
            return None
        system, _, tail = split_mandatory(list(turns))
        mandatory = sum(t.tokens for t in (*system, *tail))
        cap = backfill_cap(budget, mandatory, self.params)
        if cap <= 0:
            return Backfill()
        try:
            rows = await asyncio.wait_for(
                self.store.load_long_term(tenant_id, user_id, active_only=True),
                self.read_timeout_s,
            )
        except Exception as exc:  # any store failure: no background, the chat goes on
            log.warning("long-term read failed for a user: %r", exc)
            return _failed(f"long-term store unavailable: {type(exc).__name__}")
        query = BackfillQuery(
            text="\n".join(t.text for t in tail if t.role == "user"),
            items=items,
            system="\n".join(t.text for t in system),
            session_id=session_id,
        )
        try:
            return plan_backfill(rows, query, cap, self.params, count)
        except Exception as exc:  # a bug in the policy must not cost the user an answer
            log.exception("long-term backfill failed (chat unaffected)")
            return _failed(f"long-term backfill failed: {type(exc).__name__}")

    # --- consolidation (off the request path) -------------------------------------

    def submit(self, job: ConsolidationJob) -> None:
        """Queue a job; never raises and never waits."""
        if not self.enabled:
            return
        try:
            self._queue.put_nowait(job)
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("long-term consolidation queue full: job dropped")
            return
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            job = await self._queue.get()
            try:
                await self.consolidate(job)
                self.consolidated += 1
            except Exception:
                self.failures += 1
                log.exception("long-term consolidation failed (chat unaffected)")
            finally:
                self._queue.task_done()

    async def consolidate(self, job: ConsolidationJob) -> list[LongTermItem]:
        """Merge one job into the user's items; returns the rows written."""
        async with self._busy:
            if self._erased_since(job):
                return []  # queued before the user was erased
            existing = await self.store.load_long_term(job.tenant_id, job.user_id)
            # Pure CPU work over a snapshot: in a thread, so requests are not held up.
            changed = await asyncio.to_thread(_merge_job, existing, job, time.time())
            await self.store.save_long_term(job.tenant_id, job.user_id, changed)
            return changed

    async def drain(self) -> None:
        """Wait until every queued job is done (tests, shutdown)."""
        if self._worker is not None and not self._worker.done():
            await self._queue.join()

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.drain(), 10)
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker

    # --- operator changes (admin API) ---------------------------------------------

    @asynccontextmanager
    async def operator_change(self) -> AsyncIterator[None]:
        """Hold off consolidation while an operator changes a user's items."""
        async with self._busy:
            yield

    async def erase(self, user_id: str, tenant_id: str | None) -> int:
        """Delete a user's items (in one tenant, or in all: None); their queued jobs are
        skipped, and a job in flight finishes first, so nothing it writes survives."""
        async with self._busy:
            self._erased[(tenant_id, user_id)] = time.monotonic()
            return await self.store.delete_long_term(user_id, tenant_id=tenant_id)

    def _erased_since(self, job: ConsolidationJob) -> bool:
        marks = (
            self._erased.get((job.tenant_id, job.user_id)),
            self._erased.get((None, job.user_id)),
        )
        return any(m is not None and m >= job.queued_at for m in marks)
