"""Shared by the extractor tests: run messages through RuleExtractor like the proxy does."""

from __future__ import annotations

from itertools import count
from typing import Any

from policies.extract.choices import LOOKBACK, answered_list
from policies.extract.extraction import RuleExtractor
from policies.memory.reducer import apply_extraction
from policies.types import Extraction, ExtractionContext, MemoryItem, Turn


def fold_messages(
    messages: list[tuple[str, str]], system: str
) -> tuple[list[MemoryItem], list[Extraction]]:
    """Every (role, text) in order; returns the final items and each extraction."""
    extractor = RuleExtractor()
    ids = count(1)
    items: list[MemoryItem] = []
    extractions: list[Extraction] = []
    user_index = 0
    for ordinal, (role, text) in enumerate(messages):
        raw: dict[str, Any] = {"role": role, "content": text}
        answered = messages[ordinal - 1] if ordinal else ("", "")
        previous = ""
        if role == "user" and answered[0] == "assistant":
            back = messages[max(0, ordinal - 2 * LOOKBACK) : ordinal]
            previous = answered_list([t for r, t in reversed(back) if r == "assistant"], text)
        ctx = ExtractionContext(
            system, tuple(items), user_index, lambda: f"i{next(ids)}", previous=previous
        )
        extraction = extractor.extract(Turn(ordinal, role, text, raw, len(text) // 4), ctx)
        extractions.append(extraction)
        items = apply_extraction(items, extraction, ordinal)
        user_index += role == "user"
    return items, extractions


def active_values(user_lines: list[str], system: str = "You are a helpful assistant.") -> list[str]:
    """Values of the active items after each line is said by the user (answered "OK.")."""
    chat: list[tuple[str, str]] = []
    for text in user_lines:
        chat += [("user", text), ("assistant", "OK.")]
    items, _ = fold_messages(chat, system)
    return [it.value for it in items if it.status == "active"]
