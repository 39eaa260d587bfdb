"""The working-memory block near the top of the prompt: laid out, then rendered.

Laying it out (`rebuild_block`) grades, ranks and fits the user's stated
items once; rendering it (`render_block`) shows that layout from the items'
current state, so the block stays byte-identical between requests while it
holds (`policies.assemble.layered.working_memory` decides when it does not).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from policies.assemble.generated import MEMORY_HEADER, Generated, nothing
from policies.assemble.item_lines import core_line, render_item_line
from policies.assemble.lines import Line, fit_tiered
from policies.assemble.params import FullParams
from policies.memory.forgetting import entity_line, grade_items, mentioned
from policies.memory.scoring import (
    ScoringParams,
    is_user_stated,
    pick_anchors,
    rank_items,
    score_item,
)
from policies.memory.standing import cap_incidental
from policies.types import (
    MESSAGE_OVERHEAD_TOKENS,
    Candidate,
    MemoryItem,
    MemoryLayout,
    Section,
    Tier,
    TokenCounter,
)

LIVE = frozenset({"active", "pending"})
_ENTITY_KEY = "#entities"


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


def rebuild_block(
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
    live = [it for it in q.items if it.status in LIVE or it.id in back]
    # Only what the user stated goes into the block (see `memory_delta.plan_delta` for the rest).
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


def render_block(
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
