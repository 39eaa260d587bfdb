"""Working memory of sessions: extract from new turns, persist graded forgetting.

Runs under the session's ticket, so a session's items are only ever changed by
one request at a time, in request order. The items are held, with their
exposure not saved yet, by `proxy.item_cache.ItemCache`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence

from policies.base import ExtractionPolicy
from policies.extract.choices import LOOKBACK, answered_list
from policies.hybrid import HybridExtractor
from policies.llm.calls import PolicyCall
from policies.llm.extractor import LLMExtractor
from policies.memory.forgetting import apply_tiers
from policies.memory.reducer import apply_extraction, rollback
from policies.types import (
    Extraction,
    ExtractionContext,
    MemoryItem,
    Turn,
)
from proxy.ids import new_id
from proxy.item_cache import ItemCache
from proxy.store.repo import Store

_EXTRACTED_ROLES = frozenset({"user", "assistant", "tool"})


def _previous(turns: Sequence[Turn], index: int) -> str:
    """The assistant message a user turn answers ("the second one" points into it)."""
    if not index or turns[index].role != "user" or turns[index - 1].role != "assistant":
        return ""
    back = [t.text for t in reversed(turns[max(0, index - 2 * LOOKBACK) : index])
            if t.role == "assistant"]  # fmt: skip
    return answered_list(back, turns[index].text)


# A message longer than this is a pasted document or log, not a statement of
# requirements; only its head and tail (where people say what they want) are
# read by the extractor, which keeps extraction time bounded per message.
_EXTRACT_HEAD, _EXTRACT_TAIL = 6000, 2000


def _bounded(turn: Turn) -> Turn:
    if len(turn.text) <= _EXTRACT_HEAD + _EXTRACT_TAIL:
        return turn
    text = f"{turn.text[:_EXTRACT_HEAD]}\n{turn.text[-_EXTRACT_TAIL:]}"
    return Turn(
        turn.ordinal, turn.role, text, turn.raw, turn.tokens, turn.tool_call_ids, turn.tool_call_id
    )


def _fingerprint(item: MemoryItem) -> tuple[object, ...]:
    return (
        item.status,
        item.value,
        item.superseded_by,
        item.replaces,
        item.pinned,
        item.importance,
        len(item.versions),
    )


class MemoryState:
    def __init__(self, store: Store, cache_sessions: int = 2000) -> None:
        self.store = store
        self.cache = ItemCache(store, cache_sessions)

    def invalidate(self, session_id: str) -> None:
        self.cache.invalidate(session_id)

    async def items(self, session_id: str) -> list[MemoryItem]:
        return await self.cache.items(session_id)

    def peek(self, session_id: str) -> list[MemoryItem] | None:
        """The session's items if held here (no store read), else None."""
        return self.cache.peek(session_id)

    def mark_used(self, session_id: str, item_ids: Sequence[str], ordinal: int) -> None:
        """Exposure and recency feed the scoring of later requests (saved lazily)."""
        self.cache.mark_used(session_id, item_ids, ordinal)

    async def flush(self, session_id: str) -> None:
        await self.cache.flush(session_id)

    async def flush_all(self) -> None:
        await self.cache.flush_all()

    async def extract(
        self,
        session_id: str,
        extractor: ExtractionPolicy,
        turns: Sequence[Turn],
        start: int,
        system_prompt: str,
        before_save: Callable[[], Awaitable[None]] | None = None,
    ) -> list[tuple[int, Extraction]]:
        """Fold the extractor over turns[start:]; persist changed items once.

        `before_save` is awaited before anything is written (the turns the items
        come from must be stored first)."""
        items = list(await self.items(session_id))
        before = {i.id: _fingerprint(i) for i in items}
        results: list[tuple[int, Extraction]] = []
        for index, user_index in _extracted(turns, start):
            turn = turns[index]
            ctx = _context(system_prompt, items, user_index, turns, index)
            extraction = extractor.extract(_bounded(turn), ctx)
            results.append((turn.ordinal, extraction))
            if extraction.ops:
                items = apply_extraction(items, extraction, turn.ordinal)
        self.cache.remember(session_id, items)
        changed = {i.id for i in items if before.get(i.id) != _fingerprint(i)}
        await self.cache.save(session_id, changed, before_save)
        return results

    async def reextract(
        self,
        session_id: str,
        extractor: LLMExtractor,
        turns: Sequence[Turn],
        start: int,
        system_prompt: str,
    ) -> tuple[bool, list[PolicyCall]]:
        """Redo the extraction of turns[start:] with the LLM extractor (off the response path).

        The rules already extracted them on the response path; their effects
        are rolled back and the model's applied instead. If every model call
        fell back to the rules, nothing is changed (same result, same item
        ids, so the memory layout stays stable). Returns (changed, calls).
        """
        current = list(await self.items(session_id))
        items = rollback(current, start)
        calls: list[PolicyCall] = []
        for index, user_index in _extracted(turns, start):
            turn = turns[index]
            ctx = _context(system_prompt, items, user_index, turns, index)
            extraction, call = await extractor.extract_async(turn, ctx)
            if call is not None:
                calls.append(call)
            if extraction.ops:
                items = apply_extraction(items, extraction, turn.ordinal)
        if not any(c.outcome == "ok" for c in calls):
            return False, calls
        await self.cache.replace(session_id, items)
        return True, calls

    async def refine(
        self,
        session_id: str,
        hybrid: HybridExtractor,
        turns: Sequence[Turn],
        start: int,
        system_prompt: str,
    ) -> tuple[bool, list[PolicyCall]]:
        """Read turns[start:] again with the hybrid extractor (off the response path).

        The rules already extracted them on the response path; the hybrid asks
        the model about their uncertain links once and, if a verdict changes
        an op, their effects are rolled back and the refolded items saved.
        Otherwise nothing is changed (same items, same ids). Returns (changed,
        calls)."""
        steps = list(_extracted(turns, start))
        if not steps:
            return False, []
        items = rollback(list(await self.items(session_id)), start)

        def context(held: Sequence[MemoryItem], k: int) -> ExtractionContext:
            index, user_index = steps[k]
            return _context(system_prompt, list(held), user_index, turns, index)

        chosen = [_bounded(turns[index]) for index, _ in steps]
        refined = await hybrid.refine(chosen, items, context)
        calls = [refined.call] if refined.call is not None else []
        if not refined.changed:
            return False, calls
        await self.cache.replace(session_id, refined.items)
        return True, calls

    async def set_tiers(
        self,
        session_id: str,
        archive: Sequence[str],
        repromote: Sequence[str],
        ordinal: int,
    ) -> list[str]:
        """Persist graded forgetting: archive faded items, re-promote mentioned ones
        (`policies.memory.forgetting.apply_tiers`). Returns changed ids."""
        items = await self.items(session_id)
        changed = apply_tiers(items, archive, repromote, ordinal)
        if changed:
            await self.cache.save(session_id, set(changed))
        return changed


def _extracted(turns: Sequence[Turn], start: int) -> Iterator[tuple[int, int]]:
    """(index, user turns before it) of each turn from `start` the extractor reads."""
    user_index = sum(1 for t in turns[:start] if t.role == "user")
    for index in range(start, len(turns)):
        role = turns[index].role
        if role in _EXTRACTED_ROLES:
            yield index, user_index
        user_index += role == "user"


def _context(
    system_prompt: str, items: list[MemoryItem], user_index: int, turns: Sequence[Turn], index: int
) -> ExtractionContext:
    return ExtractionContext(
        system_prompt=system_prompt,
        items=tuple(items),
        user_turn_index=user_index,
        new_id=new_id,
        previous=_previous(turns, index),
    )
