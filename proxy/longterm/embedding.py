"""Embedding calls for long-term memory: the request's input, and a job's items."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from policies.llm.calls import PolicyCall
from policies.longterm.candidates import consolidation_candidates
from policies.longterm.items import LongTermItem
from proxy.longterm.jobs import ConsolidationJob, Embed, Vector
from proxy.store.repo import Store

log = logging.getLogger("memproxy.longterm")

# At most this many texts are embedded for one job (one call); the rest wait for the next.
_EMBED_BATCH = 64


class Embedder:
    """`embed` with a timeout and a recorded call; any failure leaves retrieval lexical."""

    def __init__(
        self, store: Store, embed: Embed | None, model: str | None, timeout_s: float
    ) -> None:
        self.store = store
        self.embed = embed if model else None
        self.model = model
        self.timeout_s = timeout_s
        self.failures = 0  # embedding calls that failed: retrieval stayed lexical

    async def vectors_of(
        self, texts: list[str], policy: str, ordinal: int, calls: list[PolicyCall]
    ) -> list[Vector] | None:
        """Vectors of `texts`, the call recorded in `calls`; None on any failure."""
        assert self.embed is not None
        started = time.perf_counter()
        call = PolicyCall(policy, ordinal, attempts=1)
        try:
            reply = await asyncio.wait_for(self.embed(texts), self.timeout_s)
            if len(reply.vectors) != len(texts):
                raise ValueError("wrong number of vectors")
        except Exception as exc:  # a failed or slow embedding: lexical retrieval only
            self.failures += 1
            call.outcome = f"fallback: lexical ({type(exc).__name__})"
            log.warning("embedding failed, retrieval stays lexical: %r", exc)
            return None
        finally:
            call.ms = round((time.perf_counter() - started) * 1000, 1)
            calls.append(call)
        call.prompt_tokens, call.cost = reply.prompt_tokens, reply.cost
        return [tuple(v) for v in reply.vectors]

    def has_embedded(self, rows: Sequence[LongTermItem], session_id: str) -> bool:
        """Whether another conversation left a row embedded with this model."""
        return any(
            r.embedding is not None
            and r.embedding_model == self.model
            and r.source_session_id != session_id
            for r in rows
        )

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
                r.value for r in rows if r.embedding is not None and r.embedding_model == self.model
            }
            wanted = [p.item.value for p in picks] + [r.value for r in rows]
            texts = list(dict.fromkeys(v for v in wanted if v not in known))[:_EMBED_BATCH]
            if texts:
                ordinal = job.turns[-1].ordinal if job.turns else 0
                found = await self.vectors_of(texts, "embedding:items", ordinal, calls)
                vectors = dict(zip(texts, found, strict=True)) if found else {}
        except Exception:
            log.exception("embedding a consolidation job failed (retrieval stays lexical)")
        finally:
            if job.vectors is not None and not job.vectors.done():
                job.vectors.set_result(vectors)

    async def job_vectors(self, job: ConsolidationJob) -> dict[str, Vector]:
        """The vectors `embed_job` resolved for `job` (empty: none, or it never ran)."""
        vectors: dict[str, Vector] = {}
        if job.vectors is not None:
            # Resolved by `embed_job` after the response; bounded in case it never ran.
            with contextlib.suppress(Exception):
                vectors = await asyncio.wait_for(asyncio.shield(job.vectors), self.timeout_s + 5)
        return vectors
