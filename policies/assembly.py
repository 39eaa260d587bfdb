"""Context assemblers: which messages go upstream, within the token budget.

Each assembler is a class with a `name` (the key used in `config.yaml`) and
`assemble(inp) -> AssembledContext`; its parameters are a pydantic model.
Order of the forwarded context (DESIGN.md):

    system -> anchors + working memory -> summary -> recent turns -> replay -> tail

Invariants shared by all managed assemblers (and tested as properties):
the system prompt and the tail are never cut; tool groups are never split;
forwarded tokens stay within the budget unless the mandatory part alone
exceeds it, in which case exactly that part is forwarded; when everything
fits, the client's messages go out byte-identical.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from policies.budget import (
    RecentWindow,
    group_turns,
    is_forwardable,
    select_recent_groups,
)
from policies.memory import render_item
from policies.scoring import (
    ScoringParams,
    is_user_stated,
    pick_anchors,
    pick_replay,
    rank_items,
    score_item,
)
from policies.text import term_set
from policies.types import (
    MESSAGE_OVERHEAD_TOKENS,
    AssembledContext,
    Candidate,
    Decision,
    MemoryItem,
    Section,
    TokenCounter,
    Turn,
)

SUMMARY_HEADER = "Summary of the earlier conversation:"
# Headers of the messages the assembler writes: short (every token counts
# against the history budget) and explicit that memory beats old turns, since
# the verbatim turns kept alongside may still show superseded values.
MEMORY_HEADER = "Memory: the user's current requirements; they override older turns."
REPLAY_HEADER = "Keep in mind for this reply:"
CONFLICT_MARK = "(confirm with the user) "


@dataclass(kw_only=True, slots=True)
class AssemblyInput:
    """Everything an assembler may look at; built by the proxy per request."""

    system: list[Turn]
    history: list[Turn]
    tail: list[Turn]
    items: Sequence[MemoryItem] = ()  # all statuses; assemblers use active + pending
    summary: str | None = None
    budget: int
    count: TokenCounter  # text -> tokens, cached by the caller
    current_ordinal: int
    conflict_notes: Sequence[str] = ()
    raw_tokens: int = 0  # the client's messages as sent (for the log only)


@dataclass(slots=True)
class Generated:
    """A message the assembler writes itself, with its exact cost per section."""

    content: str
    tokens: int
    parts: list[Section]
    candidates: list[Candidate] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)

    def message(self) -> dict[str, Any]:
        return {"role": "system", "content": self.content}


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

    Long histories are mostly one run of "outside recent window": logging it
    once keeps the record (and the work per request) independent of length.
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


def _shortcut(inp: AssemblyInput, groups: list[list[Turn]]) -> AssembledContext | None:
    """The two cases with nothing to decide: everything fits, or nothing does."""
    sys_t, tail_t = _tokens(inp.system), _tokens(inp.tail)
    if sys_t + _tokens(inp.history) + tail_t <= inp.budget and all(
        is_forwardable(g) for g in groups
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


def _finish(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    window: RecentWindow,
    head: Sequence[Generated],
    before_tail: Sequence[Generated],
    extra_candidates: Sequence[Candidate],
) -> AssembledContext:
    """Lay the pieces out in section order and write the account."""
    recent = [t for i in window.kept for t in groups[i]]
    candidates = _mandatory_candidates(inp)
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
    candidates += extra_candidates
    sections = [Section("system", _tokens(inp.system), len(inp.system))]
    for gen in head:
        sections += gen.parts
        candidates += gen.candidates
    sections.append(Section("recent", window.tokens, len(recent)))
    for gen in before_tail:
        sections += gen.parts
        candidates += gen.candidates
    sections.append(Section("tail", _tokens(inp.tail), len(inp.tail)))
    placed = [g for g in (*head, *before_tail) if g.tokens]
    used_ids = dict.fromkeys(i for g in placed for i in g.item_ids)
    return AssembledContext(
        messages=[
            *(t.raw for t in inp.system),
            *(g.message() for g in head if g.tokens),
            *(t.raw for t in recent),
            *(g.message() for g in before_tail if g.tokens),
            *(t.raw for t in inp.tail),
        ],
        tokens=sum(s.tokens for s in sections),
        budget=inp.budget,
        sections=sections,
        candidates=candidates,
        used_item_ids=tuple(used_ids),
    )


def _summary(inp: AssemblyInput, cap: int) -> Generated:
    """The rolling summary as one system message, or nothing if it is over `cap`."""
    if not inp.summary or not inp.summary.strip():
        return Generated("", 0, [Section("summary")])
    content = f"{SUMMARY_HEADER}\n{inp.summary.strip()}"
    tokens = inp.count(content) + MESSAGE_OVERHEAD_TOKENS
    if tokens > cap:
        cand = Candidate("summary", "summary", tokens, 0.0, "dropped", "over summary share")
        return Generated("", 0, [Section("summary")], [cand])
    cand = Candidate("summary", "summary", tokens, 0.0, "kept", "fits summary share", "summary")
    return Generated(content, tokens, [Section("summary", tokens, 1)], [cand])


def _query_terms(tail: Sequence[Turn]) -> frozenset[str]:
    """Terms of the current input: the user's words, or the tool round if none."""
    users = [t.text for t in tail if t.role == "user"]
    return term_set("\n".join(users or [t.text for t in tail]))


def _with_recent(
    inp: AssemblyInput,
    groups: list[list[Turn]],
    room: int,
    step_share: float,
    head: Sequence[Generated] = (),
    before_tail: Sequence[Generated] = (),
    extra_candidates: Sequence[Candidate] = (),
) -> AssembledContext:
    """Fill what is left of the budget with recent turns and lay it all out."""
    step = max(0, min(int(inp.budget * step_share), room // 2))
    pin = _latest_user_group(groups, inp.tail)
    window = select_recent_groups(groups, room, step=step, pin=pin)
    return _finish(inp, groups, window, head, before_tail, extra_candidates)


def _latest_user_group(groups: Sequence[Sequence[Turn]], tail: Sequence[Turn]) -> int | None:
    """In a tool loop the tail opens on a tool call; its user request is in history."""
    if not tail or tail[0].role == "user":
        return None
    return next((i for i in range(len(groups) - 1, -1, -1) if groups[i][0].role == "user"), None)


def render_item_line(item: MemoryItem) -> str:
    """One item as one line (`policies.memory.render_item`): the replaced value on
    the new value's line, the source named for anything the user did not say."""
    return render_item(item)


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(slots=True)
class _Line:
    key: str  # item id, or the conflict note's index
    text: str
    tokens: int
    order: tuple[int, int, str]  # display order; priority is the list order
    section: str


def _fit_lines(
    header: str, lines: Sequence[_Line], cap: int, count: TokenCounter
) -> tuple[list[_Line], str, int]:
    """Greedily fit lines (given in priority order) under a header within `cap`.

    Estimates per line (its own count + 1 for the newline), then counts the
    joined text once, exactly, and drops the lowest priority line until it
    fits: BPE merges make the joined count differ slightly from the sum.
    """
    used = count(header) + MESSAGE_OVERHEAD_TOKENS
    chosen: list[_Line] = []
    for line in lines:
        if used + line.tokens + 1 <= cap:
            chosen.append(line)
            used += line.tokens + 1
    while chosen:
        shown = sorted(chosen, key=lambda ln: ln.order)
        content = "\n".join([header, *(ln.text for ln in shown)])
        tokens = count(content) + MESSAGE_OVERHEAD_TOKENS
        if tokens <= cap:
            return shown, content, tokens
        chosen.pop()
    return [], "", 0


def _memory(
    inp: AssemblyInput, query: frozenset[str], cap: int, p: FullParams
) -> tuple[Generated, list[Candidate]]:
    """Anchors + working memory: one system message, one line per item.

    Lines are shown in `source_ordinal` order (anchors first), so a new item
    appends to the message and the prefix before it stays cacheable; only
    when the section is over its share does the score decide what goes.
    """
    eligible = [it for it in inp.items if it.status in ("active", "pending")]
    candidates = [
        Candidate("item", it.id, 0, 0.0, "dropped", f"status: {it.status}")
        for it in inp.items
        if it.status not in ("active", "pending")
    ]
    scores = {
        it.id: score_item(
            it, current_ordinal=inp.current_ordinal, query_terms=query, params=p.scoring
        )
        for it in eligible
    }
    anchors = pick_anchors(
        eligible,
        max_anchors=p.max_anchors,
        min_anchors=p.min_anchors,
        min_importance=p.anchor_min_importance,
    )
    anchor_ids = {it.id for it in anchors}
    rest = [it for it in eligible if it.id not in anchor_ids]
    if not p.include_inferred:
        candidates += [
            Candidate("item", it.id, 0, scores[it.id], "dropped", "inferred items excluded")
            for it in rest
            if not is_user_stated(it)
        ]
        rest = [it for it in rest if is_user_stated(it)]
    lines = [
        _Line(it.id, text, inp.count(text), (rank, it.source_ordinal, it.id), section)
        for rank, section, group in ((0, "anchors", anchors), (1, "working_memory", rest))
        for it in rank_items(group, scores)
        for text in (render_item_line(it),)
    ]
    shown, content, tokens = _fit_lines(MEMORY_HEADER, lines, cap, inp.count)
    shown_ids = {ln.key for ln in shown}
    for ln in lines:
        kept = ln.key in shown_ids
        reason = "fits working-memory share" if kept else "over working-memory share"
        if ln.section == "anchors":
            reason = f"anchor: {reason}"
        decision: Decision = "kept" if kept else "dropped"
        candidates.append(
            Candidate("item", ln.key, ln.tokens, scores[ln.key], decision, reason, ln.section)
        )
    anchor_lines = [ln for ln in shown if ln.section == "anchors"]
    anchor_tokens = (
        tokens
        if len(anchor_lines) == len(shown)
        else min(
            tokens,
            inp.count(MEMORY_HEADER)
            + MESSAGE_OVERHEAD_TOKENS
            + sum(ln.tokens + 1 for ln in anchor_lines),
        )
    )
    parts = [
        Section("anchors", anchor_tokens, len(anchor_lines)),
        Section("working_memory", tokens - anchor_tokens, len(shown) - len(anchor_lines)),
    ]
    return Generated(content, tokens, parts, item_ids=[ln.key for ln in shown]), candidates


def _replay(inp: AssemblyInput, query: frozenset[str], cap: int, p: FullParams) -> Generated:
    """Relevant rules and conflict notes, restated right before the current input.

    Conflict notes go first in priority (an ambiguous change must be raised
    with the user), replayed rules after them; both are shown in that order
    too, closest to the input last.
    """
    picks = pick_replay(inp.items, query, limit=p.replay_max, threshold=p.replay_threshold)
    notes = [
        _Line(str(i), text, inp.count(text), (0, i, ""), "conflict")
        for i, note in enumerate(inp.conflict_notes)
        for text in (f"- {CONFLICT_MARK}{_one_line(note)}",)
        if note.strip()
    ]
    rules = [
        _Line(it.id, text, inp.count(text), (1, rank, it.id), "replay")
        for rank, (it, _) in enumerate(picks)
        for text in (render_item_line(it),)
    ]
    shown, content, tokens = _fit_lines(REPLAY_HEADER, [*notes, *rules], cap, inp.count)
    shown_keys = {(ln.section, ln.key) for ln in shown}
    candidates = [
        Candidate(ln.section, ln.key, ln.tokens, 0.0, "kept", "conflict note", "replay")
        if (ln.section, ln.key) in shown_keys
        else Candidate(ln.section, ln.key, ln.tokens, 0.0, "dropped", "over replay share")
        for ln in notes
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
    return Generated(content, tokens, [Section("replay", tokens, len(shown))], candidates, item_ids)


class _CacheParams(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    # Quantise where the recent window starts to steps of this share of the
    # budget, so consecutive requests share a longer cached prompt prefix.
    # Off by default: the window only holds still while the conversation grows
    # by less than a step, and on the eval scenarios (a round is ~10-15% of
    # the budget) 0.3 lifted the cached prefix share from 26% to 44% but left
    # ~10% of the budget unused. Worth it where cached tokens are cheap.
    cache_step_share: float = Field(default=0.0, ge=0, lt=0.5)


class RawAssembler:
    """Preset A: the client's messages, unchanged (the ceiling for recall)."""

    name: str = "raw"

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        return _unchanged(inp, "raw mode")


class WindowParams(_CacheParams):
    pass


class WindowAssembler:
    """Preset B: the system prompt, as many recent groups as fit, the tail."""

    name: str = "window"

    def __init__(self, params: WindowParams | None = None) -> None:
        self.params = params or WindowParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        groups = group_turns(inp.history)
        if (ctx := _shortcut(inp, groups)) is not None:
            return ctx
        room = inp.budget - _tokens(inp.system) - _tokens(inp.tail)
        unused = _unused_memory(inp, "window policy keeps no memory")
        return _with_recent(
            inp, groups, room, self.params.cache_step_share, extra_candidates=unused
        )


class SummaryBufferParams(_CacheParams):
    # Most of the history budget a summary may take; the rest is recent turns.
    summary_share: float = Field(default=0.3, ge=0, le=1)


class SummaryBufferAssembler:
    """Preset C: system, rolling summary, recent turns, tail.

    The summary is written elsewhere (a summarisation policy) and handed in
    as `AssemblyInput.summary`; without one this is the window policy.
    """

    name: str = "summary_buffer"

    def __init__(self, params: SummaryBufferParams | None = None) -> None:
        self.params = params or SummaryBufferParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        groups = group_turns(inp.history)
        if (ctx := _shortcut(inp, groups)) is not None:
            return ctx
        room = inp.budget - _tokens(inp.system) - _tokens(inp.tail)
        summary = _summary(inp, int(room * self.params.summary_share))
        room -= summary.tokens
        unused = _unused_memory(inp, "summary_buffer policy keeps no item memory")
        return _with_recent(inp, groups, room, self.params.cache_step_share, (summary,), (), unused)


class FullParams(_CacheParams):
    # Frozen, so one shared default instance is safe.
    scoring: ScoringParams = ScoringParams()
    # Shares of the history budget (budget minus system and tail).
    memory_share: float = Field(default=0.4, ge=0, le=1)  # anchors + working memory
    replay_share: float = Field(default=0.1, ge=0, le=1)  # replay + conflict notes
    summary_share: float = Field(default=0.25, ge=0, le=1)
    max_anchors: int = Field(default=4, ge=0)
    min_anchors: int = Field(default=2, ge=0)
    anchor_min_importance: float = Field(default=0.8, ge=0)
    replay_max: int = Field(default=3, ge=0, le=3)
    # Cosine over terms; one shared CJK bigram between a 13-term rule and a
    # 15-term question ("花生" in 花生酱 vs 花生也算) is ~0.07 and should count.
    replay_threshold: float = Field(default=0.06, ge=0, le=1)
    include_inferred: bool = True


class FullAssembler:
    """Preset D (default): C plus anchors, working memory and replay."""

    name: str = "full"

    def __init__(self, params: FullParams | None = None) -> None:
        self.params = params or FullParams()

    def assemble(self, inp: AssemblyInput) -> AssembledContext:
        groups = group_turns(inp.history)
        if (ctx := _shortcut(inp, groups)) is not None:
            return ctx
        p = self.params
        history_budget = room = inp.budget - _tokens(inp.system) - _tokens(inp.tail)
        query = _query_terms(inp.tail)
        memory, item_candidates = _memory(
            inp, query, min(room, int(history_budget * p.memory_share)), p
        )
        room -= memory.tokens
        replay = _replay(inp, query, min(room, int(history_budget * p.replay_share)), p)
        room -= replay.tokens
        summary = _summary(inp, min(room, int(history_budget * p.summary_share)))
        room -= summary.tokens
        return _with_recent(
            inp, groups, room, p.cache_step_share, (memory, summary), (replay,), item_candidates
        )
