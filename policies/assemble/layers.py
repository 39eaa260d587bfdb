"""The messages the managed assemblers write themselves, each within its share.

Working memory is laid out once (a `MemoryLayout`) and then kept: the block
near the top of the prompt stays byte-identical between requests (the
provider's prompt cache), and items that appear since go to a short *delta*
section placed late. The block is laid out again only when one of its items
stopped being current (it must not stay on show), when the delta outgrows
its share, or when the budget no longer fits it. Graded forgetting is
applied at that moment (`policies.memory.forgetting`).

The rolling summary is one message per compaction chunk; recalled turns are
one message of dated snippets. Both quote old turns, so both go through the
stale filter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from policies.assemble.compact import compact_value, core_value
from policies.assemble.params import FullParams
from policies.assemble.recall import Companion, companion, snippet
from policies.assemble.summary import Shown, fit_chunks
from policies.language.dates import marker_date
from policies.language.segment import drop_retracted
from policies.memory.forgetting import entity_line, grade_items, mentioned
from policies.memory.reducer import render_item
from policies.memory.scoring import (
    ScoringParams,
    is_user_stated,
    pick_anchors,
    pick_replay,
    rank_items,
    score_item,
)
from policies.memory.staleness import StaleFilter
from policies.memory.standing import cap_incidental
from policies.types import (
    MESSAGE_OVERHEAD_TOKENS,
    Candidate,
    Decision,
    MemoryItem,
    MemoryLayout,
    RecallHit,
    Section,
    SummaryChunk,
    Tier,
    TokenCounter,
    Turn,
)

# Headers of the messages the assembler writes: short (every token counts
# against the history budget) and explicit that memory beats old turns, since
# the verbatim turns kept alongside may still show superseded values.
MEMORY_HEADER = "Memory: the user's current requirements; they override older turns."
DELTA_HEADER = "Memory, new or changed since (current; overrides older turns):"
REPLAY_HEADER = "Keep in mind for this reply:"
RECALL_HEADER = "Earlier turns relevant to the current input:"
CONFLICT_MARK = "(confirm with the user) "
_LIVE = frozenset({"active", "pending"})
_ENTITY_KEY = "#entities"


@dataclass(slots=True)
class Generated:
    """Messages the assembler writes itself, with their exact cost per section."""

    contents: list[str]
    tokens: int
    parts: list[Section]
    candidates: list[Candidate] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)

    def messages(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": c} for c in self.contents]


def nothing(section: str, candidates: list[Candidate] | None = None) -> Generated:
    return Generated([], 0, [Section(section)], candidates or [])


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


def one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass(slots=True)
class Line:
    key: str  # item id, the conflict note's index, or _ENTITY_KEY
    text: str
    tokens: int
    order: tuple[int, int, str]  # display order; priority is the list order
    section: str
    short: bool = False  # the item's core clauses only (`core_line`)


def fit_lines(
    header: str, lines: Sequence[Line], cap: int, count: TokenCounter
) -> tuple[list[Line], str, int]:
    """Greedily fit lines (given in priority order) under a header within `cap`.

    Estimates per line (its own count + 1 for the newline), then counts the
    joined text once, exactly, and drops the lowest priority line until it
    fits: BPE merges make the joined count differ slightly from the sum.
    """
    used = count(header) + MESSAGE_OVERHEAD_TOKENS
    chosen: list[Line] = []
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


def fit_tiered(
    header: str,
    lines: Sequence[Line],
    shorts: Mapping[str, Line],
    cap: int,
    count: TokenCounter,
) -> tuple[list[Line], str, int]:
    """`fit_lines`, with lines shortened to their core (`shorts`, by key) when
    that lets more of them fit: the lowest-ranked first, and no more of them
    than it takes to show as many lines as with all of them short. When all
    fit whole, all are shown whole."""
    whole = fit_lines(header, lines, cap, count)
    if len(whole[0]) == len(lines) or not shorts:
        return whole

    def shortened_from(k: int) -> tuple[list[Line], str, int]:
        return fit_lines(
            header, [*lines[:k], *(shorts.get(ln.key, ln) for ln in lines[k:])], cap, count
        )

    best = shortened_from(0)
    target = len(best[0])
    if target <= len(whole[0]):
        return whole
    # The latest start of the shortened run that still shows `target` lines.
    lo, hi = 0, len(lines)  # shortening from lo reaches target, from hi it does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        trial = shortened_from(mid)
        if len(trial[0]) >= target:
            lo, best = mid, trial
        else:
            hi = mid
    return best


# --- working memory -------------------------------------------------------------------


@dataclass(slots=True)
class MemoryPlan:
    stable: Generated
    delta: Generated
    candidates: list[Candidate]
    layout: MemoryLayout
    rebuilt: bool
    repromoted: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MemoryQuery:
    items: Sequence[MemoryItem]
    current_ordinal: int
    terms: frozenset[str]
    text: str
    count: TokenCounter


_BLOCK_SCORING: dict[int, tuple[ScoringParams, ScoringParams]] = {}


def _block_scoring(params: ScoringParams) -> ScoringParams:
    """Scoring for the memory block: no exposure penalty. The block is the
    user's standing state, shown on every request by design; an item shown
    twenty times is not worth less than one shown twice (the penalty is for
    what is *chosen* per input: the delta, replay)."""
    cached = _BLOCK_SCORING.get(id(params))
    if cached is None or cached[0] is not params:
        if len(_BLOCK_SCORING) > 16:
            _BLOCK_SCORING.clear()
        cached = (params, params.model_copy(update={"exposure_penalty": 0.0}))
        _BLOCK_SCORING[id(params)] = cached
    return cached[1]


def _tier_reason(tier: Tier) -> tuple[Decision, str]:
    if tier == "compressible":
        return "compressed", "forgetting: compressible (summary only)"
    if tier == "discardable":
        return "compressed", "forgetting: discardable (entity index only)"
    return "dropped", "forgetting: archived"


def _rebuild(
    q: MemoryQuery, cap: int, incidental_cap: int, p: FullParams
) -> tuple[MemoryLayout, tuple[str, ...]]:
    """Lay the block out anew: grade, pick anchors, rank, fit in `cap`, the
    incidental items (`policies.memory.standing`) within `incidental_cap` of it.

    Returns the layout and the forgotten items it brought back because the
    input mentions them. Scores here leave out
    relevance to the input: the block is meant to be kept for many
    requests, so it should not lean towards one question (relevance is what
    replay and the delta serve).
    """
    tiers: dict[str, Tier] = grade_items(q.items, q.current_ordinal, p.forgetting)
    back = tuple(
        it.id
        for it in q.items
        if tiers.get(it.id, "active") != "active" and mentioned(it, q.terms, q.text, p.forgetting)
    )
    tiers.update(dict.fromkeys(back, "active"))
    live = [it for it in q.items if it.status in _LIVE or it.id in back]
    # Only what the user stated goes into the block (see `_delta` for the rest).
    eligible = [it for it in live if tiers.get(it.id, "active") == "active" and is_user_stated(it)]
    block = _block_scoring(p.scoring)
    scores = {
        it.id: score_item(it, current_ordinal=q.current_ordinal, query_terms=(), params=block)
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
    lines = [
        Line(it.id, text, q.count(text), (rank, it.source_ordinal, it.id), section)
        for rank, section, group in ((0, "anchors", anchors), (1, "working_memory", rest))
        for it in rank_items(group, scores)
        for text in (render_item_line(it),)
    ]
    by_id = {it.id: it for it in eligible}
    lines = [ln for ln in lines if ln.section == "anchors"] + cap_incidental(
        [ln for ln in lines if ln.section != "anchors"],
        lambda ln: by_id[ln.key],
        lambda ln: ln.tokens,
        incidental_cap,
    )
    entities = entity_line([it for it in live if tiers.get(it.id) == "discardable"])
    if entities:
        lines.append(Line(_ENTITY_KEY, entities, q.count(entities), (2, 0, ""), "working_memory"))
    shorts = {
        ln.key: replace(ln, text=text, tokens=q.count(text), short=True)
        for ln in lines
        if ln.key in by_id
        for text in (core_line(by_id[ln.key]),)
        if text != ln.text
    }
    shown, _, _ = fit_tiered(MEMORY_HEADER, lines, shorts, cap, q.count)
    shown_ids = {ln.key for ln in shown}
    layout = MemoryLayout(
        stable_ids=tuple(ln.key for ln in shown if ln.key != _ENTITY_KEY),
        anchor_count=sum(1 for ln in shown if ln.section == "anchors"),
        known_ids=frozenset(it.id for it in live),
        tiers=tiers,
        entity_line=entities if _ENTITY_KEY in shown_ids else "",
        ordinal=q.current_ordinal,
        short_ids=frozenset(ln.key for ln in shown if ln.short),
    )
    return layout, back


def _stable(
    layout: MemoryLayout, by_id: Mapping[str, MemoryItem], q: MemoryQuery, p: FullParams
) -> Generated:
    """The block as the layout has it, rendered from the items' current state."""
    if not layout.stable_ids and not layout.entity_line:
        return nothing("anchors")
    items = [by_id[i] for i in layout.stable_ids]
    lines = [core_line(it) if it.id in layout.short_ids else render_item_line(it) for it in items]
    if layout.entity_line:
        lines.append(layout.entity_line)
    content = "\n".join([MEMORY_HEADER, *lines])
    tokens = q.count(content) + MESSAGE_OVERHEAD_TOKENS
    anchors = lines[: layout.anchor_count]
    anchor_tokens = (
        tokens
        if len(anchors) == len(lines)
        else min(
            tokens,
            q.count(MEMORY_HEADER)
            + MESSAGE_OVERHEAD_TOKENS
            + sum(q.count(ln) + 1 for ln in anchors),
        )
    )
    block = _block_scoring(p.scoring)
    scores = {
        it.id: score_item(it, current_ordinal=q.current_ordinal, query_terms=(), params=block)
        for it in items
    }
    candidates = [
        Candidate(
            "item",
            it.id,
            q.count(line),
            scores[it.id],
            "kept",
            ("anchor: " if i < layout.anchor_count else "")
            + "fits working-memory share"
            + (" (core clauses)" if it.id in layout.short_ids else ""),
            "anchors" if i < layout.anchor_count else "working_memory",
        )
        for i, (it, line) in enumerate(zip(items, lines, strict=False))
    ]
    parts = [
        Section("anchors", anchor_tokens, len(anchors)),
        Section("working_memory", tokens - anchor_tokens, len(lines) - len(anchors)),
    ]
    return Generated([content], tokens, parts, candidates, list(layout.stable_ids))


@dataclass(frozen=True, slots=True)
class _DeltaGroups:
    """The items the memory delta may show, in priority order (`_delta_groups`)."""

    new: list[MemoryItem]  # stated by the user since the layout: all of them must fit
    back: list[MemoryItem]  # forgotten earlier, mentioned by the input: re-promoted
    data: list[MemoryItem]  # what tools returned or the assistant inferred: by score


def _delta_groups(
    layout: MemoryLayout, q: MemoryQuery, p: FullParams, shown_in_place: frozenset[str]
) -> _DeltaGroups:
    """Sort the items not on show (in the block or in place) into the delta's groups."""
    stable = set(layout.stable_ids) | shown_in_place
    shown_statuses = _LIVE | {"archived"}

    def faded(it: MemoryItem) -> bool:
        return it.status == "archived" or layout.tiers.get(it.id, "active") != "active"

    new = [
        it
        for it in q.items
        if it.status in _LIVE
        and is_user_stated(it)
        and it.id not in layout.known_ids
        and it.id not in stable
    ]
    back = [
        it
        for it in q.items
        if it.id not in stable
        and it.status in shown_statuses
        and faded(it)
        and (p.include_inferred or is_user_stated(it))
        and mentioned(it, q.terms, q.text, p.forgetting)
    ]
    taken = {it.id for it in (*new, *back)} | shown_in_place
    data = [
        it
        for it in q.items
        if p.include_inferred
        and it.status in _LIVE
        and not is_user_stated(it)
        and not faded(it)
        and it.id not in taken
    ]
    return _DeltaGroups(new, back, data)


def _delta_candidates(
    lines: Sequence[Line], shown_ids: Collection[str], scores: Mapping[str, float], g: _DeltaGroups
) -> list[Candidate]:
    """The account of the delta's lines: shown (and why) or over its share."""
    back_ids = {it.id for it in g.back}

    def reason(key: str) -> str:
        if key in back_ids:
            return "re-promoted: the current input mentions it"
        if key in scores and any(it.id == key for it in g.data):
            return "tool/assistant data: shown late"
        return "new since the memory block was laid out"

    return [
        Candidate(
            "item",
            ln.key,
            ln.tokens,
            scores[ln.key],
            ("recalled" if ln.key in back_ids else "kept") if ln.key in shown_ids else "dropped",
            reason(ln.key) if ln.key in shown_ids else "over memory-delta share",
            "memory_delta",
        )
        for ln in lines
    ]


def _delta(
    layout: MemoryLayout,
    q: MemoryQuery,
    cap: int,
    p: FullParams,
    shown_in_place: frozenset[str] = frozenset(),
) -> tuple[Generated, tuple[str, ...], bool]:
    """The late memory section: what changed since the layout, and data.

    In priority order: what the user stated since the block was laid out
    (all of it must fit, else the caller lays the block out again), items
    forgotten earlier that the input mentions (re-promoted), then what tools
    returned or the assistant inferred, by score. That last kind never goes
    into the block: tool results are refreshed all the time (an issue's
    status, a query's rows), and each refresh would rebuild the block.

    Items an earlier late section still shows in place (`shown_in_place`,
    `policies.assemble.placed`) are left out: they are in the prompt already.

    Returns (section, re-promoted ids, fits).
    """
    g = _delta_groups(layout, q, p, shown_in_place)
    if not (g.new or g.back or g.data):
        return nothing("memory_delta"), (), True
    scores = {
        it.id: score_item(
            it, current_ordinal=q.current_ordinal, query_terms=q.terms, params=p.scoring
        )
        for it in (*g.new, *g.back, *g.data)
    }
    lines = [
        Line(it.id, text, q.count(text), (0, it.source_ordinal, it.id), "memory_delta")
        for group in (g.new, g.back, g.data)
        for it in rank_items(group, scores)
        for text in (render_item_line(it),)
    ]
    shown, content, tokens = fit_lines(DELTA_HEADER, lines, cap, q.count)
    shown_ids = {ln.key for ln in shown}
    if any(it.id not in shown_ids for it in g.new):
        return nothing("memory_delta"), (), False
    if not shown:
        dropped = [
            Candidate("item", ln.key, ln.tokens, 0.0, "dropped", "over memory-delta share")
            for ln in lines
        ]
        return nothing("memory_delta", dropped), (), True
    candidates = _delta_candidates(lines, shown_ids, scores, g)
    ids = [ln.key for ln in shown]
    back_ids = {it.id for it in g.back}
    repromoted = tuple(i for i in ids if i in back_ids)
    section = Generated(
        [content], tokens, [Section("memory_delta", tokens, len(shown))], candidates, ids
    )
    return section, repromoted, True


def plan_memory(
    q: MemoryQuery,
    layout: MemoryLayout | None,
    memory_cap: int,
    delta_cap: int,
    p: FullParams,
    incidental_cap: int | None = None,
    in_place: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset()),
    room: int | None = None,
) -> MemoryPlan:
    """The working-memory block and its delta, reusing `layout` when it still holds.

    The layout is laid out again when it is missing, when an item on show is
    no longer current, when the block no longer fits its share, or when the
    new items do not fit the delta's share.

    `in_place`: items earlier late sections show in place (`policies.assemble.placed`):
    those of memory-delta notes (which hold only while the layout does) and
    those of others; the delta leaves them out.

    `room`: what block and delta may take together. A block that borrowed up to
    all of it leaves the delta only the rest (else the two would outgrow the budget).
    """

    def delta_room(stable: Generated) -> int:
        return delta_cap if room is None else max(0, min(delta_cap, room - stable.tokens))

    in_delta_notes, in_other_notes = in_place
    by_id = {it.id: it for it in q.items}
    if layout is not None and any(
        by_id.get(i) is None or by_id[i].status not in _LIVE for i in layout.stable_ids
    ):
        layout = None
    if layout is not None:
        stable = _stable(layout, by_id, q, p)
        delta, back, fits = _delta(
            layout, q, delta_room(stable), p, in_delta_notes | in_other_notes
        )
        if stable.tokens <= memory_cap and fits:
            candidates = _account(q, layout, delta, p)
            if back:
                # Shown in the delta from now on, until the next layout.
                layout = replace(
                    layout,
                    tiers={**layout.tiers, **dict.fromkeys(back, "active")},
                    known_ids=layout.known_ids - set(back),
                )
            return MemoryPlan(stable, delta, candidates, layout, False, back)
    incidental = memory_cap if incidental_cap is None else min(memory_cap, incidental_cap)
    layout, back = _rebuild(q, memory_cap, incidental, p)
    stable = _stable(layout, by_id, q, p)
    delta, more, _ = _delta(layout, q, delta_room(stable), p, in_other_notes)
    candidates = _account(q, layout, delta, p)
    return MemoryPlan(stable, delta, candidates, layout, True, (*back, *more))


def _status_candidates(q: MemoryQuery) -> list[Candidate]:
    return [
        Candidate("item", it.id, 0, 0.0, "dropped", f"status: {it.status}")
        for it in q.items
        if it.status not in _LIVE and it.status != "archived"
    ]


def _account(
    q: MemoryQuery, layout: MemoryLayout, delta: Generated, p: FullParams
) -> list[Candidate]:
    """Why each item not on show is not (those on show account for themselves)."""
    shown = set(layout.stable_ids) | {c.ref for c in delta.candidates}
    out = _status_candidates(q)
    for it in q.items:
        if it.id in shown or it.status not in _LIVE | {"archived"}:
            continue
        if not p.include_inferred and not is_user_stated(it):
            out.append(Candidate("item", it.id, 0, 0.0, "dropped", "inferred items excluded"))
            continue
        tier = layout.tiers.get(it.id, "active")
        if it.status == "archived" or tier != "active":
            out.append(Candidate("item", it.id, 0, 0.0, *_tier_reason(tier)))
        else:
            out.append(Candidate("item", it.id, 0, 0.0, "dropped", "over working-memory share"))
    return out


# --- replay ---------------------------------------------------------------------------


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


# --- summary and recall ---------------------------------------------------------------


def plan_summary(
    chunks: Sequence[SummaryChunk],
    cap: int,
    count: TokenCounter,
    stale: StaleFilter | None,
    shown: Shown | None = None,
) -> tuple[Generated, int]:
    """The rolling summary, one message per chunk, within `cap`; and how many
    of its lines had to be left out to fit.

    `shown`: item texts the working-memory block already shows verbatim; the
    summary does not repeat them (the block's layout is stable between
    rebuilds, so this does not unsettle the summary's text either).
    """
    lines = sum(len(c.lines) for c in chunks)
    if not lines:
        return nothing("summary"), 0
    texts, tokens, dropped = fit_chunks(chunks, cap, count, stale, shown)
    ref = f"{chunks[0].start}-{chunks[-1].upto - 1}"
    if not texts:
        cand = Candidate("summary", ref, 0, 0.0, "dropped", "over summary share")
        return nothing("summary", [cand]), lines
    reason = "fits summary share" if not dropped else f"{dropped} low-score lines over its share"
    cand = Candidate("summary", ref, tokens, 0.0, "kept", reason, "summary")
    return Generated(texts, tokens, [Section("summary", tokens, len(texts))], [cand]), dropped


def plan_recall(
    hits: Sequence[RecallHit],
    query: Collection[str],
    cap: int,
    snippet_chars: int,
    count: TokenCounter,
    stale: StaleFilter | None,
    turn_at: Callable[[int], Turn | None] | None = None,
    quoted_in_place: Collection[int] = (),
) -> Generated:
    """Dated snippets of the recalled turns (best first until the share is full),
    shown in conversation order.

    `turn_at(ordinal)`: an older turn that may be shown, else None. With it, a
    recalled question brings the start of its reply, and a recalled answer
    the question before it (`policies.assemble.recall.companion`), placed right after
    it in priority so the exchange is shown whole when it fits. Turns an
    earlier late section still quotes in place (`quoted_in_place`) are not
    quoted twice.
    """
    if not hits or cap <= 0:
        return nothing("recalled")
    quoted: set[str] = set()
    lines: list[Line] = []
    reasons: dict[str, tuple[float, str]] = {
        str(o): (0.0, "quoted in place by an earlier late section") for o in quoted_in_place
    }
    budget = cap - count(RECALL_HEADER) - MESSAGE_OVERHEAD_TOKENS
    for rank, hit in enumerate(hits):
        if budget <= 0:
            break  # the rest could not fit: not worth rendering
        if str(hit.ordinal) in reasons:
            continue  # already shown as another hit's companion
        for k, (ordinal, role, date, sentences) in enumerate(
            _hit_parts(hit, query, snippet_chars, turn_at, reasons)
        ):
            if role == "user":
                sentences = [drop_retracted(x) for x in sentences]
            if stale:
                sentences = stale.clean(sentences, quoted, ordinal, role)
            if not sentences:
                break  # nothing left of the hit: its companion means nothing alone
            label = f"[{date}] " if date else ""
            text = f"{label}{role}: {' '.join(sentences)}"
            line = Line(str(ordinal), text, count(text), (ordinal, rank, ""), "recalled")
            fits = line.tokens + 1 <= budget
            if k and not fits:
                break  # a companion only where it fits with its hit (see `fit_lines`)
            lines.append(line)
            if not fits:
                break  # the hit is over the share, its companion must not take its place
            budget -= line.tokens + 1
    shown, content, tokens = fit_lines(RECALL_HEADER, lines, cap, count)
    shown_keys = {ln.key for ln in shown}
    candidates = [
        Candidate(
            "turn",
            ln.key,
            ln.tokens,
            reasons[ln.key][0],
            "recalled" if ln.key in shown_keys else "dropped",
            reasons[ln.key][1] if ln.key in shown_keys else "over recall share",
            "recalled",
        )
        for ln in lines
    ]
    contents = [content] if content else []
    return Generated(contents, tokens, [Section("recalled", tokens, len(shown))], candidates)


def _hit_parts(
    hit: RecallHit,
    query: Collection[str],
    snippet_chars: int,
    turn_at: Callable[[int], Turn | None] | None,
    reasons: dict[str, tuple[float, str]],
) -> list[tuple[int, str, str, list[str]]]:
    """What one recall hit shows: its snippet, then its companion (the other
    half of its exchange) when `turn_at` gives one not shown yet; each part's
    (score, reason) goes into `reasons`, by ordinal."""
    parts = [(hit.ordinal, hit.role, hit.date, snippet(hit.text, query, snippet_chars))]
    reasons[str(hit.ordinal)] = (hit.score, "relevant to the current input (BM25)")
    if turn_at is not None:
        comp = _companion(hit, turn_at, snippet_chars // 2)
        if comp is not None and str(comp.ordinal) not in reasons:
            turn = turn_at(comp.ordinal)
            date = (marker_date(turn.text) if turn else None) or hit.date
            parts.append((comp.ordinal, comp.role, date, comp.sentences))
            reasons[str(comp.ordinal)] = (hit.score, comp.reason)
    return parts


def _companion(
    hit: RecallHit, turn_at: Callable[[int], Turn | None], max_chars: int
) -> Companion | None:
    def near(ordinal: int) -> tuple[int, str, str] | None:
        turn = turn_at(ordinal)
        if turn is None or turn.role not in ("user", "assistant") or not turn.text.strip():
            return None
        return turn.ordinal, turn.role, turn.text

    return companion(hit.text, near(hit.ordinal - 1), near(hit.ordinal + 1), max_chars)
