"""Two values of the same measure: a new one replaces the old with no word shared.

A conversation rarely keeps two thresholds on the same side, two floors for one
sale, two interest rates, connection speeds, publishing cadences or spending
standards per head, two splits between the same parties, or a guessed count
beside the settled one. When a statement brings one of these and a live item
holds another of the same sort, the implicit linker takes the newer as a
revision, however differently the two are worded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from policies.extract.statements import Statement
from policies.language.numbers import is_split
from policies.language.units import bound_side, measure, measures_compatible
from policies.language.values import Value, extract_values, numeric_closeness
from policies.memory.slots import same_unit_change
from policies.rulebook import Joined
from policies.types import RULE_TYPES, MemoryItem

# Rules of policies/rules/<lang>/revision.yaml read as one pattern of both halves,
# the Chinese half first.
_ZH_FIRST = ("zh", "en")


def same_threshold_rule(st: Statement, item: MemoryItem) -> bool:
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


def same_floor(st: Statement, item: MemoryItem) -> bool:
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


def same_rate(st: Statement, item: MemoryItem) -> bool:
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


def shares_split(st: Statement, item: MemoryItem) -> bool:
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


def estimate_settled(st: Statement, item: MemoryItem) -> bool:
    """A count first given as a guess ("大概会有16支队", "about 30 guests") and now as
    it turned out ("最后确认是14个队", "we ended up with 26"): the same counted thing,
    a settled number, replaces the guess, whatever words go with either."""
    return settled_pair(st, item) is not None


def settled_pair(st: Statement, item: MemoryItem) -> tuple[Value, Value] | None:
    """The (settled, guessed) pair of `estimate_settled`, if there is one."""
    if not _SETTLED_COUNT.search(st.text):
        return None
    new = [v for v in st.strong_values if v.kind == "qty" and not _estimated(st.text, v)]
    old = [v for v in extract_values(item.value) if v.kind == "qty" and _estimated(item.value, v)]
    return next(
        ((a, b) for a in new for b in old if same_unit_change([a], [b])),
        None,
    )
