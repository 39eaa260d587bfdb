"""Pure reducers over working-memory items.

`apply_extraction` folds one message's `Extraction` into the item list;
`rollback` undoes everything caused by messages from an ordinal on (a
regenerate discards turns, so their memory must go too). Neither mutates
its input: callers may keep the old list, e.g. to diff or persist changes.

History convention: each `ItemVersion` in `item.versions` records the state
(status, value) the item had *before* the change caused by message
`ordinal`, and a note saying what happened. Rolling back to ordinal k
therefore restores the first version with `ordinal >= k` and truncates the
history there. Conflicts note the item that challenged the old one as
`conflict:<id>`, which is how a later Confirm finds the pair.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from policies.language.segment import drop_retracted
from policies.memory.decisions import attribution
from policies.types import (
    Add,
    Confirm,
    Conflict,
    Extraction,
    ItemStatus,
    ItemVersion,
    MemoryItem,
    Revoke,
    Supersede,
)

_LIVE: frozenset[ItemStatus] = frozenset({"active", "pending"})
_CONFLICT_NOTE = re.compile(r"^conflict:(\S+)")


def _copy(item: MemoryItem) -> MemoryItem:
    return dataclasses.replace(item, versions=list(item.versions))


def _record(item: MemoryItem, ordinal: int, note: str) -> None:
    item.versions.append(ItemVersion(ordinal, item.status, item.value, note))


def apply_extraction(
    items: list[MemoryItem], extraction: Extraction, ordinal: int
) -> list[MemoryItem]:
    """Items after applying `extraction`, caused by message `ordinal`.

    Ops naming unknown ids are ignored (the item may have been rolled back
    meanwhile); an op never revives a superseded or revoked item.
    """
    # Copy on write: untouched items are shared with the input list, items
    # an op changes are copied first, so `items` itself is never mutated.
    out = list(items)
    index = {it.id: i for i, it in enumerate(out)}
    copied: set[str] = set()

    def get(item_id: str) -> MemoryItem | None:
        i = index.get(item_id)
        if i is None:
            return None
        if item_id not in copied:
            out[i] = _copy(out[i])
            copied.add(item_id)
        return out[i]

    def add(item: MemoryItem) -> None:
        if item.id not in index:
            index[item.id] = len(out)
            out.append(_copy(item))
            copied.add(item.id)

    for op in extraction.ops:
        if isinstance(op, Add):
            add(op.item)
        elif isinstance(op, Supersede):
            old = get(op.old_id)
            add(op.item)
            if old is not None and old.status in _LIVE:
                _record(old, ordinal, f"superseded by {op.item.id}{attribution(op)}")
                old.status = "superseded"
                old.superseded_by = op.item.id
        elif isinstance(op, Revoke):
            old = get(op.old_id)
            if old is not None and old.status in _LIVE:
                _record(old, ordinal, f"revoked{attribution(op)}: {op.reason}"[:240])
                old.status = "revoked"
        elif isinstance(op, Conflict):
            old = get(op.old_id)
            add(op.item)
            if old is not None and old.status in _LIVE:
                _record(old, ordinal, f"conflict:{op.item.id}{attribution(op)} {op.note}"[:360])
                old.status = "pending"
        elif isinstance(op, Confirm):
            _confirm(out, get, op.item_id, ordinal)
    return out


def _conflict_partner(item: MemoryItem) -> str | None:
    """Id of the item that put `item` into pending confirmation, if any."""
    for version in reversed(item.versions):
        m = _CONFLICT_NOTE.match(version.note)
        if m:
            return m.group(1)
    return None


def _confirm(
    items: list[MemoryItem],
    get: Callable[[str], MemoryItem | None],
    item_id: str,
    ordinal: int,
) -> None:
    """Resolve a pending conflict: the confirmed side stays, the other goes.

    Confirming the new side of a conflict supersedes the old one; confirming
    the pending old side restores it and revokes the challenger. Confirming
    an item in no conflict changes nothing (it is only a signal).
    """
    probe = next((it for it in items if it.id == item_id), None)
    if probe is None:
        return
    if probe.status == "pending":
        target = get(item_id)
        assert target is not None
        challenger = get(_conflict_partner(target) or "")
        _record(target, ordinal, "confirmed by user")
        target.status = "active"
        if challenger is not None and challenger.status in _LIVE:
            _record(challenger, ordinal, f"rejected in favour of {target.id}")
            challenger.status = "revoked"
        return
    pending = [it.id for it in items if it.status == "pending" and _conflict_partner(it) == item_id]
    for other_id in pending:
        other = get(other_id)
        assert other is not None
        _record(other, ordinal, f"superseded by {item_id} (confirmed)")
        other.status = "superseded"
        other.superseded_by = item_id


def rollback(items: list[MemoryItem], ordinal: int) -> list[MemoryItem]:
    """Items as they were before message `ordinal` (and all later ones) arrived."""
    out: list[MemoryItem] = []
    for item in items:
        if item.source_ordinal >= ordinal:
            continue
        restored = _copy(item)
        for i, version in enumerate(restored.versions):
            if version.ordinal >= ordinal:
                restored.status = version.status
                restored.value = version.value
                restored.versions = restored.versions[:i]
                if restored.status != "superseded":
                    restored.superseded_by = None
                break
        out.append(restored)
    return out


def active_items(items: list[MemoryItem]) -> list[MemoryItem]:
    """Items the model should see: active ones and those pending confirmation."""
    return [it for it in items if it.status in _LIVE]


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_item(item: MemoryItem) -> str:
    """One compact line for the working-memory block.

    A revised item shows the value it replaced on the same line, so the
    model sees the change and never reads the old value as current; a
    pending item says it awaits confirmation. Non-user items name their
    source, so that text from a tool result reads as data, not as an order.
    """
    parts = [f"- [{item.type}]"]
    if item.source != "user":
        parts.append(f"({item.source})")
    parts.append(_one_line(drop_retracted(item.value)))
    if item.replaces:
        parts.append(f"(replaces: {_one_line(item.replaces)})")
    if item.status == "pending":
        parts.append("(pending: the user may have changed this; confirm)")
    return " ".join(parts)
