"""Which recent turns go out verbatim in a layered context, and when to compact.

Every group since the last compaction is kept while they fit the high-water
mark; past it, the window shrinks to the low-water mark and the turns before
it are to be summarised (`compact_upto`). So between compactions each prompt
is the previous one plus the new turns.
"""

from __future__ import annotations

from collections.abc import Sequence

from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.budget import (
    RecentWindow,
    group_tokens,
    is_forwardable,
    select_recent_groups,
)
from policies.assemble.params import LayeredParams
from policies.types import Turn


def latest_user_group(groups: Sequence[Sequence[Turn]], tail: Sequence[Turn]) -> int | None:
    """In a tool loop the tail opens on a tool call; its user request is in history."""
    if not tail or tail[0].role == "user":
        return None
    return next((i for i in range(len(groups) - 1, -1, -1) if groups[i][0].role == "user"), None)


def recent_window(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    room: int,
    p: LayeredParams,
    extra: Sequence[int] | None = None,
) -> tuple[RecentWindow, int | None]:
    """Every group since the last compaction while they fit; else compact.

    Returns the window and, when the groups exceed the high-water mark, the
    ordinal up to which the turns should now be summarised (the window then
    holds what fits the low-water mark).
    """
    pin = latest_user_group(groups, inp.tail)
    total = sum(group_tokens(g) for g in groups if is_forwardable(g)) + sum(extra or ())
    if total <= room * p.high_water:
        return select_recent_groups(groups, room, pin=pin, extra=extra), None
    window = select_recent_groups(groups, max(0, int(room * p.low_water)), pin=pin, extra=extra)
    kept = [i for i in window.kept if i != pin]
    if kept:
        first = groups[kept[0]][0].ordinal
    else:
        first = inp.tail[0].ordinal if inp.tail else inp.current_ordinal + 1
    if groups and first <= groups[0][0].ordinal:
        return window, None  # nothing older to summarise
    return window, first


def over_high_water(
    groups: Sequence[Sequence[Turn]], with_notes: Sequence[int], room: int, p: LayeredParams
) -> int:
    """Tokens by which the recent turns and their notes exceed the high-water mark."""
    total = sum(group_tokens(g) for g in groups if is_forwardable(g)) + sum(with_notes)
    return total - int(room * p.high_water)
