"""The memory delta: the late section of what changed since the block was laid out.

New items go here instead of into the block near the top, so the block and
the prompt's cached prefix stay as they were until the block is laid out
again (`policies.assemble.layered.working_memory`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from policies.assemble.generated import DELTA_HEADER, Generated, nothing
from policies.assemble.item_lines import render_item_line
from policies.assemble.layered.memory_block import LIVE, MemoryQuery
from policies.assemble.lines import Line, fit_lines
from policies.assemble.params import FullParams
from policies.memory.forgetting import mentioned
from policies.memory.scoring import is_user_stated, rank_items, score_item
from policies.types import Candidate, MemoryItem, MemoryLayout, Section


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
    shown_statuses = LIVE | {"archived"}

    def faded(it: MemoryItem) -> bool:
        return it.status == "archived" or layout.tiers.get(it.id, "active") != "active"

    new = [
        it
        for it in q.items
        if it.status in LIVE
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
        and it.status in LIVE
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


def plan_delta(
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
