"""The bounded consolidation queue and its one worker, off the request path."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from proxy.longterm.jobs import ConsolidationJob

log = logging.getLogger("memproxy.longterm")


class ConsolidationQueue:
    """Runs `consolidate` on each submitted job, one at a time; a failure is counted."""

    def __init__(
        self,
        consolidate: Callable[[ConsolidationJob], Awaitable[Any]],
        queue_size: int,
        after_job: Callable[[], None] = lambda: None,
    ) -> None:
        self._consolidate = consolidate
        self._after_job = after_job
        self._pending: collections.deque[float] = collections.deque()  # queued_at, queue order
        self._queue: asyncio.Queue[ConsolidationJob] = asyncio.Queue(maxsize=queue_size)
        self._worker: asyncio.Task[None] | None = None
        self.consolidated = 0  # jobs merged
        self.failures = 0  # jobs that raised (store outage, bug): logged, chat unaffected
        self.dropped = 0  # jobs refused by a full queue

    def depth(self) -> int:
        return self._queue.qsize()

    def oldest_pending(self) -> float:
        """When the oldest job still queued or running was made (inf: none)."""
        return min(self._pending, default=math.inf)

    def submit(self, job: ConsolidationJob) -> bool:
        """Queue a job (False: dropped by a full queue); never raises or waits."""
        try:
            self._queue.put_nowait(job)
            self._pending.append(job.queued_at)
        except asyncio.QueueFull:
            self.dropped += 1
            log.warning("long-term consolidation queue full: job dropped")
            return False
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run())
        return True

    async def _run(self) -> None:
        while True:
            job = await self._queue.get()
            try:
                await self._consolidate(job)
                self.consolidated += 1
            except Exception:
                self.failures += 1
                log.exception("long-term consolidation failed (chat unaffected)")
            finally:
                self._queue.task_done()
                self._pending.popleft()
                self._after_job()

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
