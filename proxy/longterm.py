"""Long-term memory across a user's conversations: the proxy side.

A user scope comes from `X-Memory-User`, else the request's `user` field;
without one nothing crosses conversations. It is always inside the caller's
tenant. Two paths:

- Backfill, on the request path: the user's items are read (with a timeout)
  and `policies.longterm.backfill` picks the background lines. A store error or a slow
  read only means no background this time: the chat goes on.
- Consolidation, off it: after a request's memory work, a job with a snapshot
  of the session's items and the turns goes to a bounded queue; one worker
  merges it into the user's items (`policies.longterm.consolidate`). A failure is logged
  and counted; it never reaches a chat request. A full queue drops the job
  (the next request of the session brings the same items again).

Operator changes to a user's items wait for the job in flight (the worker
runs one at a time), and an erasure also discards the user's queued jobs.
On PostgreSQL, several replicas may consolidate the same user at once: each
job's read-merge-write holds an advisory lock named after the user, so none
of them merges into a stale copy (which would duplicate or lose items).

With `embedding_model`, retrieval also goes by meaning. The input is embedded
on the request path (only when the user has embedded items), within
`embedding_timeout_s`; the items a job consolidates are embedded after the
response, before the request is recorded, so both calls are recorded with the
request that caused them. Any embedding failure leaves retrieval lexical.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from policies.assemble.budget import split_mandatory
from policies.llm import PolicyCall
from policies.longterm.backfill import Backfill, BackfillQuery, backfill_cap, plan_backfill
from policies.longterm.consolidate import (
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

Vector = tuple[float, ...]
# At most this many texts are embedded for one job (one call); the rest wait for the next.
_EMBED_BATCH = 64


@dataclass(frozen=True, slots=True)
class EmbeddingReply:
    vectors: list[list[float]]
    prompt_tokens: int
    cost: float | None


# `embed(texts) -> vectors`, injected: `proxy.upstream` is the one module that calls out.
Embed = Callable[[list[str]], Awaitable[EmbeddingReply]]


def user_scope(header: str | None, params: Mapping[str, Any]) -> str | None:
    """`X-Memory-User`, else the request's `user` field, else None (no long-term memory)."""
    if header and header.strip():
        return header.strip()
    user = params.get("user")
    if isinstance(user, str) and user.strip():
        return user.strip()
    return None


def _drop_older(marks: dict[Any, float], oldest: float) -> None:
    """Drop the leading marks (oldest first) made before `oldest`."""
    while marks:
        key, when = next(iter(marks.items()))
        if when >= oldest:
            return
        del marks[key]


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
    # With an embedding model: the vectors of the values it consolidates (value ->
    # vector), resolved after the response; the worker waits for them in turn.
    vectors: asyncio.Future[dict[str, Vector]] | None = field(default=None, compare=False)


def _failed(reason: str) -> Backfill:
    """No background this time, and the request record says why."""
    return Backfill(candidates=[Candidate("longterm", "store", 0, 0.0, "dropped", reason)])


def _with_vectors(
    existing: Sequence[LongTermItem],
    changed: list[LongTermItem],
    vectors: Mapping[str, Vector],
    model: str | None,
) -> list[LongTermItem]:
    """`changed`, each row given its value's vector when it has none (or another
    model's), plus the unchanged active rows that gain one (an operator's edit)."""
    if not vectors or model is None:
        return changed
    out = {r.id: r for r in changed}
    for row in [*changed, *(r for r in existing if r.id not in out and r.status == "active")]:
        vector = vectors.get(row.value)
        if vector is not None and (row.embedding is None or row.embedding_model != model):
            row.embedding, row.embedding_model = vector, model
            out[row.id] = row
    return list(out.values())


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
        embed: Embed | None = None,
        embedding_model: str | None = None,
        embedding_timeout_s: float = 1.0,
    ) -> None:
        self.store = store
        self.params = params
        self.enabled = enabled
        self.read_timeout_s = read_timeout_s
        self.embed = embed if embedding_model else None
        self.embedding_model = embedding_model
        self.embedding_timeout_s = embedding_timeout_s
        self._queue: asyncio.Queue[ConsolidationJob] = asyncio.Queue(maxsize=queue_size)
        self._worker: asyncio.Task[None] | None = None
        # Held by the worker for each job and by operator changes: one job runs at a
        # time anyway, and a change never interleaves with a job's read-merge-write.
        self._busy = asyncio.Lock()
        # Deletion marks, oldest first: a queued job older than a mark is skipped.
        # Kept only while a job older than them is queued or running (`_prune_marks`),
        # so they are bounded by the deletions made while the queue is busy.
        self._erased: dict[tuple[str | None, str], float] = {}  # (tenant or all, user) -> when
        self._deleted_sessions: dict[str, float] = {}  # session id -> when
        self._pending: collections.deque[float] = collections.deque()  # queued_at, queue order
        self.consolidated = 0  # jobs merged
        self.failures = 0  # jobs that raised (store outage, bug): logged, chat unaffected
        self.dropped = 0  # jobs refused by a full queue
        self.embedding_failures = 0  # embedding calls that failed: retrieval stayed lexical

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

    def stats(self) -> dict[str, int]:
        """The consolidation queue and the embedding calls, for `/metrics`."""
        return {
            "queue_depth": self._queue.qsize(),
            "processed": self.consolidated,
            "failed": self.failures,
            "dropped": self.dropped,
            "embedding_failures": self.embedding_failures,
        }

    # --- embeddings -----------------------------------------------------------------

    async def _embed(
        self, texts: list[str], policy: str, ordinal: int, calls: list[PolicyCall]
    ) -> list[Vector] | None:
        """Vectors of `texts`, the call recorded in `calls`; None on any failure."""
        assert self.embed is not None
        started = time.perf_counter()
        call = PolicyCall(policy, ordinal, attempts=1)
        try:
            reply = await asyncio.wait_for(self.embed(texts), self.embedding_timeout_s)
            if len(reply.vectors) != len(texts):
                raise ValueError("wrong number of vectors")
        except Exception as exc:  # a failed or slow embedding: lexical retrieval only
            self.embedding_failures += 1
            call.outcome = f"fallback: lexical ({type(exc).__name__})"
            log.warning("embedding failed, retrieval stays lexical: %r", exc)
            return None
        finally:
            call.ms = round((time.perf_counter() - started) * 1000, 1)
            calls.append(call)
        call.prompt_tokens, call.cost = reply.prompt_tokens, reply.cost
        return [tuple(v) for v in reply.vectors]

    def new_job_vectors(self) -> asyncio.Future[dict[str, Vector]] | None:
        """A placeholder for a job's vectors (None: no embedding model)."""
        return asyncio.get_running_loop().create_future() if self.embed else None

    async def embed_job(self, job: ConsolidationJob, calls: list[PolicyCall]) -> None:
        """Embed what `job` will consolidate and the user's rows that lack a vector.

        Always resolves `job.vectors` (empty on failure): the worker waits for it.
        """
        vectors: dict[str, Vector] = {}
        try:
            if job.vectors is None or job.vectors.done():
                return
            picks = await asyncio.to_thread(consolidation_candidates, job.items, job.turns)
            rows = await self.store.load_long_term(job.tenant_id, job.user_id, active_only=True)
            known = {
                r.value
                for r in rows
                if r.embedding is not None and r.embedding_model == self.embedding_model
            }
            wanted = [p.item.value for p in picks] + [r.value for r in rows]
            texts = list(dict.fromkeys(v for v in wanted if v not in known))[:_EMBED_BATCH]
            if texts:
                ordinal = job.turns[-1].ordinal if job.turns else 0
                found = await self._embed(texts, "embedding:items", ordinal, calls)
                vectors = dict(zip(texts, found, strict=True)) if found else {}
        except Exception:
            log.exception("embedding a consolidation job failed (retrieval stays lexical)")
        finally:
            if job.vectors is not None and not job.vectors.done():
                job.vectors.set_result(vectors)

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
        calls: list[PolicyCall] | None = None,
    ) -> Backfill | None:
        """The background block for this request (`turns`: system and conversation);
        None when there is no user scope. An embedding call is appended to `calls`."""
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
        text = "\n".join(t.text for t in tail if t.role == "user")
        vector = None
        embedded = any(
            r.embedding is not None
            and r.embedding_model == self.embedding_model
            and r.source_session_id != session_id
            for r in rows
        )
        if self.embed is not None and text.strip() and embedded:
            ordinal = tail[-1].ordinal if tail else 0
            found = await self._embed(
                [text], "embedding:input", ordinal, calls if calls is not None else []
            )
            vector = found[0] if found else None
        query = BackfillQuery(
            text=text,
            items=items,
            system="\n".join(t.text for t in system),
            session_id=session_id,
            vector=vector,
            vector_model=self.embedding_model,
        )
        try:
            return plan_backfill(rows, query, cap, self.params, count)
        except Exception as exc:  # a bug in the policy must not cost the user an answer
            log.exception("long-term backfill failed (chat unaffected)")
            return _failed(f"long-term backfill failed: {type(exc).__name__}")

    # --- consolidation (off the request path) -------------------------------------

    def submit(self, job: ConsolidationJob) -> bool:
        """Queue a job (False: disabled, or dropped by a full queue); never raises or waits."""
        if not self.enabled:
            return False
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
                await self.consolidate(job)
                self.consolidated += 1
            except Exception:
                self.failures += 1
                log.exception("long-term consolidation failed (chat unaffected)")
            finally:
                self._queue.task_done()
                self._pending.popleft()
                self._prune_marks()

    async def consolidate(self, job: ConsolidationJob) -> list[LongTermItem]:
        """Merge one job into the user's items; returns the rows written."""
        vectors: dict[str, Vector] = {}
        if job.vectors is not None:
            # Resolved by `embed_job` after the response; bounded in case it never ran.
            with contextlib.suppress(Exception):
                vectors = await asyncio.wait_for(
                    asyncio.shield(job.vectors), self.embedding_timeout_s + 5
                )
        async with self._busy, self._user_lock(job.tenant_id, job.user_id):
            if self._erased_since(job):
                return []  # queued before the user (or the conversation) was erased
            existing = await self.store.load_long_term(job.tenant_id, job.user_id)
            # Pure CPU work over a snapshot: in a thread, so requests are not held up.
            changed = await asyncio.to_thread(_merge_job, existing, job, time.time())
            changed = _with_vectors(existing, changed, vectors, self.embedding_model)
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
            self._erased.pop((tenant_id, user_id), None)
            self._erased[(tenant_id, user_id)] = time.monotonic()
            self._prune_marks()
            return await self.store.delete_long_term(user_id, tenant_id=tenant_id)

    def forget_session(self, session_id: str) -> None:
        """A deleted conversation: its queued jobs are skipped (they would bring back
        what the deletion took from long-term memory). Call under `operator_change`."""
        self._deleted_sessions.pop(session_id, None)
        self._deleted_sessions[session_id] = time.monotonic()
        self._prune_marks()

    def _prune_marks(self) -> None:
        """Drop the marks older than every job still queued or running: no job they
        could skip is left (a later job is queued after them), and none will be."""
        oldest = min(self._pending, default=math.inf)
        _drop_older(self._erased, oldest)
        _drop_older(self._deleted_sessions, oldest)

    def marks(self) -> int:
        """Deletion marks held (bounded by the deletions made while jobs are queued)."""
        return len(self._erased) + len(self._deleted_sessions)

    def _erased_since(self, job: ConsolidationJob) -> bool:
        marks = (
            self._erased.get((job.tenant_id, job.user_id)),
            self._erased.get((None, job.user_id)),
            self._deleted_sessions.get(job.session_id),
        )
        return any(m is not None and m >= job.queued_at for m in marks)
