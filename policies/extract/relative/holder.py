"""Which live item holds the quantity a change changes.

A wrong link presents a made-up number as the requirement, which is worse than
leaving the change unresolved: the best-fitting quantity wins, among equals the most
recent item, and two equal quantities of that item mean no pick at all. Superseded
items whose quantity no later item restated stay candidates (`dormant`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from policies.extract.relative.amounts import ZH_PARTICLES, Change
from policies.extract.relative.clauses import clause_at, own_text
from policies.extract.relative.fitting import (
    CUE_WORDS,
    counted_words,
    fit_level,
    fits_measure,
    topic_terms,
)
from policies.extract.relative.held import USED_TO_BE, Held, held_values
from policies.language.text import terms
from policies.types import MemoryItem


@dataclass(frozen=True, slots=True)
class Pick:
    item: MemoryItem
    held: Held
    level: float


def pick_holder(change: Change, previous: str, items: Sequence[MemoryItem]) -> Pick | None:
    now = topic_terms(change.sentence, change)
    before = set(terms(previous)) - CUE_WORDS
    best: list[Pick] = []
    for item in items:
        for held in held_values(item.value):
            clause = clause_at(own_text(item.value), held.start, held.end)
            if USED_TO_BE.search(clause):
                continue
            level = fit_level(change, held, clause, now, before)
            if level <= 0:
                continue
            if not best or level > best[0].level:
                best = [Pick(item, held, level)]
            elif level == best[0].level:
                best.append(Pick(item, held, level))
    if not best:
        return None
    latest = max(p.item.source_ordinal for p in best)
    recent = [p for p in best if p.item.source_ordinal == latest]
    # Two quantities of the most recent item fit equally: which one is meant is unclear.
    if len({(p.item.id, p.held.start) for p in recent}) > 1:
        return None
    return recent[0]


def states_new_value(change: Change, held: Held) -> bool:
    """ "换成10月27号的航班，晚一周", "少订一间，那就是4间吧": the sentence also says the
    new value itself; that is an absolute change, which the revision resolver links."""
    text = change.sentence
    rest = text[: change.start] + " " * (change.end - change.start) + text[change.end :]
    return any(_same_quantity(held, h) for h in held_values(rest))


def dormant(history: Sequence[MemoryItem], change: Change) -> list[MemoryItem]:
    """Superseded items whose quantity no later item restated.

    A supersession that does not restate the quantity (a rule reworded, an
    item replaced by an unrelated one) leaves the number as the user last
    said it: "no more than 4 fish" is still the cap after a sentence about
    the lease took its place. What the user withdrew (revoked) is not.
    """
    by_id = {it.id: it for it in history}
    out: list[MemoryItem] = []
    for item in history:
        if item.status != "superseded" or item.source != "user":
            continue
        held = [h for h in held_values(item.value) if fits_measure(change, h)]
        if not held:
            continue
        successor, seen, restated = by_id.get(item.superseded_by or ""), set(), False
        while successor is not None and successor.id not in seen and not restated:
            seen.add(successor.id)
            later = held_values(successor.value)
            restated = any(_same_quantity(a, b) for a in held for b in later)
            successor = by_id.get(successor.superseded_by or "")
        if not restated:
            out.append(item)
    return out


def _what(held: Held) -> str:
    """What a quantity counts: "fish", "保安", "箱"; a currency; "" for times and dates."""
    if held.measure != "count":
        return held.unit
    if re.search(r"[\u4e00-\u9fff]", held.window):
        return held.unit or ZH_PARTICLES.sub("", held.window[1:])[:2]
    words = counted_words(held.window)
    return words[0] if words else ""


def _same_quantity(a: Held, b: Held) -> bool:
    """Do two quantities measure the same thing (so that `b` restates `a`)?"""
    return a.measure == b.measure and (_what(a) == _what(b) or not _what(a) or not _what(b))
