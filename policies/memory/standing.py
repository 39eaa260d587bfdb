"""Which working-memory items earn the block's room, and which only fill it.

The block is shown on every request, so its room is the most contested in
the prompt. What earns it is what the user set or gave: rules (directives,
constraints, goals, the withdrawal of a rule), values (a date, an amount, an
ID, a count), values they revised or fixed mid-sentence, and what is pinned.
A long conversation about the user's life also yields many plain statements
(what they did, liked or felt) that the extractor keeps as facts or
preferences. Each may be true, but
on show for every request they crowd out the turns recalled for the current
input, which answer more questions per token than a fixed list of statements
chosen without looking at the question.

So *incidental* items (the rest) get a share of their own inside the block;
past it they stay in the store and in the turns that the summary and recall
quote. This module decides the kind only; `policies.assemble.layered.memory_block`
applies the share.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from policies.language.segment import self_fixed
from policies.memory.scoring import concrete, is_user_stated
from policies.types import MemoryItem

# Rules, goals, and task state (the withdrawal of a rule: `policies.extract.revision`
# keeps "no need to list tax separately any more" as what holds now).
_STANDING_TYPES = frozenset({"directive", "constraint", "goal", "state"})

T = TypeVar("T")


def is_standing(item: MemoryItem) -> bool:
    """Does `item` earn its place in the block whatever the current input is?"""
    if item.pinned:
        return True
    if not is_user_stated(item):
        return False
    if item.type in _STANDING_TYPES or item.replaces:
        return True
    return concrete(item.value) or self_fixed(item.value)


def cap_incidental(
    ranked: Sequence[T],
    item_of: Callable[[T], MemoryItem],
    tokens_of: Callable[[T], int],
    cap: int,
) -> list[T]:
    """`ranked` in order, incidental entries only while their tokens stay
    within `cap`. Standing entries are never left out here (the block's own
    share decides for them)."""
    kept: list[T] = []
    used = 0
    for entry in ranked:
        if is_standing(item_of(entry)):
            kept.append(entry)
            continue
        size = tokens_of(entry) + 1  # + the newline that joins the lines
        if used + size <= cap:
            kept.append(entry)
            used += size
    return kept
