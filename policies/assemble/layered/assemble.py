"""One layered context: (memory +) summary + recent turns + recall, compacting in steps.

The presets `summary_buffer` and `layered` (`policies.assemble.assembly`).
Memory first (`_memory_part`: the working-memory block, its delta, replay),
then the summary (`_summary_part`), then the recent window
(`policies.assemble.recent_window`), then recall in what is left
(`_recall_part`); `policies.assemble.context.finish` lays the sections out.
Late sections of earlier requests go out again in place while they hold
(`policies.assemble.placed`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from policies.assemble.assembly_input import (
    AssemblyInput,
    before_tail,
    input_text,
    older_turns,
    since_summary,
)
from policies.assemble.budget import group_turns
from policies.assemble.context import Layout, finish, tokens_of, unused_memory
from policies.assemble.generated import Generated, nothing
from policies.assemble.item_lines import render_item_line
from policies.assemble.layered.memory_block import MemoryQuery
from policies.assemble.layered.replay import plan_replay
from policies.assemble.layered.working_memory import MemoryPlan, plan_memory
from policies.assemble.params import FullParams, LayeredParams
from policies.assemble.placed import (
    PLACEABLE,
    delta_notes_hold,
    new_notes,
    newest_notes,
    quoted_ordinals,
    share_notes,
    shown_item_ids,
    still_placed,
)
from policies.assemble.quoted_turns import plan_recall, plan_summary
from policies.assemble.recent_window import over_high_water, recent_window
from policies.assemble.summary import SUMMARY_HEADER, Shown
from policies.language.text import term_set
from policies.memory.staleness import StaleFilter
from policies.types import (
    MESSAGE_OVERHEAD_TOKENS,
    AssembledContext,
    Candidate,
    PlacedNote,
    Section,
    Turn,
)


def assemble_layered(
    inp: AssemblyInput, p: LayeredParams, full: FullParams | None
) -> AssembledContext:
    """Summary presets: (memory +) summary + recalled + recent, compacting in steps.

    Late sections of earlier requests that still hold go out again in place
    (`policies.assemble.placed`); one whose turn does not make it into the window
    takes what it showed with it, so the context is laid out again without it.
    """
    start = since_summary(inp)
    stale = StaleFilter(inp.items) if inp.items else None
    placed: list[PlacedNote] = []
    if p.keep_late_in_place and inp.placed_notes and inp.tail:
        own = PLACEABLE if full is not None else frozenset({"recalled"})
        placed = still_placed(
            [n for n in inp.placed_notes if n.section in own],
            inp.history[start:],
            inp.items,
            render_item_line,
            stale.fingerprint if stale else 0,
            {h.ordinal for h in inp.recalled},
        )
    # Each pass that does not settle drops at least one note, so this ends;
    # only a request whose notes no longer all fit pays for a second pass.
    while True:
        attempt = _layered_once(inp, p, full, stale, placed)
        if attempt.ctx is not None and not attempt.lost:
            break
        placed = [n for n in placed if n not in attempt.lost]
    ctx = attempt.ctx
    if p.keep_late_in_place and inp.tail:
        ctx.placed_notes = (*attempt.emitted, *new_notes(attempt.late, ctx, inp, stale))
    return ctx


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One pass of `_layered_once`: the layout (None when notes have to go
    first), its own late sections, the notes it forwards again in place, and
    those it could not (their turn is outside the window, or they are the
    newest over the high-water mark)."""

    ctx: AssembledContext | None
    late: list[Generated]
    emitted: list[PlacedNote]
    lost: list[PlacedNote]


@dataclass(frozen=True, slots=True)
class _MemoryPart:
    """What item memory takes of a layered layout (`_memory_part`)."""

    plan: MemoryPlan | None  # the working-memory block and its delta (None: no item memory)
    replay: Generated  # the rules the input touches, replayed late
    borrowed: int  # tokens the block took beyond its share (they come out of recall's)
    notes: list[PlacedNote]  # the notes in place that still hold with this layout
    candidates: list[Candidate]  # the account of items and conflict notes
    room: int  # what is left of the history budget


def _memory_part(
    inp: AssemblyInput,
    p: LayeredParams,
    full: FullParams | None,
    query: frozenset[str],
    query_text: str,
    notes: list[PlacedNote],
    history_budget: int,
) -> _MemoryPart:
    """Plan the working-memory block, its delta and replay (`full` only): each
    within its share of the history budget. Memory-delta notes in place go when
    the block was laid out again."""
    if full is None:
        unused = unused_memory(inp, f"{p.__class__.__name__}: no item memory")
        return _MemoryPart(None, nothing("replay"), 0, notes, unused, history_budget)
    room = history_budget
    shown_items, in_tail = before_tail(inp)
    candidates = [*in_tail]
    share = int(history_budget * full.memory_share)
    plan = plan_memory(
        MemoryQuery(shown_items, inp.current_ordinal, query, query_text, inp.count),
        inp.memory_layout,
        min(room, share + int(history_budget * full.memory_borrow_share)),
        int(history_budget * full.delta_share),
        full,
        int(history_budget * full.incidental_share),
        (shown_item_ids(notes, "memory_delta"), shown_item_ids(notes, "replay")),
        room,
    )
    if not delta_notes_hold(notes, plan.layout):
        notes = [n for n in notes if n.section != "memory_delta"]
    borrowed = max(0, plan.stable.tokens - share)
    room -= plan.stable.tokens + plan.delta.tokens
    candidates += plan.candidates
    replay = plan_replay(
        shown_items,
        inp.conflict_notes,
        query,
        min(room, int(history_budget * full.replay_share)),
        full,
        inp.count,
        shown_item_ids(notes, "memory_delta", "replay"),
    )
    room -= replay.tokens
    return _MemoryPart(plan, replay, borrowed, notes, candidates, room)


@dataclass(frozen=True, slots=True)
class _SummaryPart:
    """The summary section of a layered layout (`_summary_part`)."""

    section: Generated
    cap: int  # the summary's share of the history budget, in tokens
    trimmed: int  # summary lines left out to fit it


def _summary_part(
    inp: AssemblyInput,
    p: LayeredParams,
    plan: MemoryPlan | None,
    room: int,
    history_budget: int,
    stale: StaleFilter | None,
) -> _SummaryPart:
    """The rolling summary (chunk by chunk, or the plain text) within its share;
    what the memory block shows already is not repeated in it."""
    cap = int(history_budget * p.summary_share)
    if not inp.summary_chunks:
        return _SummaryPart(_text_summary(inp, min(room, cap)), cap, 0)
    shown = None
    if plan is not None:
        by_id = {it.id: it for it in inp.items}
        shown = Shown([by_id[i].value for i in plan.layout.stable_ids if i in by_id])
    summary, trimmed = plan_summary(inp.summary_chunks, min(room, cap), inp.count, stale, shown)
    return _SummaryPart(summary, cap, trimmed)


def _text_summary(inp: AssemblyInput, cap: int) -> Generated:
    """A plain-text summary as one system message, or nothing if it is over `cap`."""
    if not inp.summary or not inp.summary.strip():
        return nothing("summary")
    content = f"{SUMMARY_HEADER}\n{inp.summary.strip()}"
    tokens = inp.count(content) + MESSAGE_OVERHEAD_TOKENS
    if tokens > cap:
        cand = Candidate("summary", "summary", tokens, 0.0, "dropped", "over summary share")
        return nothing("summary", [cand])
    cand = Candidate("summary", "summary", tokens, 0.0, "kept", "fits summary share", "summary")
    return Generated([content], tokens, [Section("summary", tokens, 1)], [cand])


def _recall_part(
    inp: AssemblyInput,
    p: LayeredParams,
    query: frozenset[str],
    room: int,
    cap: int,
    stale: StaleFilter | None,
    emitted: Sequence[PlacedNote],
    live: Sequence[Turn],
) -> Generated:
    """Older turns recalled for the input, within `cap` and what the recent
    window left; with notes kept in place, room is left for the next round
    (about this one's size, `live`: the turns since the summary), so that
    what this request recalls can stay in place on the next one."""
    headroom = 0
    if p.keep_late_in_place:
        last = live[-1].tokens if live else 0
        headroom = last + tokens_of(inp.tail)
    return plan_recall(
        inp.recalled,
        query,
        min(room - headroom, cap),
        p.recall.snippet_chars,
        inp.count,
        stale,
        older_turns(inp) if p.recall.exchanges else None,
        quoted_ordinals(emitted),
    )


def _layered_once(
    inp: AssemblyInput,
    p: LayeredParams,
    full: FullParams | None,
    stale: StaleFilter | None,
    placed: Sequence[PlacedNote],
) -> _Attempt:
    """One layout with the given notes in place (`_Attempt`). With the notes
    over the high-water mark: no layout, and the newest notes that have to go.

    Memory first, then the summary, then the recent window, then recall in
    what is left."""
    start = since_summary(inp)
    summarised, live = inp.history[:start], inp.history[start:]
    history_budget = inp.budget - tokens_of(inp.system) - tokens_of(inp.tail)
    query_text = input_text(inp.tail)
    query = term_set(query_text)
    memory = _memory_part(inp, p, full, query, query_text, list(placed), history_budget)
    summary = _summary_part(inp, p, memory.plan, memory.room, history_budget, stale)
    room = memory.room - summary.section.tokens
    # The recent turns come first: whether they are compacted must not depend
    # on what this input happens to recall. Recall takes what they leave, up
    # to its share.
    groups = group_turns(live)
    opens = {g[0].ordinal: i for i, g in enumerate(groups)}
    lost = [n for n in memory.notes if n.before not in opens]
    notes = [n for n in memory.notes if n.before in opens]
    # What the memory block borrowed beyond its share comes out of recall's.
    reserve = int(history_budget * min(p.recall_reserve, p.recall_share)) - memory.borrowed
    shares = share_notes(notes, opens, len(groups), min(room, max(0, reserve)))
    over = over_high_water(groups, shares.with_notes, room - shares.reserve, p)
    if 0 < over <= sum(shares.frees(n) for n in notes):
        # Dropping the newest notes keeps the prompt up to them; compacting
        # would rewrite it from the summary on.
        return _Attempt(None, [], [], [*lost, *newest_notes(notes, over, shares.frees)])
    window, compact = recent_window(inp, groups, room - shares.reserve, p, shares.with_notes)
    kept = {groups[i][0].ordinal for i in window.kept}
    lost += [n for n in notes if n.before not in kept]
    emitted = [n for n in notes if n.before in kept]
    room -= window.tokens + sum(shares.from_reserve.get(id(n), 0) for n in emitted)
    recall_cap = max(0, int(history_budget * p.recall_share) - memory.borrowed)
    recalled = _recall_part(inp, p, query, room, recall_cap, stale, emitted, live)
    head = [memory.plan.stable] if memory.plan is not None else []
    head.append(summary.section)
    middle = [recalled] if p.recall_position == "before_recent" else []
    late = [memory.plan.delta] if memory.plan is not None else []
    if p.recall_position == "late":
        late.append(recalled)
    if full is not None:
        late.append(memory.replay)
    layout = Layout(head, middle, late)
    ctx = finish(inp, groups, window, layout, memory.candidates, summarised, emitted)
    ctx.compact_upto = compact
    ctx.summary_cap = summary.cap
    ctx.summary_trimmed = summary.trimmed
    if memory.plan is not None:
        ctx.memory_layout = memory.plan.layout
        ctx.repromoted_ids = memory.plan.repromoted
    return _Attempt(ctx, late, emitted, lost)
