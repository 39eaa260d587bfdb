"""Clues the linkers share (`policies.extract.linking`): thresholds, and predicates on a
statement and an item ("the same named slot", "a past account", "a rate of the
same sort"), with the patterns they read.

The strategies that used to live here as one `Resolver` class are the linking
chain now; this module keeps what several of them read, so that a clue has one
definition.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from policies.extract.statements import Statement
from policies.language.matching import (
    weighted_terms,
)
from policies.language.value_roles import (
    attribute_clash,
    conditional,
    conditional_before,
    offer_clash,
    share_clash,
)
from policies.language.values import (
    Value,
    bound_side,
    extract_values,
    is_split,
    measure,
    measures_compatible,
    numeric_closeness,
    value_signature,
)
from policies.memory.slots import (
    NAMED_SLOTS,
    REVISABLE_KINDS,
    named_slot,
    same_amount_verb,
    same_slot,
    same_unit_change,
)
from policies.rulebook import Joined
from policies.types import RULE_TYPES, MemoryItem

# The cue lexicons below are rules of policies/rules/<lang>/revision.yaml, each read as
# one pattern of both halves; these put the Chinese half first.
_ZH_FIRST = ("zh", "en")

_VALUE_ONLY_KINDS = REVISABLE_KINDS | {"time"}


def _same_day_told_twice(old: MemoryItem, changed: Value, v: Value, st: Statement) -> bool:
    """ "Saturday, June 7": one day told as a weekday and a date. A new day ("Sunday
    the 15th") replaces both; the date left behind would still say the old day."""
    if not (changed.kind == v.kind == "date" and (changed.number is None) != (v.number is None)):
        return False
    if any(value_signature(x) == value_signature(v) for x in st.values):
        return False  # the statement keeps that one
    near = old.value[max(0, changed.start - len(v.text) - 4) : changed.end + len(v.text) + 4]
    return v.text in near and any(x.kind == "date" for x in st.strong_values)


def _asserted(st: Statement) -> tuple[Value, ...]:
    """The values `st` puts forward, not those it denies ("forget $900 as the catering
    max" puts no $900 forward: it is no new value for another amount)."""
    denied = [t for t in st.contrast if any(ch.isdigit() for ch in t)]
    return tuple(v for v in st.strong_values if not any(v.text in t or t in v.text for t in denied))


def _split_restated(st: Statement, old: MemoryItem) -> bool:
    """Do both the statement and the item give two or more shares (a whole split)?"""
    new = [v for v in st.strong_values if v.kind == "percent"]
    held = [v for v in extract_values(old.value) if v.kind == "percent"]
    return len(new) >= 2 and len(held) >= 2


def _quotes_another_old_value(st: Statement, item: MemoryItem) -> bool:
    """The statement quotes the old value it corrects ("系统里记的850…850是去年的价钱",
    "not $950") and `item` does not hold it: the correction is of that value, wherever
    it was said (a one-off, the assistant's table), not of another number of the user's."""
    quoted = [
        v for token in st.contrast for v in extract_values(token) if v.number is not None
    ]  # fmt: skip
    if not quoted:
        return False
    # Held however it is written there: the same number, or the very words ("不用每天扎了"
    # quotes "每天" of "每天100ml", read there as part of a daily amount).
    numbers = {v.number for v in quoted}
    return not any(v.number in numbers for v in extract_values(item.value)) and not any(
        v.text in item.value for v in quoted
    )


def _other_role(st: Statement, item: MemoryItem) -> bool:
    """Every value `st` could revise in `item` plays another role there or here
    (`policies.language.value_roles`): an attribute of a noun the other never names ("the
    24-hour clock" / "covering 10 hours"), a price on something for sale beside the
    user's own amount ("was selling a bike for $600" / "budgeting $1,500"), or a case
    under a condition beside a plain value ("if they sign for a year, as low as $22" /
    "Pro at $29"). Only links resting on the value alone consult this; a change cue
    may still name the item."""
    old_values = extract_values(item.value)
    pairs = [
        (nv, ov) for nv in st.strong_values for ov in old_values
        if same_slot(nv, ov) and value_signature(nv) != value_signature(ov)
    ]  # fmt: skip
    if not pairs:
        return False
    case = conditional(st.text) and not conditional(item.value)
    return all(
        attribute_clash(st.text, nv, item.value, ov)
        or share_clash(st.text, nv, item.value, ov)
        or offer_clash(st.text, nv, item.value, ov)
        or (case and conditional_before(st.text, nv))
        for nv, ov in pairs
    )


def _same_named_slot(st: Statement, item: MemoryItem) -> bool:
    """Both name the same kind of setting ("budget", "deadline", ...) and the statement
    holds a value to replace it with."""
    if item.slot not in NAMED_SLOTS or not st.strong_values:
        return False
    return named_slot(st.text) == item.slot


def _near_same_words(st: Statement, item: MemoryItem) -> bool:
    """ "挂三百二十万" / "明天在App上挂308万": Chinese one-character words are no terms,
    so the shared verb before the amounts is what ties them."""
    return bool(st.strong_values) and same_amount_verb(st.text, item.value)


def _same_threshold_rule(st: Statement, item: MemoryItem) -> bool:
    """Two rules bounding the same side ("超过500块的都要留票" / "300以上的都得留票"):
    a conversation rarely keeps two such thresholds, so the newer one replaces."""
    if item.type not in RULE_TYPES:
        return False
    new = [v for v in st.values if v.kind == "bound"]
    old = [v for v in extract_values(item.value) if v.kind == "bound"]
    return any(
        bound_side(a) == bound_side(b) and measures_compatible(a, b) for a in new for b in old
    )


# The least the user will take, however put: "底价185", "低于这个不租", "给到一百八我就租，
# 再低不谈", "my floor is $185k", "if they offer 180 I'll sign, anything lower and I walk".
_FLOOR = Joined("revision", "floor", _ZH_FIRST)


def _same_floor(st: Statement, item: MemoryItem) -> bool:
    """Two rules on the least the user will take for the same thing, the newer
    re-set: a sale has one floor, however the user phrases it the second time."""
    if item.type not in RULE_TYPES or not (_FLOOR.search(st.text) and _FLOOR.search(item.value)):
        return False
    new = [v for v in st.strong_values if v.kind == "money"]
    old = [v for v in extract_values(item.value) if v.kind == "money"]
    return any(a.number != b.number and numeric_closeness(a, b) >= 0.5 for a in new for b in old)


# A cadence of output ("每周发3篇", "一周更五条"): what a publishing plan is paced by.
_OUTPUT_CADENCE = Joined("revision", "output_cadence")


def _rates(values: Sequence[Value]) -> list[Value]:
    """Interest rates ("6.9% APR"), connection speeds ("500 Mbps", "a gig") and
    cadences of output ("每周发3篇")."""
    return [
        v for v in values
        if (v.kind == "percent" and v.unit == "rate") or measure(v) == "mbps"
        or (v.kind == "freq" and _OUTPUT_CADENCE.search(v.text) is not None)
    ]  # fmt: skip


# An amount said per head: "人均800块", "每人就六百五", "$90 per head", "75 a head".
# Not "each": "$15 each" prices an item, and two items' prices are no one standard.
_PER_HEAD_BEFORE = re.compile(
    r"(?:人均|每人|每位|每个人|per (?:head|person))[^，。；,.;\d]{0,8}$", re.I
)
_PER_HEAD_AFTER = re.compile(r"^\s?(?:per (?:head|person)\b|a head\b|/人|一位|一人|每人)", re.I)


def _per_head(text: str) -> list[Value]:
    return [
        v for v in extract_values(text)
        if v.kind == "money"
        and (_PER_HEAD_BEFORE.search(text[max(0, v.start - 12) : v.start])
             or _PER_HEAD_AFTER.search(text[v.end : v.end + 12]))
    ]  # fmt: skip


def _same_rate(st: Statement, item: MemoryItem) -> bool:
    """A rate replaces the rate quoted before ("5.9%" after "6.9% APR", "a gig
    symmetrical" after "at least 500 Mbps", "一周更五条" after "每周发3篇", "人均就
    六百五" after "人均800块"): a conversation rarely tracks two interest rates,
    connection speeds, publishing cadences or spending standards per head at once."""
    new = _rates(st.strong_values) + _per_head(st.text)
    old = _rates(extract_values(item.value)) + _per_head(item.value)
    return any(
        a.number is not None and b.number is not None and a.number != b.number
        and numeric_closeness(a, b) >= 0.5
        for a in new for b in old
    )  # fmt: skip


def _splits(values: Sequence[Value]) -> list[Value]:
    """Shares of one whole between two parties: "60/40", "fifty-fifty", "六四分"."""
    return [v for v in values if v.kind == "percent" and is_split(v)]


def _shares_split(st: Statement, item: MemoryItem) -> bool:
    """A new split of the costs replaces the one said before ("let's do 60/40" after
    "split 50/50 between the families", "改成四六分" after "费用五五分"), in whatever
    words: a conversation rarely divides two different things between two parties."""
    new = _splits(st.strong_values)
    old = _splits(extract_values(item.value))
    return any(a.text != b.text for a in new for b in old)


# A number given as a guess: "大概16支队", "预计40人左右", "about 30 guests".
_ESTIMATE_BEFORE = re.compile(
    r"(?:大概|大约|约|预计|估计|差不多|about|around|roughly|approximately|an estimated"
    r"|maybe|probably)\W{0,2}[^，。,.;；]{0,4}$",
    re.IGNORECASE,
)
_ESTIMATE_AFTER = re.compile(r"^\s*(?:左右|上下|or so|-ish)", re.IGNORECASE)
# How it turned out: "最后确认", "实际来了", "we ended up with", "the final count".
_SETTLED_COUNT = Joined("revision", "settled_count", _ZH_FIRST)


def _estimated(text: str, v: Value) -> bool:
    return bool(
        _ESTIMATE_BEFORE.search(text[max(0, v.start - 12) : v.start])
        or _ESTIMATE_AFTER.match(text[v.end : v.end + 6])
    )


def _estimate_settled(st: Statement, item: MemoryItem) -> bool:
    """A count first given as a guess ("大概会有16支队", "about 30 guests") and now as
    it turned out ("最后确认是14个队", "we ended up with 26"): the same counted thing,
    a settled number, replaces the guess, whatever words go with either."""
    return _settled_pair(st, item) is not None


def _settled_pair(st: Statement, item: MemoryItem) -> tuple[Value, Value] | None:
    """The (settled, guessed) pair of `_estimate_settled`, if there is one."""
    if not _SETTLED_COUNT.search(st.text):
        return None
    new = [v for v in st.strong_values if v.kind == "qty" and not _estimated(st.text, v)]
    old = [v for v in extract_values(item.value) if v.kind == "qty" and _estimated(item.value, v)]
    return next(
        ((a, b) for a in new for b in old if same_unit_change([a], [b])),
        None,
    )


# What ends a clause: the words inside one clause are about the value in it.
# A colon is left out: "For the spring show: it's on May 3" heads its clause.
_CLAUSE_END = re.compile(r"[，,。;；!?！？—\n]|\.(?=\s|$)")


# A pronoun points back to the clause before: "My sitter is Tara, I pay her $18 an hour".
_PRONOUN = Joined("revision", "pronoun")


def _clause_terms(text: str, v: Value, back: bool = False) -> set[str]:
    """Content words of the clause holding `v` (its value text blanked out); with `back`,
    also of the clause before when this one refers to it by a pronoun."""
    ends = [m.end() for m in _CLAUSE_END.finditer(text, 0, v.start)]
    lo = ends[-1] if ends else 0
    if back and len(ends) > 0 and _PRONOUN.search(text[lo : v.start]):
        lo = ends[-2] if len(ends) > 1 else 0
    m = _CLAUSE_END.search(text, v.end)
    hi = m.start() if m else len(text)
    clause = text[lo : v.start] + " " + text[v.end : hi]
    return {t for t, w in weighted_terms(clause).items() if w >= 1}


def _value_clause_shared(st: Statement, item: MemoryItem) -> bool:
    """Said with no change cue, a new value revises an old one only when a word of its
    own clause is also in the old value's clause ("the shop opens at 8am" / "the shop
    opens at 7am"). A word shared from another clause names who or where, not what is
    set: "write check-in from 3pm, Rosa can't clean six rooms in two hours" shares Rosa
    with "Rosa arrives at 7:30", yet a check-in time is no arrival time; "刚跟老陈打完电话，
    …两周内打完" changes none of the hours 老陈 offered."""
    if _near_same_words(st, item):
        return True  # the same one-character verb before both amounts ("挂…万")
    old_values = extract_values(item.value)
    return any(
        _clause_terms(st.text, nv) & _clause_terms(item.value, ov, back=True)
        for nv in st.strong_values for ov in old_values
        if same_slot(nv, ov) and value_signature(nv) != value_signature(ov)
    )  # fmt: skip


def _title_core(v: Value) -> str:
    return re.sub(r"[《》“”\"'「」\s]", "", v.text).casefold()


def _title_key(v: Value) -> str:
    return "\x00title:" + _title_core(v)[:2]


def _renamed(new: Sequence[Value], old: Sequence[Value]) -> bool:
    """A title that extends or shortens the old one ("《雾港谜案》" after "暂定《雾港》"):
    the same work, renamed."""
    for a in new:
        for b in old:
            if a.kind != "title" or b.kind != "title":
                continue
            x, y = _title_core(a), _title_core(b)
            if x != y and min(len(x), len(y)) >= 2 and (x in y or y in x):
                return True
    return False


def _same_amount(a: Value, b: Value) -> bool:
    """The same amount or count, however written ("$18k" / "over $18,000")."""
    if a.number is None or a.number != b.number:
        return value_signature(a) == value_signature(b)
    return a.kind in ("money", "bound", "qty", "percent", "date", "time") and same_slot(a, b)
