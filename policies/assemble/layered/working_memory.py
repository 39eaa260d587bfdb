"""Working memory in a layered context: the block and its delta, kept between requests.

Working memory is laid out once (a `MemoryLayout`) and then kept: the block
near the top of the prompt stays byte-identical between requests (the
provider's prompt cache), and items that appear since go to a short *delta*
section placed late. The block is laid out again only when one of its items
stopped being current (it must not stay on show), when the delta outgrows
its share, or when the budget no longer fits it. Graded forgetting is
applied at that moment (`policies.memory.forgetting`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from policies.assemble.generated import Generated
from policies.assemble.layered.memory_block import LIVE, MemoryQuery, rebuild_block, render_block
from policies.assemble.layered.memory_delta import plan_delta
from policies.assemble.params import FullParams
from policies.memory.scoring import is_user_stated
from policies.types import Candidate, Decision, MemoryLayout, Tier


@dataclass(slots=True)
class MemoryPlan:
    stable: Generated
    delta: Generated
    candidates: list[Candidate]
    layout: MemoryLayout
    rebuilt: bool
    repromoted: tuple[str, ...]


def _tier_reason(tier: Tier) -> tuple[Decision, str]:
    if tier == "compressible":
        return "compressed", "forgetting: compressible (summary only)"
    if tier == "discardable":
        return "compressed", "forgetting: discardable (entity index only)"
    return "dropped", "forgetting: archived"


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
        by_id.get(i) is None or by_id[i].status not in LIVE for i in layout.stable_ids
    ):
        layout = None
    if layout is not None:
        stable = render_block(layout, by_id, q, p)
        delta, back, fits = plan_delta(
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
    layout, back = rebuild_block(q, memory_cap, incidental, p)
    stable = render_block(layout, by_id, q, p)
    delta, more, _ = plan_delta(layout, q, delta_room(stable), p, in_other_notes)
    candidates = _account(q, layout, delta, p)
    return MemoryPlan(stable, delta, candidates, layout, True, (*back, *more))


def _status_candidates(q: MemoryQuery) -> list[Candidate]:
    return [
        Candidate("item", it.id, 0, 0.0, "dropped", f"status: {it.status}")
        for it in q.items
        if it.status not in LIVE and it.status != "archived"
    ]


def _account(
    q: MemoryQuery, layout: MemoryLayout, delta: Generated, p: FullParams
) -> list[Candidate]:
    """Why each item not on show is not (those on show account for themselves)."""
    shown = set(layout.stable_ids) | {c.ref for c in delta.candidates}
    out = _status_candidates(q)
    for it in q.items:
        if it.id in shown or it.status not in LIVE | {"archived"}:
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
