"""What the engine knows about each user turn: its live items, what changed
since (the annotations), and the sentences a condensed turn keeps."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from policies.assemble.backbone.params import CHANGED_NOTE, NOTE_CHARS, WITHDRAWN_NOTE
from policies.assemble.backbone.restated import Restated
from policies.assemble.lines import one_line
from policies.assemble.summary import DatedTurn, SummaryParams, summarize_turn
from policies.language.text import term_set
from policies.memory.stale_values import changed_clause
from policies.memory.staleness import CHANGED_MARK, StaleFilter
from policies.types import MemoryItem, Turn

_LIVE = frozenset({"active", "pending"})


def _successor(item: MemoryItem, by_id: dict[str, MemoryItem]) -> MemoryItem | None:
    seen: set[str] = set()
    cur = item
    while cur.superseded_by and cur.superseded_by in by_id and cur.id not in seen:
        seen.add(cur.id)
        cur = by_id[cur.superseded_by]
    return cur if cur is not item and cur.status in _LIVE else None


@dataclass(slots=True)
class Knowledge:
    """Per user ordinal: its live items, its annotations, whether all it said is outdated."""

    live: dict[int, int] = field(default_factory=dict)
    outdated: dict[int, int] = field(default_factory=dict)
    notes: dict[int, list[tuple[str, str]]] = field(default_factory=dict)  # (item id, note)
    # Per annotated item: the ordinal of the turn that stated its successor
    # and the successor's value (absent: it was withdrawn).
    changed_at: dict[str, tuple[int, str]] = field(default_factory=dict)


def _change_note(old: MemoryItem, new: MemoryItem, said: str | None) -> str:
    """What an annotation says `old` changed to: the clause of `new` that holds
    the new value, whole (a clipped clause can lose what it says). `new` as it
    is when that clause is itself long, or when `new` has words its turn
    (`said`) does not: a value the engine worked out ("two more than I said")
    says how, and is short already."""
    short = one_line(changed_clause(old.value, new.value))
    own = said is not None and term_set(new.value) <= term_set(said)
    if not own or len(short) > NOTE_CHARS:
        short = _clip(one_line(new.value), 200)
    return CHANGED_MARK.format(short)


def read_knowledge(
    items: Sequence[MemoryItem],
    annotate: bool,
    texts: Mapping[int, str],
    restated: Restated | None = None,
) -> Knowledge:
    """What the engine knows of each user turn (`texts`: each turn's text, by
    ordinal). An annotation names the new value unless a later turn gave its
    count another figure still (`restated`): the engine missed that change,
    and the note then only says that the statement changed. Amounts are not
    compared there: "total" and "budget" name too many different sums for a
    later one to say that the engine's link was wrong."""
    by_id = {it.id: it for it in items}
    k = Knowledge()
    for it in items:
        if it.source != "user":
            continue
        o = it.source_ordinal
        if it.status in _LIVE:
            k.live[o] = k.live.get(o, 0) + 1
            continue
        if it.status not in ("superseded", "revoked"):
            continue
        k.outdated[o] = k.outdated.get(o, 0) + 1
        if not annotate:
            continue
        if it.status == "revoked":
            note = WITHDRAWN_NOTE
        else:
            succ = _successor(it, by_id)
            if succ is None or succ.source_ordinal == o:
                # Gone, or corrected in the same message: its words say what stands.
                continue
            if restated is not None and restated.outdated(
                succ.value, succ.source_ordinal, counts_only=True
            ):
                note = CHANGED_NOTE
            else:
                note = _change_note(it, succ, texts.get(succ.source_ordinal))
            k.changed_at[it.id] = (succ.source_ordinal, succ.value)
        notes = k.notes.setdefault(o, [])
        if all(n != note for _, n in notes):
            notes.append((it.id, note))
    return k


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@lru_cache(maxsize=8192)
def informative(text: str, role: str, params: SummaryParams) -> tuple[str, ...]:
    """The sentences the rule summariser keeps of a turn (none: small talk)."""
    turn = Turn(0, role, text, {}, 0)
    line = summarize_turn(DatedTurn(turn, ""), params)
    return line.sentences if line is not None else ()


def repeats_changed(stale: StaleFilter, line: str) -> bool:
    """A line of the assistant's that repeats a value the user changed since:
    the digest leaves it out (the user's own words say what stands)."""
    return stale.echoes(line) or bool(stale.matches(line))
