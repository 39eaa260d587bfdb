"""Replay: the rules the current input touches and the open conflicts, restated late."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from policies.assemble.generated import CONFLICT_MARK, REPLAY_HEADER, Generated
from policies.assemble.item_lines import render_item_line
from policies.assemble.lines import Line, fit_lines, one_line
from policies.assemble.params import FullParams
from policies.memory.scoring import pick_replay
from policies.types import Candidate, MemoryItem, Section, TokenCounter


def plan_replay(
    items: Sequence[MemoryItem],
    notes: Sequence[str],
    query: Collection[str],
    cap: int,
    p: FullParams,
    count: TokenCounter,
    shown_in_place: frozenset[str] = frozenset(),
) -> Generated:
    """Relevant rules and conflict notes, restated right before the current input.

    Conflict notes go first in priority (an ambiguous change must be raised
    with the user), replayed rules after them; both are shown in that order
    too, closest to the input last. Rules an earlier late section still
    shows in place (`shown_in_place`) were restated a few turns ago: left out.
    """
    if shown_in_place:
        items = [it for it in items if it.id not in shown_in_place]
    picks = pick_replay(items, query, limit=p.replay_max, threshold=p.replay_threshold)
    note_lines = [
        Line(str(i), text, count(text), (0, i, ""), "conflict")
        for i, note in enumerate(notes)
        for text in (f"- {CONFLICT_MARK}{one_line(note)}",)
        if note.strip()
    ]
    rules = [
        Line(it.id, text, count(text), (1, rank, it.id), "replay")
        for rank, (it, _) in enumerate(picks)
        for text in (render_item_line(it),)
    ]
    shown, content, tokens = fit_lines(REPLAY_HEADER, [*note_lines, *rules], cap, count)
    shown_keys = {(ln.section, ln.key) for ln in shown}
    candidates = [
        Candidate(ln.section, ln.key, ln.tokens, 0.0, "kept", "conflict note", "replay")
        if (ln.section, ln.key) in shown_keys
        else Candidate(ln.section, ln.key, ln.tokens, 0.0, "dropped", "over replay share")
        for ln in note_lines
    ]
    for ln, (_, rel) in zip(rules, picks, strict=True):
        if (ln.section, ln.key) in shown_keys:
            reason = f"relevant to current input ({rel:.2f})"
            candidates.append(
                Candidate("replay", ln.key, ln.tokens, rel, "replayed", reason, "replay")
            )
        else:
            candidates.append(
                Candidate("replay", ln.key, ln.tokens, rel, "dropped", "over replay share")
            )
    item_ids = [ln.key for ln in shown if ln.section == "replay"]
    contents = [content] if content else []
    return Generated(
        contents, tokens, [Section("replay", tokens, len(shown))], candidates, item_ids
    )
