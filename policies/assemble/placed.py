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

Here: which notes still hold (`still_placed`, `delta_notes_hold`), which of
this request's late sections become notes (`new_notes`), and how the notes
share the room of a layered context (`share_notes`), the newest going first
when they do not fit (`newest_notes`).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from policies.assemble.assembly_input import AssemblyInput
from policies.assemble.generated import Generated
from policies.assemble.item_lines import render_item_line
from policies.memory.staleness import StaleFilter
from policies.types import AssembledContext, MemoryItem, MemoryLayout, PlacedNote, Turn

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


def new_notes(
    late: Sequence[Generated], ctx: AssembledContext, inp: AssemblyInput, stale: StaleFilter | None
) -> list[PlacedNote]:
    """This request's late sections, to be kept where they went."""
    first = inp.tail[0]
    by_id = {it.id: it for it in inp.items}
    notes: list[PlacedNote] = []
    for gen in late:
        section = gen.parts[0].name if gen.parts else ""
        if not gen.tokens or section not in PLACEABLE or len(gen.contents) != 1:
            continue
        if any(c.kind == "conflict" and c.decision == "kept" for c in gen.candidates):
            continue  # a question for the user: raised again while it stands, not kept
        item_lines = tuple((i, render_item_line(by_id[i])) for i in gen.item_ids if i in by_id)
        ordinals = tuple(
            int(c.ref) for c in gen.candidates if c.decision == "recalled" and c.kind == "turn"
        )
        notes.append(
            PlacedNote(
                section=section,
                before=first.ordinal,
                anchor=turn_checksum(first),
                content=gen.contents[0],
                tokens=gen.tokens,
                item_lines=item_lines if section != "recalled" else (),
                ordinals=ordinals if section == "recalled" else (),
                stale_key=(stale.fingerprint if stale else 0) if section == "recalled" else 0,
                layout_ordinal=(
                    ctx.memory_layout.ordinal
                    if section == "memory_delta" and ctx.memory_layout is not None
                    else -1
                ),
            )
        )
    return notes


def newest_notes(
    notes: Sequence[PlacedNote], tokens: int, room: Callable[[PlacedNote], int]
) -> list[PlacedNote]:
    """The last notes in prompt order that free `tokens` of room (`room(note)`:
    what one takes of it): the prompt stays as it was up to the first of them."""
    order = sorted(enumerate(notes), key=lambda kv: (-kv[1].before, -kv[0]))
    out: list[PlacedNote] = []
    for _, note in order:
        if tokens <= 0:
            break
        if room(note) > 0:
            out.append(note)
            tokens -= room(note)
    return out


@dataclass(frozen=True, slots=True)
class NoteShares:
    """How the notes in place share the room (`share_notes`).

    Turns recalled earlier and still quoted in place are recall: they take
    recall's reserve first; beyond it they take room like the other notes,
    which go with the turn they precede.
    """

    reserve: int  # recall's reserve (what the memory block borrowed is out of it)
    with_notes: list[int]  # per group: tokens its notes take beyond the reserve
    from_reserve: dict[int, int]  # id(note) -> tokens it takes of the reserve

    def frees(self, note: PlacedNote) -> int:
        """Room dropping `note` frees. Not a memory-delta note's: its items
        would only be shown again in this request's delta."""
        if note.section == "memory_delta":
            return 0
        return note.tokens - self.from_reserve.get(id(note), 0)


def share_notes(
    notes: Sequence[PlacedNote], opens: Mapping[int, int], n_groups: int, reserve: int
) -> NoteShares:
    """Charge each note to recall's reserve or to the group it precedes
    (`opens`: a group's first ordinal -> its index)."""
    with_notes = [0] * n_groups
    from_reserve: dict[int, int] = {}
    left = reserve
    for n in notes:
        if n.section == "recalled":
            from_reserve[id(n)] = min(left, n.tokens)
            left -= from_reserve[id(n)]
        with_notes[opens[n.before]] += n.tokens - from_reserve.get(id(n), 0)
    return NoteShares(reserve, with_notes, from_reserve)
