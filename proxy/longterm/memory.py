"""`LongTermMemory`: backfill on the request path (`recall`), consolidation off it
(see the package)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from policies.longterm.items import LongTermItem
from policies.longterm.params import LongTermParams
from proxy.longterm.embedding import Embedder
from proxy.longterm.jobs import ConsolidationJob, Embed, merge_job, with_vectors
from proxy.longterm.operator import OperatorGuard
from proxy.longterm.recall import Recall
from proxy.longterm.worker import ConsolidationQueue
from proxy.settings import LongTermSettings
from proxy.store.repo import Store


class LongTermMemory:
    def __init__(
        self,
        store: Store,
        params: LongTermParams,
        *,
        enabled: bool = True,
        read_timeout_s: float = 1.0,
        queue_size: int = 1000,
        embed: Embed | None = None,
        embedding_model: str | None = None,
        embedding_timeout_s: float = 1.0,
    ) -> None:
        self.store = store
        self.params = params
        self.enabled = enabled
        self.read_timeout_s = read_timeout_s
        self.embedding_model = embedding_model
        self.embedder = Embedder(store, embed, embedding_model, embedding_timeout_s)
        self.queue = ConsolidationQueue(
            self.consolidate, queue_size, after_job=lambda: self.guard.prune()
        )
        self.guard = OperatorGuard(self.queue.oldest_pending)
        self.recall = Recall(self)
        self.backfill = self.recall.backfill
        self.new_job_vectors = self.embedder.new_job_vectors
        self.embed_job = self.embedder.embed_job
        self.drain = self.queue.drain
        self.aclose = self.queue.aclose
        self.forget_session = self.guard.forget_session
        self.marks = self.guard.marks

    @classmethod
    def from_settings(
        cls, store: Store, settings: LongTermSettings, embed: Embed | None = None
    ) -> LongTermMemory:
        params = LongTermParams.model_validate(
            settings.model_dump(include=set(LongTermParams.model_fields))
        )
        return cls(
            store,
            params,
            enabled=settings.enabled,
            read_timeout_s=settings.read_timeout_s,
            queue_size=settings.queue_size,
            embed=embed,
            embedding_model=settings.embedding_model,
            embedding_timeout_s=settings.embedding_timeout_s,
        )

    # Counters, for `/metrics` and the tests.
    @property
    def consolidated(self) -> int:
        return self.queue.consolidated

    @property
    def failures(self) -> int:
        return self.queue.failures

    @property
    def dropped(self) -> int:
        return self.queue.dropped

    @property
    def embedding_failures(self) -> int:
        return self.embedder.failures

    def stats(self) -> dict[str, int]:
        """The consolidation queue and the embedding calls, for `/metrics`."""
        return {
            "queue_depth": self.queue.depth(),
            "processed": self.consolidated,
            "failed": self.failures,
            "dropped": self.dropped,
            "embedding_failures": self.embedding_failures,
        }

    # --- consolidation (off the request path) -------------------------------------

    def submit(self, job: ConsolidationJob) -> bool:
        """Queue a job (False: disabled, or dropped by a full queue); never raises or waits."""
        return self.enabled and self.queue.submit(job)

    async def consolidate(self, job: ConsolidationJob) -> list[LongTermItem]:
        """Merge one job into the user's items; returns the rows written."""
        vectors = await self.embedder.job_vectors(job)
        async with self.guard.busy, self._user_lock(job.tenant_id, job.user_id):
            if self.guard.erased_since(job):
                return []  # queued before the user (or the conversation) was erased
            existing = await self.store.load_long_term(job.tenant_id, job.user_id)
            # Pure CPU work over a snapshot: in a thread, so requests are not held up.
            changed = await asyncio.to_thread(merge_job, existing, job, time.time())
            changed = with_vectors(existing, changed, vectors, self.embedding_model)
            await self.store.save_long_term(job.tenant_id, job.user_id, changed)
            return changed

    @asynccontextmanager
    async def _user_lock(self, tenant_id: str, user_id: str) -> AsyncIterator[None]:
        """Across replicas (PostgreSQL): one read-merge-write of a user at a time."""
        locks = self.store.locks
        if locks is None:
            yield
            return
        name = f"long-term:{tenant_id}:{user_id}"
        await locks.acquire(name)
        try:
            yield
        finally:
            locks.release(name)

    # --- operator changes (admin API) ---------------------------------------------

    def operator_change(self) -> AbstractAsyncContextManager[None]:
        """Hold off consolidation while an operator changes a user's items."""
        return self.guard.operator_change()

    async def erase(self, user_id: str, tenant_id: str | None) -> int:
        """Delete a user's items (in one tenant, or in all: None); their queued jobs are
        skipped, and a job in flight finishes first, so nothing it writes survives."""
        async with self.guard.busy:
            self.guard.mark_erased(user_id, tenant_id)
            return await self.store.delete_long_term(user_id, tenant_id=tenant_id)
