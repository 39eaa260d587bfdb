"""Request records, written after the response, off the response path.

Records go through a queue to one writer task that inserts them in batches,
so a burst of requests costs one transaction, not one each. `flush()` drains
the queue (shutdown, tests, `eval`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict
from typing import Any

from proxy.redaction import redact_text
from proxy.store.faults import store_fault
from proxy.store.repo import Store

log = logging.getLogger("memproxy.log")

# Requests answered (or being answered) whose record is not written yet, kept so
# that a read of the record can wait for it; bounded, oldest first out.
_EXPECTED_MAX = 10_000
# A record written while the store is locked or full is retried (0.5 s, 1 s
# later) before it is given up: "recorded when possible".
_SAVE_TRIES = 3
CHAT_ROUTE = "/v1/chat/completions"  # the `route` of a record that names none


class RequestLog:
    def __init__(
        self,
        store: Store,
        *,
        store_content: bool,
        secrets: list[str],
        retention_days: int = 0,
    ) -> None:
        self.retention_days = retention_days
        self._purger: asyncio.Task[None] | None = None
        self.store = store
        self.store_content = store_content
        self.secrets = secrets
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._pending = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._expected: OrderedDict[str, asyncio.Event] = OrderedDict()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="request-log-writer")
        if self.retention_days > 0 and self._purger is None:
            self._purger = asyncio.create_task(self._purge_forever(), name="request-log-purge")

    async def purge(self) -> int:
        """Drop records older than `log.retention_days` (0 keeps everything)."""
        if self.retention_days <= 0:
            return 0
        return await self.store.purge_requests(time.time() - self.retention_days * 86400)

    async def _purge_forever(self) -> None:
        while True:
            try:
                removed = await self.purge()
                if removed:
                    log.info("purged %d request records past retention", removed)
            except Exception:  # the store may be briefly unavailable; try again later
                log.exception("request record purge failed")
            await asyncio.sleep(3600)

    def expect(self, request_id: str) -> None:
        """This process will write `request_id`'s record (`wait_for` may wait for it)."""
        self._expected[request_id] = asyncio.Event()
        while len(self._expected) > _EXPECTED_MAX:
            self._expected.popitem(last=False)[1].set()

    async def wait_for(self, request_id: str, timeout_s: float) -> None:
        """Until `request_id`'s record is written, at most `timeout_s`; at once if it is
        not one this process expects (written already, another replica's, unknown)."""
        event = self._expected.get(request_id)
        if event is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout_s)

    def _written(self, batch: list[dict[str, Any]]) -> None:
        for row in batch:
            event = self._expected.pop(str(row.get("id")), None)
            if event is not None:
                event.set()

    def submit(self, row: dict[str, Any]) -> None:
        self._pending += 1
        self._idle.clear()
        self._queue.put_nowait(row)

    def row(self, *, record: dict[str, Any], **columns: Any) -> dict[str, Any]:
        """A `requests` row; the record JSON is redacted and, if asked, content-free."""
        if not self.store_content:
            record = _strip_content(record)
        blob = json.dumps(record, ensure_ascii=False, default=str)
        return {
            **columns,
            # Every row names its route: rows of one batch must have the same keys.
            "route": columns.get("route") or CHAT_ROUTE,
            "created_at": columns.get("created_at") or time.time(),
            "record_json": redact_text(blob, self.secrets),
        }

    async def flush(self) -> None:
        await self._idle.wait()

    async def close(self) -> None:
        if self._purger is not None:
            self._purger.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._purger
            self._purger = None
        await self.flush()
        if self._task is not None:
            self._queue.put_nowait(None)
            await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            first = await self._queue.get()
            if first is None:
                return
            batch = [first]
            while not self._queue.empty() and len(batch) < 200:
                nxt = self._queue.get_nowait()
                if nxt is None:
                    self._queue.put_nowait(None)
                    break
                batch.append(nxt)
            await self._save(batch)
            self._written(batch)
            self._pending -= len(batch)
            if self._pending <= 0:
                self._pending = 0
                self._idle.set()

    async def _save(self, batch: list[dict[str, Any]]) -> None:
        """Write a batch; while the store is unavailable, try again a few times."""
        for attempt in range(_SAVE_TRIES):
            try:
                await self.store.save_requests(batch)
                return
            except Exception as exc:  # a lost log line must never break chat
                if attempt + 1 < _SAVE_TRIES and store_fault(exc) is not None:
                    await asyncio.sleep(0.5 * 2**attempt)
                    continue
                log.exception("could not write %d request records", len(batch))
                return


def _strip_content(record: dict[str, Any]) -> dict[str, Any]:
    """Keep counts and hashes only (log.store_content = false)."""
    out = dict(record)
    for key in ("forwarded", "response", "raw_messages", "shadow_messages", "compare"):
        if key in out:
            out[key] = {"omitted": True}
    return out
