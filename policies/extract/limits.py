"""A limit named by what it limits: "the 200-word limit", "that word cap", "字数限制".

"The 200-word limit is off" shares no word with "Keep each reply under 200 words"
("limit" is not in the rule, "words" is not "word"), yet a reader knows which
rule goes: the one that caps words. So a sentence that names a limit by its
measure points at the live rule holding an upper bound on that measure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from policies.language.units import bound_side, measure
from policies.language.values import Value, extract_values
from policies.types import MemoryItem

# The measure word as the value units spell it ("word", "line", "字", "行").
_EN_LIMIT = re.compile(
    r"\b(?:\d+[- ])?(word|line|page|minute|bullet|slide|question|item)s?[- ]"
    r"(?:limit|cap|count|max(?:imum)?|ceiling|restriction|rule)\b",
    re.IGNORECASE,
)
_ZH_LIMIT = re.compile(
    r"(字|行|页|条|篇幅)数?的?(?:限制|上限|要求)|限制(?:一下)?(字|行|页|条|篇幅)数?"
    # The count itself names the limit, like "word count" does: "字数不用卡了", "不限字数".
    r"|(字|行|页)数"
)
_ZH_MEASURE = {"篇幅": "字"}


def named_limit(text: str) -> str | None:
    """The measure of the limit `text` names, if it names one ("word", "字")."""
    m = _EN_LIMIT.search(text)
    if m:
        return m.group(1).lower()
    m = _ZH_LIMIT.search(text)
    if m:
        word = m.group(1) or m.group(2) or m.group(3)
        return _ZH_MEASURE.get(word, word)
    return None


def _caps(v: Value, unit: str) -> bool:
    return v.kind == "bound" and bound_side(v) == "below" and measure(v) == unit


def limit_holder(text: str, items: Sequence[MemoryItem]) -> MemoryItem | None:
    """The one item capping the measure `text` names as a limit, if exactly one does."""
    unit = named_limit(text)
    if unit is None:
        return None
    holders = [
        it for it in items
        if any(_caps(v, unit) for v in extract_values(it.value))
    ]  # fmt: skip
    return holders[0] if len(holders) == 1 else None


def limit_text(text: str, item: MemoryItem) -> str:
    """The words of `item` that set the limit `text` names ("under 200 words"), so
    that the clause holding them goes with the limit and is no sibling left behind."""
    unit = named_limit(text)
    if unit is None:
        return ""
    return " ".join(v.text for v in extract_values(item.value) if _caps(v, unit))
