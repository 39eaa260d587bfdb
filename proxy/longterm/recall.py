"""Backfill, on the request path: the background lines from a user's long-term items."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from policies.assemble.budget import split_mandatory
from policies.llm.calls import PolicyCall
from policies.longterm.backfill import Backfill, backfill_cap, plan_backfill
from policies.longterm.relevance import BackfillQuery
from policies.types import Candidate, MemoryItem, TokenCounter, Turn
from proxy.longterm.jobs import Vector

if TYPE_CHECKING:
    from proxy.longterm.memory import LongTermMemory

log = logging.getLogger("memproxy.longterm")


def _failed(reason: str) -> Backfill:
    """No background this time, and the request record says why."""
    return Backfill(candidates=[Candidate("longterm", "store", 0, 0.0, "dropped", reason)])


class Recall:
    """`LongTermMemory.backfill`: reads the user's items within the memory's timeout,
    embeds the input when that helps, and lets the policy pick the lines."""

    def __init__(self, memory: LongTermMemory) -> None:
        self._memory = memory

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
        memory = self._memory
        if not memory.enabled or user_id is None:
            return None
        system, _, tail = split_mandatory(list(turns))
        mandatory = sum(t.tokens for t in (*system, *tail))
        cap = backfill_cap(budget, mandatory, memory.params)
        if cap <= 0:
            return Backfill()
        try:
            rows = await asyncio.wait_for(
                memory.store.load_long_term(tenant_id, user_id, active_only=True),
                memory.read_timeout_s,
            )
        except Exception as exc:  # any store failure: no background, the chat goes on
            log.warning("long-term read failed for a user: %r", exc)
            return _failed(f"long-term store unavailable: {type(exc).__name__}")
        text = "\n".join(t.text for t in tail if t.role == "user")
        vector: Vector | None = None
        embedded = memory.embedder.has_embedded(rows, session_id)
        if memory.embedder.embed is not None and text.strip() and embedded:
            ordinal = tail[-1].ordinal if tail else 0
            found = await memory.embedder.vectors_of(
                [text], "embedding:input", ordinal, calls if calls is not None else []
            )
            vector = found[0] if found else None
        query = BackfillQuery(
            text=text,
            items=items,
            system="\n".join(t.text for t in system),
            session_id=session_id,
            vector=vector,
            vector_model=memory.embedding_model,
        )
        try:
            return plan_backfill(rows, query, cap, memory.params, count)
        except Exception as exc:  # a bug in the policy must not cost the user an answer
            log.exception("long-term backfill failed (chat unaffected)")
            return _failed(f"long-term backfill failed: {type(exc).__name__}")
