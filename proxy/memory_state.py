"""Working memory of sessions: load (cached), extract from new turns, persist.

Runs under the session's ticket, so a session's items are only ever changed by
one request at a time, in request order.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from policies.base import ExtractionPolicy
from policies.memory import apply_extraction
from policies.types import Extraction, ExtractionContext, MemoryItem, Turn
from proxy.ids import new_id
from proxy.store.repo import Store

_USER_LIKE = frozenset({"user", "assistant", "tool"})


class MemoryState:
    def __init__(self, store: Store, cache_sessions: int = 2000) -> None:
        self.store = store
        self._cache: OrderedDict[str, list[MemoryItem]] = OrderedDict()
        self._cache_sessions = cache_sessions

    def invalidate(self, session_id: str) -> None:
        self._cache.pop(session_id, None)

    async def items(self, session_id: str) -> list[MemoryItem]:
        cached = self._cache.get(session_id)
        if cached is None:
            cached = await self.store.load_items(session_id)
            self._remember(session_id, cached)
        else:
            self._cache.move_to_end(session_id)
        return cached

    def _remember(self, session_id: str, items: list[MemoryItem]) -> None:
        self._cache[session_id] = items
        self._cache.move_to_end(session_id)
        while len(self._cache) > self._cache_sessions:
            self._cache.popitem(last=False)

    async def extract(
        self,
        session_id: str,
        extractor: ExtractionPolicy,
        turns: Sequence[Turn],
        start: int,
        system_prompt: str,
    ) -> list[tuple[int, Extraction]]:
        """Fold the extractor over turns[start:]; persist changed items once."""
        items = list(await self.items(session_id))
        before = {i.id: _fingerprint(i) for i in items}
        user_index = sum(1 for t in turns[:start] if t.role == "user")
        results: list[tuple[int, Extraction]] = []
        for turn in turns[start:]:
            if turn.role not in _USER_LIKE:
                continue
            ctx = ExtractionContext(
                system_prompt=system_prompt,
                items=tuple(items),
                user_turn_index=user_index,
                new_id=new_id,
            )
            extraction = extractor.extract(turn, ctx)
            results.append((turn.ordinal, extraction))
            if extraction.ops:
                items = apply_extraction(items, extraction, turn.ordinal)
            if turn.role == "user":
                user_index += 1
        changed = [i for i in items if before.get(i.id) != _fingerprint(i)]
        if changed:
            await self.store.save_items(session_id, changed)
        self._remember(session_id, items)
        return results

    async def mark_used(self, session_id: str, item_ids: Sequence[str], ordinal: int) -> None:
        """Exposure and recency feed the scoring of later requests."""
        if not item_ids:
            return
        wanted = set(item_ids)
        items = await self.items(session_id)
        touched = []
        for item in items:
            if item.id in wanted:
                item.exposure += 1
                item.last_used_ordinal = ordinal
                touched.append(item)
        await self.store.save_items(session_id, touched)


def _fingerprint(item: MemoryItem) -> tuple[object, ...]:
    return (
        item.id,
        item.status,
        item.value,
        item.superseded_by,
        item.replaces,
        item.pinned,
        item.exposure,
        item.last_used_ordinal,
        len(item.versions),
    )
