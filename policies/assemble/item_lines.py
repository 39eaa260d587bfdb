"""One memory item as one line: whole, or down to the clauses that state it.

The working-memory block, its delta, replay and the notes in place all show
items this way, so a note that went out earlier can be checked against the
item's current line (`policies.assemble.placed`).
"""

from __future__ import annotations

import re
from dataclasses import replace

from policies.assemble.compact import compact_value, core_value
from policies.memory.reducer import render_item
from policies.memory.scoring import is_user_stated
from policies.types import MemoryItem


def render_item_line(item: MemoryItem) -> str:
    """One item as one line (`policies.memory.reducer.render_item`): the replaced value on
    the new value's line, the source named for anything the user did not say.
    What the user said is shown without its filler clauses (`policies.assemble.compact`)."""
    if is_user_stated(item):
        short = compact_value(item.value)
        if short != item.value:
            item = replace(item, value=short)
    return render_item(item)


# Items whose text is a rule with its reasons around it, or a revised value
# with why it changed. A fact, a name or a goal has no such core: each of
# its clauses may be what is asked back ("…，毕业聚餐已经在湖边那家馆子订了大厅，晚上那场").
_RULE_TYPES = frozenset({"directive", "constraint", "preference", "state"})


def core_text(item: MemoryItem) -> str:
    """A rule or a revised value the user stated, down to the clauses that
    state it (`policies.assemble.compact.core_value`); anything else as `render_item_line` has
    it."""
    if not is_user_stated(item):
        return item.value
    if item.type not in _RULE_TYPES and item.replaces is None:
        return compact_value(item.value)
    return core_value(item.value, item.replaces, slot_terms(item.slot))


def core_line(item: MemoryItem) -> str:
    """`render_item_line` with only the clauses that state the requirement: the
    line of an item the block is short of room for."""
    return render_item(replace(item, value=core_text(item)))


def slot_terms(slot: str) -> tuple[str, ...]:
    """The words an item's slot names it by ("constraint:business-install")."""
    _, _, name = slot.partition(":")
    return tuple(t for t in re.split(r"[-:]", name) if t)
