"""Context assemblers: which messages go upstream, within the token budget.

Each assembler is a class with a `name` (the key used in `config.yaml`) and
`assemble(inp) -> AssembledContext`; its parameters are a pydantic model
(`policies.assemble.params`). Order of the forwarded context:

    system -> anchors + working memory -> summary -> recent turns
           -> memory delta -> recalled turns -> replay -> tail

Stable parts first, volatile ones late (DESIGN "Prompt caching"): the
working-memory block is kept as laid out (`MemoryLayout`), new items go to
the late delta; the summary grows by appended chunks; the recent window
keeps every turn since the last compaction until it reaches its high-water
mark, and is then compacted down to its low-water mark (the assembler asks
for it with `compact_upto`; the proxy summarises and assembles again). So
between compactions each prompt is the previous one plus the new turns.
Recalled turns change with every input: DESIGN places them before the recent
turns, which would cut the cached prefix there on every request, so by
default they go late (`recall_position`).

Invariants shared by all managed assemblers (and tested as properties):
the system prompt and the tail are never cut; tool groups are never split;
forwarded tokens stay within the budget unless the mandatory part alone
exceeds it, in which case exactly that part is forwarded; when everything
fits, the client's messages go out byte-identical.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.assemble.backbone import BackboneParams, assemble_backbone, assemble_user_turns
from policies.assemble.budget import (
    RecentWindow,
    group_tokens,
    group_turns,
    is_forwardable,
    select_recent_groups,
)
from policies.assemble.layers import (
    CONFLICT_MARK,
    DELTA_HEADER,
    MEMORY_HEADER,
    RECALL_HEADER,
    REPLAY_HEADER,
    Generated,
    MemoryPlan,
    MemoryQuery,
    nothing,
    plan_memory,
    plan_recall,
    plan_replay,
    plan_summary,
    render_item_line,
)
from policies.assemble.params import (
    FullParams,
    RecallParams,
    SummaryBufferParams,
    WindowParams,
    _LayeredParams,
)
from policies.assemble.placed import (
    PLACEABLE,
    delta_notes_hold,
    quoted_ordinals,
    shown_item_ids,
    still_placed,
    turn_checksum,
)
from policies.assemble.summary import SUMMARY_HEADER, Shown
from policies.language.text import term_set
from policies.memory.staleness import StaleFilter
from policies.types import (
    MESSAGE_OVERHEAD_TOKENS,
    AssembledContext,
    Candidate,
    Decision,
    MemoryItem,
    MemoryLayout,
    PlacedNote,
    RecallHit,
    Section,
    SummaryChunk,
    TokenCounter,
    Turn,
)

__all__ = [
    "CONFLICT_MARK",
    "DELTA_HEADER",
    "MEMORY_HEADER",
    "RECALL_HEADER",
    "REPLAY_HEADER",
    "SUMMARY_HEADER",
    "AssemblyInput",
    "BackboneAssembler",
    "BackboneParams",
    "FullAssembler",
    "FullParams",
    "RawAssembler",
    "RecallParams",
    "SummaryBufferAssembler",
    "SummaryBufferParams",
    "UserTurnsAssembler",
    "WindowAssembler",
    "WindowParams",
    "render_item_line",
]


@dataclass(kw_only=True, slots=True)
class AssemblyInput:
    """Everything an assembler may look at; built by the proxy per request."""

    system: list[Turn]
    history: list[Turn]
    tail: list[Turn]
    items: Sequence[MemoryItem] = ()  # all statuses; assemblers use active + pending
    summary: str | None = None  # a plain-text summary (when no chunks are given)
    budget: int
    count: TokenCounter  # text -> tokens, cached by the caller
    current_ordinal: int
    conflict_notes: Sequence[str] = ()
    raw_tokens: int = 0  # the client's messages as sent (for the log only)
    # The rolling summary, chunk by chunk; it covers history before `summary_upto`.
    summary_chunks: Sequence[SummaryChunk] = ()
    summary_upto: int = 0
    # Older turns the recall index found for the current input, best first.
    recalled: Sequence[RecallHit] = ()
    # The working-memory layout of the previous request (None: lay it out now).
    memory_layout: MemoryLayout | None = None
    # Late sections of earlier requests, to forward again where they went
    # (`policies.assemble.placed`); the assembler checks they still hold.
    placed_notes: Sequence[PlacedNote] = ()
    # The backbone's rendering levels of its frozen exchanges on the previous
    # request (`policies.assemble.backbone`): they only go down, so the frozen part
    # changes only where something new had to give way.
    backbone_levels: Mapping[int, tuple[int, int, str]] = field(default_factory=dict)
    # What each frozen exchange showed on the previous request (first ordinal ->
    # its rendering's signature, the annotations in it): new annotations wait
    # until the prompt changes at their exchange anyway.
    backbone_shown: Mapping[int, tuple[int, tuple[str, ...]]] = field(default_factory=dict)


def _tokens(turns: Sequence[Turn]) -> int:
    return sum(t.tokens for t in turns)


def _turn_candidates(
    turns: Sequence[Turn], decision: Decision, reason: str, section: str
) -> list[Candidate]:
    return [
        Candidate("turn", str(t.ordinal), t.tokens, 0.0, decision, reason, section) for t in turns
    ]


def _run_candidates(
    turns: Sequence[Turn], decision: Decision, reason: str, section: str
) -> list[Candidate]:
    """One candidate for a run of turns sharing a decision (ref "first-last").

    Long histories are mostly one run of "in the summary" or "outside recent
    window": logging it once keeps the record (and the work per request)
    independent of length.
    """
    if len(turns) <= 2:
        return _turn_candidates(turns, decision, reason, section)
    ref = f"{turns[0].ordinal}-{turns[-1].ordinal}"
    return [Candidate("turns", ref, _tokens(turns), 0.0, decision, reason, section)]


def _mandatory_candidates(inp: AssemblyInput) -> list[Candidate]:
    return _turn_candidates(
        inp.system, "mandatory", "mandatory: system prompt", "system"
    ) + _turn_candidates(inp.tail, "mandatory", "mandatory: current input", "tail")


def _unused_memory(inp: AssemblyInput, reason: str) -> list[Candidate]:
    """Items and conflict notes a policy did not consider, logged with why."""
    return [Candidate("item", it.id, 0, 0.0, "dropped", reason) for it in inp.items] + [
        Candidate("conflict", str(i), 0, 0.0, "dropped", reason)
        for i, _ in enumerate(inp.conflict_notes)
    ]


def _unchanged(inp: AssemblyInput, reason: str) -> AssembledContext:
    """The client's messages exactly as sent."""
    sys_t, hist_t, tail_t = _tokens(inp.system), _tokens(inp.history), _tokens(inp.tail)
    candidates = _mandatory_candidates(inp)
    candidates += _run_candidates(inp.history, "kept", reason, "recent")
    candidates += _unused_memory(inp, f"not needed: {reason}")
    return AssembledContext(
        messages=[t.raw for t in (*inp.system, *inp.history, *inp.tail)],
        tokens=sys_t + hist_t + tail_t,
        budget=inp.budget,
        sections=[
            Section("system", sys_t, len(inp.system)),
            Section("recent", hist_t, len(inp.history)),
            Section("tail", tail_t, len(inp.tail)),
        ],
        candidates=candidates,
        over_budget=sys_t + tail_t > inp.budget,
        passthrough=True,
    )


def _shortcut(inp: AssemblyInput) -> AssembledContext | None:
    """The two cases with nothing to decide: everything fits, or nothing does."""
    sys_t, tail_t = _tokens(inp.system), _tokens(inp.tail)
    # Grouping is only needed (and only paid for) when the tokens fit.
    if sys_t + _tokens(inp.history) + tail_t <= inp.budget and all(
        is_forwardable(g) for g in group_turns(inp.history)
    ):
        return _unchanged(inp, "whole conversation fits")
    if sys_t + tail_t <= inp.budget:
        return None
    reason = "mandatory part alone exceeds budget"
    candidates = _mandatory_candidates(inp)
    candidates += _run_candidates(inp.history, "dropped", reason, "recent")
    candidates += _unused_memory(inp, reason)
    return AssembledContext(
        messages=[t.raw for t in (*inp.system, *inp.tail)],
        tokens=sys_t + tail_t,
        budget=inp.budget,
        sections=[
            Section("system", sys_t, len(inp.system)),
            Section("tail", tail_t, len(inp.tail)),
        ],
        candidates=candidates,
        over_budget=True,
    )


@dataclass(slots=True)
class _Layout:
    """The generated sections by position, around the recent turns."""

    head: Sequence[Generated] = ()  # after the system prompt
    middle: Sequence[Generated] = ()  # right before the recent turns
    late: Sequence[Generated] = ()  # after the recent turns, before the tail


def _window_candidates(groups: Sequence[Sequence[Turn]], window: RecentWindow) -> list[Candidate]:
    """The account of the live turns: each kept group's turns, and the dropped
    ones as runs sharing a reason."""
    candidates: list[Candidate] = []
    run: list[Turn] = []
    run_reason = ""
    for i, group in enumerate(groups):
        reason = window.dropped.get(i)
        if reason is None:
            candidates += _run_candidates(run, "dropped", run_reason, "recent")
            run = []
            candidates += _turn_candidates(group, "kept", "fits: recent window", "recent")
            continue
        if reason != run_reason:
            candidates += _run_candidates(run, "dropped", run_reason, "recent")
            run, run_reason = [], reason
        run.extend(group)
    candidates += _run_candidates(run, "dropped", run_reason, "recent")
    return candidates


def _in_place_candidates(in_place: Sequence[PlacedNote]) -> list[Candidate]:
    """The account of the earlier late sections forwarded again in place."""
    return [
        Candidate(
            "note",
            f"{n.section}@{n.before}",
            n.tokens,
            0.0,
            "kept",
            "an earlier late section, forwarded again where it went (prompt cache)",
            "in_place",
        )
        for n in in_place
    ]


def _laid_out(
    inp: AssemblyInput, layout: _Layout, recent: Sequence[Turn], in_place: Sequence[PlacedNote]
) -> list[dict[str, Any]]:
    """The messages in section order; each note in place right before its turn."""
    before: dict[int, list[PlacedNote]] = {}
    for note in in_place:
        before.setdefault(note.before, []).append(note)
    return [
        *(t.raw for t in inp.system),
        *(m for g in (*layout.head, *layout.middle) for m in g.messages()),
        *(
            m
            for t in recent
            for m in (
                *({"role": "system", "content": n.content} for n in before.get(t.ordinal, ())),
                t.raw,
            )
        ),
        *(m for g in layout.late for m in g.messages()),
        *(t.raw for t in inp.tail),
    ]


def _finish(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    window: RecentWindow,
    layout: _Layout,
    extra_candidates: Sequence[Candidate],
    summarised: Sequence[Turn] = (),
    in_place: Sequence[PlacedNote] = (),
) -> AssembledContext:
    """Lay the pieces out in section order and write the account.

    `in_place`: earlier late sections, each forwarded right before its turn
    (whose group is in the window).
    """
    recent = [t for i in window.kept for t in groups[i]]
    in_place_tokens = sum(n.tokens for n in in_place)
    recent_tokens = sum(t.tokens for t in recent)
    candidates = _mandatory_candidates(inp)
    candidates += _run_candidates(summarised, "compressed", "in the rolling summary", "summary")
    candidates += _window_candidates(groups, window)
    candidates += extra_candidates
    sections = [Section("system", _tokens(inp.system), len(inp.system))]
    for gen in (*layout.head, *layout.middle):
        sections += gen.parts
        candidates += gen.candidates
    sections.append(Section("recent", recent_tokens, len(recent)))
    if in_place:
        sections.append(Section("in_place", in_place_tokens, len(in_place)))
        candidates += _in_place_candidates(in_place)
    for gen in layout.late:
        sections += gen.parts
        candidates += gen.candidates
    sections.append(Section("tail", _tokens(inp.tail), len(inp.tail)))
    placed = [g for g in (*layout.head, *layout.middle, *layout.late) if g.tokens]
    used_ids = dict.fromkeys(i for g in placed for i in g.item_ids)
    return AssembledContext(
        messages=_laid_out(inp, layout, recent, in_place),
        tokens=sum(s.tokens for s in sections),
        budget=inp.budget,
        sections=sections,
        candidates=candidates,
        used_item_ids=tuple(used_ids),
    )


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


def _query_turns(tail: Sequence[Turn]) -> str:
    """The current input: the user's words, or the tool round if none."""
    users = [t.text for t in tail if t.role == "user"]
    return "\n".join(users or [t.text for t in tail])


def _with_recent(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    room: int,
    step_share: float,
    layout: _Layout,
    extra_candidates: Sequence[Candidate] = (),
) -> AssembledContext:
    """Fill what is left of the budget with a sliding recent window and lay it all out."""
    step = max(0, min(int(inp.budget * step_share), room // 2))
    pin = _latest_user_group(groups, inp.tail)
    window = select_recent_groups(groups, room, step=step, pin=pin)
    return _finish(inp, groups, window, layout, extra_candidates)


def _latest_user_group(groups: Sequence[Sequence[Turn]], tail: Sequence[Turn]) -> int | None:
    """In a tool loop the tail opens on a tool call; its user request is in history."""
    if not tail or tail[0].role == "user":
        return None
    return next((i for i in range(len(groups) - 1, -1, -1) if groups[i][0].role == "user"), None)


def _recent_window(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    room: int,
    p: _LayeredParams,
    extra: Sequence[int] | None = None,
) -> tuple[RecentWindow, int | None]:
    """Every group since the last compaction while they fit; else compact.

    Returns the window and, when the groups exceed the high-water mark, the
    ordinal up to which the turns should now be summarised (the window then
    holds what fits the low-water mark).
    """
    pin = _latest_user_group(groups, inp.tail)
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


def _older_turns(inp: AssemblyInput) -> Callable[[int], Turn | None]:
    """Lookup of the turns the summary covers (the others are on show already)."""
    upto = _since_summary(inp)

    def turn_at(ordinal: int) -> Turn | None:
        i = bisect_left(inp.history, ordinal, 0, upto, key=lambda t: t.ordinal)
        return inp.history[i] if i < upto and inp.history[i].ordinal == ordinal else None

    return turn_at


def _since_summary(inp: AssemblyInput) -> int:
    """Index in `history` of the first turn the summary does not cover."""
    if inp.summary_upto <= 0 or not inp.history:
        return 0
    return bisect_left(inp.history, inp.summary_upto, key=lambda t: t.ordinal)


def _before_tail(inp: AssemblyInput) -> tuple[list[MemoryItem], list[Candidate]]:
    """Items to consider for memory and replay, and the account of those left out.

    What the current input itself says is forwarded verbatim right after
    (the tail is never cut): restating it in the memory block or in replay
    would only spend the history budget twice on the same words. Such items
    show up on the next request, as new items.
    """
    if not inp.tail:
        return list(inp.items), []
    start = min(t.ordinal for t in inp.tail)
    kept = [it for it in inp.items if it.source_ordinal < start]
    left = [
        Candidate("item", it.id, 0, 0.0, "dropped", "in the current input (forwarded verbatim)")
        for it in inp.items
        if it.source_ordinal >= start and it.status in ("active", "pending")
    ]
    return kept, left


def _layered(inp: AssemblyInput, p: _LayeredParams, full: FullParams | None) -> AssembledContext:
    """Summary presets: (memory +) summary + recalled + recent, compacting in steps.

    Late sections of earlier requests that still hold go out again in place
    (`policies.assemble.placed`); one whose turn does not make it into the window
    takes what it showed with it, so the context is laid out again without it.
    """
    start = _since_summary(inp)
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
        ctx.placed_notes = (*attempt.emitted, *_new_notes(attempt.late, ctx, inp, stale))
    return ctx


def _new_notes(
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


def _over_high_water(
    groups: Sequence[Sequence[Turn]], with_notes: Sequence[int], room: int, p: _LayeredParams
) -> int:
    """Tokens by which the recent turns and their notes exceed the high-water mark."""
    total = sum(group_tokens(g) for g in groups if is_forwardable(g)) + sum(with_notes)
    return total - int(room * p.high_water)


def _newest(
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
    p: _LayeredParams,
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
        unused = _unused_memory(inp, f"{p.__class__.__name__}: no item memory")
        return _MemoryPart(None, nothing("replay"), 0, notes, unused, history_budget)
    room = history_budget
    shown_items, in_tail = _before_tail(inp)
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
    p: _LayeredParams,
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


@dataclass(frozen=True, slots=True)
class _NoteShares:
    """How the notes in place share the room (`_share_notes`).

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


def _share_notes(
    notes: Sequence[PlacedNote], opens: Mapping[int, int], n_groups: int, reserve: int
) -> _NoteShares:
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
    return _NoteShares(reserve, with_notes, from_reserve)


def _recall_part(
    inp: AssemblyInput,
    p: _LayeredParams,
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
        headroom = last + _tokens(inp.tail)
    return plan_recall(
        inp.recalled,
        query,
        min(room - headroom, cap),
        p.recall.snippet_chars,
        inp.count,
        stale,
        _older_turns(inp) if p.recall.exchanges else None,
        quoted_ordinals(emitted),
    )


def _layered_once(
    inp: AssemblyInput,
    p: _LayeredParams,
    full: FullParams | None,
    stale: StaleFilter | None,
    placed: Sequence[PlacedNote],
) -> _Attempt:
    """One layout with the given notes in place (`_Attempt`). With the notes
    over the high-water mark: no layout, and the newest notes that have to go.

    Memory first, then the summary, then the recent window, then recall in
    what is left."""
    start = _since_summary(inp)
    summarised, live = inp.history[:start], inp.history[start:]
    history_budget = inp.budget - _tokens(inp.system) - _tokens(inp.tail)
    query_text = _query_turns(inp.tail)
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
    shares = _share_notes(notes, opens, len(groups), min(room, max(0, reserve)))
    over = _over_high_water(groups, shares.with_notes, room - shares.reserve, p)
    if 0 < over <= sum(shares.frees(n) for n in notes):
        # Dropping the newest notes keeps the prompt up to them; compacting
        # would rewrite it from the summary on.
        return _Attempt(None, [], [], [*lost, *_newest(notes, over, shares.frees)])
    window, compact = _recent_window(inp, groups, room - shares.reserve, p, shares.with_notes)
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
    layout = _Layout(head, middle, late)
    ctx = _finish(inp, groups, window, layout, memory.candidates, summarised, emitted)
    ctx.compact_upto = compact
    ctx.summary_cap = summary.cap
    ctx.summary_trimmed = summary.trimmed
    if memory.plan is not None:
        ctx.memory_layout = memory.plan.layout
        ctx.repromoted_ids = memory.plan.repromoted
    return _Attempt(ctx, late, emitted, lost)


class RawAssembler:
    """Preset A: the client's messages, unchanged (the ceiling for recall)."""

    name: str = "raw"

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        return _unchanged(inp, "raw mode")


class WindowAssembler:
    """Preset B: the system prompt, as many recent groups as fit, the tail."""

    name: str = "window"

    def __init__(self, params: WindowParams | None = None) -> None:
        self.params = params or WindowParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := _shortcut(inp)) is not None:
            return ctx
        groups = group_turns(inp.history)
        room = inp.budget - _tokens(inp.system) - _tokens(inp.tail)
        unused = _unused_memory(inp, "window policy keeps no memory")
        return _with_recent(inp, groups, room, self.params.cache_step_share, _Layout(), unused)


class SummaryBufferAssembler:
    """Preset C: three layers of history under the budget.

    The rolling summary of older turns (written by a summarisation policy,
    `AssemblyInput.summary_chunks`), older turns recalled for the current
    input, and the recent turns verbatim; no structured item memory (items
    are only used to keep superseded values out of the quoted text).
    Without a summary or recall hits this is the window policy.
    """

    name: str = "summary_buffer"

    def __init__(self, params: SummaryBufferParams | None = None) -> None:
        self.params = params or SummaryBufferParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := _shortcut(inp)) is not None:
            return ctx
        return _layered(inp, self.params, None)


class FullAssembler:
    """The layered preset (`layered`; the default before the backbone): C plus
    anchors, working memory (with graded forgetting), its delta, and replay of
    the rules the input touches."""

    name: str = "layered"

    def __init__(self, params: FullParams | None = None) -> None:
        self.params = params or FullParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := _shortcut(inp)) is not None:
            return ctx
        return _layered(inp, self.params, self.params)


class BackboneAssembler:
    """Preset D (`full`, the default): the user's own words as the backbone
    (`policies.assemble.backbone`), the assistant's older turns digested, tool results
    cut to key fields, the recent turns whole."""

    name: str = "full"

    def __init__(self, params: BackboneParams | None = None) -> None:
        self.params = params or BackboneParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := _shortcut(inp)) is not None:
            return ctx
        return assemble_backbone(inp, self.params)


class UserTurnsAssembler:
    """The baseline every evaluation reports beside `full`: the system prompt
    and every user turn verbatim, nothing else (oldest first out of budget)."""

    name: str = "user_turns"

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        if (ctx := _shortcut(inp)) is not None:
            return ctx
        return assemble_user_turns(inp)
