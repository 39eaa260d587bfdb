"""Late sections kept in place: the prompt grows by appending (DESIGN "Prompt caching").

The memory delta, recalled turns and replay go right before the current
input, and each request used to lay them out anew there: the previous
request's late sections sat where the new turns now go, so the cached prefix
ended at the last recent turn on every request. Instead, a late section that
went out stays where it went (`PlacedNote`, before the turn that was then the
current input) and is forwarded again, byte-identical, while that turn is in
the recent window and what the note shows is still current. The next
request's own late sections then only carry what is new: items not shown
yet, turns not recalled yet, rules not replayed yet.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Mapping, Sequence

from policies.types import MemoryItem, MemoryLayout, PlacedNote, Turn

_LIVE = frozenset({"active", "pending"})
# Items the delta shows besides live ones: forgotten ones the input brought back.
_SHOWN_IN_DELTA = _LIVE | {"archived"}
PLACEABLE = frozenset({"memory_delta", "recalled", "replay"})


def turn_checksum(turn: Turn) -> int:
    return zlib.crc32(f"{turn.role}\x00{turn.text}".encode())


def _reads_the_same(
    item_lines: Sequence[tuple[str, str]],
    by_id: Mapping[str, MemoryItem],
    statuses: frozenset[str],
    render: Callable[[MemoryItem], str],
) -> bool:
    for item_id, line in item_lines:
        item = by_id.get(item_id)
        if item is None or item.status not in statuses or render(item) != line:
            return False
    return True


def still_placed(
    notes: Sequence[PlacedNote],
    history: Sequence[Turn],
    items: Sequence[MemoryItem],
    render: Callable[[MemoryItem], str],
    stale_key: int,
    relevant: Collection[int],
) -> list[PlacedNote]:
    """The notes that may go out again: their turn is still in `history`
    (unedited), and what they show reads as it did. Recalled turns stay only
    while the current input still recalls one of them (`relevant`: the
    ordinals it recalls): otherwise they would take the room of what it
    does recall (a question about another time, another topic).

    `render`: an item's line as the late sections would write it now.
    Memory-delta notes are checked against the layout by the caller (a
    rebuilt block takes their items in).
    """
    if not notes:
        return []
    at = {t.ordinal: t for t in history}
    by_id = {it.id: it for it in items}
    kept: list[PlacedNote] = []
    for note in notes:
        turn = at.get(note.before)
        if turn is None or turn_checksum(turn) != note.anchor:
            continue
        if note.section == "recalled":
            if note.stale_key != stale_key:
                continue  # a value it quotes may have changed since
            if not any(o in relevant for o in note.ordinals):
                continue
        else:
            statuses = _SHOWN_IN_DELTA if note.section == "memory_delta" else _LIVE
            if not _reads_the_same(note.item_lines, by_id, statuses, render):
                continue
        kept.append(note)
    return kept


def delta_notes_hold(notes: Sequence[PlacedNote], layout: MemoryLayout | None) -> bool:
    """Memory-delta notes extend one layout of the block; a rebuild folds them in."""
    return all(
        n.section != "memory_delta" or (layout is not None and n.layout_ordinal == layout.ordinal)
        for n in notes
    )


def shown_item_ids(notes: Sequence[PlacedNote], *sections: str) -> frozenset[str]:
    return frozenset(i for n in notes if n.section in sections for i, _ in n.item_lines)


def quoted_ordinals(notes: Sequence[PlacedNote]) -> frozenset[int]:
    return frozenset(o for n in notes if n.section == "recalled" for o in n.ordinals)
