"""Which long-term item a kept working-memory item restates or revises.

An equal value restates a row; otherwise the revision rules of extraction (the
linking chain, `link_statements`) read the item's text against the rows
sharing a word with it, as if they were live user items; failing that, a row
on the same named slot of the same family is its target.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from policies.extract.linking import link_statements
from policies.extract.statements import read_statements
from policies.language.matching import content_terms, key_terms
from policies.language.text import normalize
from policies.longterm.candidates import FACT_TYPES, Pick
from policies.longterm.items import LongTermItem
from policies.memory.slots import NAMED_SLOTS
from policies.types import RULE_TYPES, Confirm, Conflict, ItemType, MemoryItem, Supersede

# What a user asks for: a rule, or (in the conversation at hand) the request itself.
_RULE_LIKE: frozenset[ItemType] = RULE_TYPES | {"goal"}
DUPLICATE_MIN = 0.8


def as_memory_item(row: LongTermItem) -> MemoryItem:
    """A long-term row seen by the revision rules as if it were a live user item."""
    return MemoryItem(row.id, row.type, row.slot, row.value, "user", 0)


def semantic_slot(slot: str) -> bool:
    """A slot that names a subject ("diet", "directive:ship-standard") or an entity
    ("id:HK-55817"), not just a kind of value ("date", "money:元"), which would merge
    unrelated things."""
    head = slot.split(":", 1)[0]
    return slot in NAMED_SLOTS or (":" in slot and head in RULE_TYPES | FACT_TYPES | {"id"})


def same_family(a: ItemType, b: ItemType) -> bool:
    """Rules with rules, facts with facts: "I'm learning Japanese" shares the slot
    "language" with "reply in French" without replacing it."""
    return (a in _RULE_LIKE) == (b in _RULE_LIKE)


def _statement_ops(
    text: str, live: Sequence[MemoryItem], new_id: Callable[[], str]
) -> list[object]:
    statements = read_statements(text, key_terms(text), opening=True)
    if not statements or not live:
        return []
    return list(link_statements(statements, live, text, 1, new_id))


def target_row(pick: Pick, rows: Sequence[LongTermItem]) -> tuple[LongTermItem, bool] | None:
    """The active row `pick` restates (True) or revises (False), if any."""
    value = normalize(pick.item.value)
    for row in rows:
        if normalize(row.value) == value:
            return row, True
    # Only rows sharing a word can be its target: the revision rules see just those.
    terms = content_terms(pick.item.value).keys()
    live = [as_memory_item(r) for r in rows if not terms.isdisjoint(content_terms(r.value))]
    by_id = {r.id: r for r in rows}
    for op in _statement_ops(pick.item.value, live, lambda: "new"):
        if isinstance(op, Confirm) and op.item_id in by_id:
            return by_id[op.item_id], True
        if isinstance(op, Supersede | Conflict) and op.old_id in by_id:
            return by_id[op.old_id], False
    if semantic_slot(pick.item.slot):
        for row in rows:
            if row.slot == pick.item.slot and same_family(row.type, pick.item.type):
                # The same ID is the same entity: mentioned again, not changed.
                return row, pick.item.slot.startswith("id:")
    return None
