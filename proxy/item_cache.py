"""The sessions' memory items held in memory, and their exposure not saved yet.

Runs under the session's ticket (`proxy.memory_state`). Exposure counters
(how often an item was shown) change on every request; they are kept here
and written with the next batch of item changes rather than costing a
transaction each. The least recently used sessions are let go past
`cache_sessions`; their unsaved exposure with them (it is advisory).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence

from policies.types import MemoryItem
from proxy.store.repo import Store


class ItemCache:
    def __init__(self, store: Store, cache_sessions: int = 2000) -> None:
        self.store = store
        self._cache: OrderedDict[str, list[MemoryItem]] = OrderedDict()
        self._dirty: dict[str, set[str]] = {}  # session -> item ids with unsaved exposure
        self._cache_sessions = cache_sessions

    def invalidate(self, session_id: str) -> None:
        self._cache.pop(session_id, None)
        self._dirty.pop(session_id, None)

    async def items(self, session_id: str) -> list[MemoryItem]:
        cached = self._cache.get(session_id)
        if cached is None:
            cached = await self.store.load_items(session_id)
            self.remember(session_id, cached)
        else:
            self._cache.move_to_end(session_id)
        return cached

    def peek(self, session_id: str) -> list[MemoryItem] | None:
        """The session's items if held here (no store read), else None."""
        if session_id in self._dirty:
            return None  # unsaved exposure: the held items differ from the stored ones
        return self._cache.get(session_id)

    def remember(self, session_id: str, items: list[MemoryItem]) -> None:
        self._cache[session_id] = items
        self._cache.move_to_end(session_id)
        while len(self._cache) > self._cache_sessions:
            evicted, _ = self._cache.popitem(last=False)
            self._dirty.pop(evicted, None)  # exposure is advisory; losing it is harmless

    async def replace(self, session_id: str, items: list[MemoryItem]) -> None:
        """Hold and store `items` as the session's whole memory (unsaved exposure included)."""
        self.remember(session_id, items)
        self._dirty.pop(session_id, None)
        await self.store.replace_items(session_id, items)

    def mark_used(self, session_id: str, item_ids: Sequence[str], ordinal: int) -> None:
        """Exposure and recency feed the scoring of later requests (saved lazily)."""
        items = self._cache.get(session_id)
        if not items or not item_ids:
            return
        wanted = set(item_ids)
        for item in items:
            if item.id in wanted:
                item.exposure += 1
                item.last_used_ordinal = ordinal
        self._dirty.setdefault(session_id, set()).update(wanted)

    async def flush(self, session_id: str) -> None:
        await self.save(session_id, set())

    async def flush_all(self) -> None:
        for session_id in list(self._dirty):
            await self.flush(session_id)

    async def save(
        self,
        session_id: str,
        changed: set[str],
        before_save: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Store the `changed` items and those with unsaved exposure, if any.

        `before_save` is awaited first, and only when something is written."""
        ids = changed | self._dirty.get(session_id, set())
        if not ids:
            return
        if before_save is not None:
            await before_save()
        self._dirty.pop(session_id, None)
        items = self._cache.get(session_id) or []
        await self.store.save_items(session_id, [i for i in items if i.id in ids])
