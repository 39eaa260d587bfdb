"""A consolidation job, how it merges into a user's rows, and the shared types."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.longterm.candidates import consolidation_candidates
from policies.longterm.items import LongTermItem
from policies.longterm.merge import merge_items
from policies.longterm.retire import retire_revoked
from policies.types import MemoryItem, Turn
from proxy.ids import new_id

Vector = tuple[float, ...]


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


def with_vectors(
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


def merge_job(
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
