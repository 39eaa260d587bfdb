"""The one live value a new plan revises, when no word ties the two.

"Book the movers for Saturday March 14 then" shares no word with "Target
move day is Saturday March 7"; "一共要五十二本" none with "先说个情况：印45本，
每本不超过120块"; "那就按10月18号去报备吧" only the old date it gives a reason
about. Word overlap cannot link them, yet a reader does: the sentence says
it adjusts the plan, and the conversation holds one value of that kind.

So: when a sentence marks itself as an adjustment (a consequence: "then",
"那就…"; a total: "一共", "in total"; a figure given as settled: "confirmed",
"确定"; a change word; or it quotes the old value itself) and exactly one
live user item holds a rival value (same kind and unit, another number, of a
comparable size), that item is what it revises. With two or more rivals
("3 nights in Kyoto", "2 nights in Osaka") nothing is decided here: the words
must say which.
"""

from __future__ import annotations

from collections.abc import Sequence

from policies.language.lexicon import Lexicon
from policies.language.values import Value, extract_values, numeric_closeness, value_signature
from policies.memory.slots import REVISABLE_KINDS, same_slot
from policies.types import MemoryItem

# "…, so keys come on the 14th. Book the van for the 14th then.", "那就按三万来做吧":
# what follows from news just told is the plan now.
CONSEQUENCE = Lexicon.named("rivals", "consequence")
# "一共要五十二本", "sixty-one in total": a count restated as the whole.
TOTAL = Lexicon.named("rivals", "total")
# "RSVPs closed at ninety-eight", "fourteen trainees confirmed", "seats fourteen, so
# that's our number", "确定来三十五位", "最终定了12个": a figure given as settled,
# the count the plan now uses (not "not confirmed yet", "还不确定").
SETTLED = Lexicon.named("rivals", "settled")
# A rival must be close enough to be the same setting adjusted (10月11号 → 10月18号,
# 45 → 52 copies), not a value of another scale.
_CLOSE = 0.5


def marks_adjustment(text: str, change: int) -> bool:
    """Does the sentence say it adjusts the plan: a consequence, a total, a change cue?"""
    return change >= 1 or bool(
        CONSEQUENCE.search(text) or TOTAL.search(text) or SETTLED.search(text)
    )


def precise_values(values: Sequence[Value]) -> list[Value]:
    """Values that name one setting exactly: a number in a revisable kind (a weekday
    or "next month" is too vague to revise a calendar date by itself), a count of a
    named thing (not a bare "个")."""
    return [
        v for v in values
        if v.kind in REVISABLE_KINDS and v.number is not None
        and not (v.kind == "qty" and v.unit in _GENERIC_UNITS)
    ]  # fmt: skip


def sole_rival(
    text: str, values: Sequence[Value], items: Sequence[MemoryItem]
) -> MemoryItem | None:
    """The only item holding a rival of a value of `text`, if exactly one does."""
    found = sole_rival_pair(text, values, items)
    return found[0] if found else None


def sole_rival_pair(
    text: str, values: Sequence[Value], items: Sequence[MemoryItem]
) -> tuple[MemoryItem, tuple[Value, Value] | None] | None:
    """The only item holding a rival of a value of `text`, with the (new, old) pair
    when all rivals found name one old value.

    The pair is what the sentence revises: "正好十期" after "先排8场，时间放在周日"
    revises the count, not the weekday that the new start date merely sits beside.

    Both sides must name one setting: a breakdown ("5桌, 6桌 and 3桌") revises no
    total, and an item listing several dates is no single date. A sentence that
    also restates the old value ("now 8 of us plus 10 locals, 18 in all") adds to
    it, unless it says the plan follows from news ("…灯光节，那就按18号").
    """
    found: list[tuple[MemoryItem, Value, Value]] = []
    precise = precise_values(values)
    for nv in _totalled(text, precise):
        holders = []
        for it in items:
            olds = _nearest_within(nv, [ov for ov in extract_values(it.value) if _rivals(nv, ov)])
            if olds:
                holders.append((it, olds))
        holders = _nearest_by_far(nv, holders)
        if len(holders) != 1 or len(holders[0][1]) != 1:
            continue
        it, (ov,) = holders[0]
        if ov.number == nv.number or numeric_closeness(nv, ov) < _CLOSE:
            continue
        old = value_signature(ov)
        others = {value_signature(v) for v in precise if same_slot(v, nv)} - {old}
        if len(others) > 1:
            continue  # a breakdown, not one new value
        restated = any(value_signature(v) == old for v in values)
        if restated and not CONSEQUENCE.search(text):
            continue
        found.append((it, nv, ov))
    if not found or any(it is not found[0][0] for it, _, _ in found):
        return None
    item, nv, ov = found[0]
    one_old = all(value_signature(o) == value_signature(ov) for _, _, o in found)
    return item, ((nv, ov) if one_old else None)


def _totalled(text: str, values: list[Value]) -> list[Value]:
    """The value a total marker is attached to ("算下来…一共四十天", "sixty-one in total"),
    when it is: "8月3号落地，一共四十天" restates the length, not the date beside it."""
    marks = [
        m.span() for pattern in (TOTAL.en, TOTAL.zh) if pattern is not None
        for m in pattern.finditer(text)
    ]  # fmt: skip
    near = [
        v for v in values
        if any(0 <= v.start - end <= 4 or 0 <= start - v.end <= 2 for start, end in marks)
    ]  # fmt: skip
    return near or values


_GENERIC_UNITS = frozenset({"", "个", "time", "?"})
# "around 1.8k" after "$2,000 for everything" and "a deposit of $530": an amount
# adjusted stays near its old size, so a rival within this ratio wins over rivals
# at least `_FAR` times away. Dates are all "near" one another: never decided so.
_NEAR, _FAR, _APART = 1.25, 2.0, 10.0


def _nearest_by_far(
    new: Value, holders: list[tuple[MemoryItem, list[Value]]]
) -> list[tuple[MemoryItem, list[Value]]]:
    if len(holders) < 2 or new.kind == "date" or not new.number:
        return holders

    def ratio(old: Value) -> float:
        a, b = abs(new.number or 0.0), abs(old.number or 0.0)
        return max(a, b) / min(a, b) if min(a, b) > 0 else float("inf")

    ranked = sorted(
        ((min(ratio(ov) for ov in olds), it, olds) for it, olds in holders), key=lambda x: x[0]
    )
    (best, it, olds), rest = ranked[0], ranked[1:]
    if len(olds) == 1 and (
        (best <= _NEAR and all(r >= _FAR for r, _, _ in rest))
        # "five grand" after "raise $3,000" and "$30 a ticket": within a factor of two,
        # the others an order of magnitude away.
        or (best <= _FAR and all(r >= _APART for r, _, _ in rest))
    ):
        return [(it, olds)]
    return holders


def _nearest_within(new: Value, olds: list[Value]) -> list[Value]:
    """One sentence holding two amounts ("raise $3,000, tickets $20"): the one near
    the new amount ("five grand") is its rival when the other is an order of magnitude
    away, as between items (`_nearest_by_far`). Amounts of money only: counts in one
    sentence ("4、5间") are a range, and a cap beside them may bound something else."""
    if len(olds) < 2 or new.kind != "money" or not new.number:
        return olds

    def ratio(old: Value) -> float:
        a, b = abs(new.number or 0.0), abs(old.number or 0.0)
        return max(a, b) / min(a, b) if min(a, b) > 0 else float("inf")

    ranked = sorted(olds, key=ratio)
    if ratio(ranked[0]) <= _FAR and all(ratio(ov) >= _APART for ov in ranked[1:]):
        return ranked[:1]
    return olds


def _rivals(new: Value, old: Value) -> bool:
    """Could `old` be the earlier version of `new`? The same slot, and a count of the
    very same thing ("45本" / "五十二本", not "3个医生" / "2遍")."""
    if not same_slot(new, old) or old.number is None:
        return False
    if new.kind == "date" and old.kind == "date":
        return True
    if new.kind == "qty" and old.kind == "qty":
        return new.unit == old.unit
    return True
