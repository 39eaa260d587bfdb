"""Which values and items compete for the same slot.

A revision replaces a value of the same kind and unit ("450元" after
"600元", "Python 3.11" after "Python 3.9", "20桌" after "18桌"); these
helpers decide that, and name an item's slot for the rest of the system.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

from policies.language.matching import weighted_terms
from policies.language.units import bound_side, measure, measures_compatible
from policies.language.values import Value, extract_values, numeric_closeness, value_signature
from policies.types import ItemType

# Kinds whose values a revision changes, and that stay stale wherever quoted.
REVISABLE_KINDS = frozenset(
    {"money", "percent", "qty", "label", "grade", "version", "date", "freq", "title", "bound"}
)


# Lengths of time, in the one unit each is compared in (`values._as_duration`).
_DURATIONS = frozenset({"day", "minute"})


def same_slot(a: Value, b: Value) -> bool:
    """Can `b` be an earlier version of `a`? Same kind, compatible unit.

    "?" (an amount without currency) and "个" (a bare count) match any unit
    of their kind: "182k" can revise "$185,000", "4个" can revise "3个人".
    """
    if a.kind == "number" and b.kind in ("money", "qty", "percent", "bound"):
        return True  # "make it 300" restates "超过500块的…" without the unit
    if "bound" in (a.kind, b.kind):
        # "lower the bar to 20 users" after "at least 50 users", "$21,500 max" after
        # "not over $18,000" -- but "10 episodes" does not revise "under 35 minutes".
        if not {a.kind, b.kind} <= {"bound", "money", "qty"} or not measures_compatible(a, b):
            return False
        return a.kind != b.kind or bound_side(a) == bound_side(b) or not measure(a)
    if a.kind != b.kind:
        return False
    if a.unit in _DURATIONS and a.unit == b.unit and numeric_closeness(a, b) == 0:
        return False  # "培训两天" is no version of "寄养5周": lengths of time apart in kind
    if a.kind == "percent":
        return a.unit == b.unit or "" in (a.unit, b.unit)  # "5.9%" revises "6.9% APR"
    return a.unit == b.unit or bool({a.unit, b.unit} & {"?", "个", "time"})


def comparable(values: Sequence[Value]) -> bool:
    return any(v.kind in REVISABLE_KINDS for v in values)


def same_unit_change(new: Sequence[Value], old: Sequence[Value]) -> bool:
    """A changed value with the very same named unit ("nights", "人", "python", an
    interest rate). Not a currency: "$5 for gas" is not the same thing as "$150"; nor
    an order of magnitude apart: "晚一周" is no revision of "合同三年"."""
    return any(
        nv.unit.isalpha() and nv.unit == ov.unit and nv.kind == ov.kind and nv.kind != "money"
        and nv.number is not None and nv.number != ov.number
        and numeric_closeness(nv, ov) > 0
        for nv in new for ov in old
    )  # fmt: skip


def value_change(
    new: Sequence[Value], old: Sequence[Value], precise: bool = False
) -> tuple[bool, float]:
    """Do `new` and `old` hold a value of the same kind and unit that differs?

    `precise`: a weekday does not count as changing a calendar date (nor the
    reverse); without a change cue, "record on a Saturday" is another event.
    """
    changed, closeness = False, 0.0
    old_sigs = {value_signature(v) for v in old}
    for nv in new:
        if nv.kind == "date" and nv.unit == "dom":
            old = [*old, *_days_of_month(old)]
        if nv.kind == "id" or value_signature(nv) in old_sigs:
            continue
        rivals = [
            ov for ov in old
            if same_slot(nv, ov)
            and not (precise and nv.kind == "date" and (nv.number is None) != (ov.number is None))
        ]  # fmt: skip
        # "six nights" restates "6 nights": the same number is no change.
        if not rivals or any(nv.number is not None and nv.number == ov.number for ov in rivals):
            continue
        changed = True
        closeness = max(closeness, *(numeric_closeness(nv, ov) for ov in rivals))
    return changed, closeness


def _days_of_month(values: Sequence[Value]) -> list[Value]:
    """Calendar dates read as days of their month: "Tuesday the 13th" moves "Thursday,
    May 8" (said with the month, changed by the day alone, as people do within a
    month or into the next)."""
    out = []
    for v in values:
        if v.kind == "date" and v.unit == "" and v.number is not None and v.number > 31:
            day = int(v.number) % 31 or 31
            out.append(dataclasses.replace(v, number=float(day), unit="dom"))
    return out


def _context(text: str, v: Value) -> Mapping[str, float]:
    """Words around `v`, without any value's text (shared neighbouring values such as
    "周一、周三、周五" say nothing about which value changed)."""
    lo, hi = max(0, v.start - 15), v.end + 15
    # A neighbouring value takes no room from the words ("opening night Friday March
    # 13"), and the window ends on whole words.
    for other in extract_values(text):
        if other is not v and other.end <= v.start and other.end > lo:
            lo = max(0, lo - (other.end - other.start))
        elif other is not v and other.start >= v.end and other.start < hi:
            hi += other.end - other.start
    while lo > 0 and not text[lo - 1].isspace() and text[lo - 1].isalnum() and text[lo].isascii():
        lo -= 1
    while hi < len(text) and text[hi].isalnum() and text[hi].isascii():
        hi += 1
    window = text[lo:hi]
    for other in extract_values(text):
        if other.end > lo and other.start < hi:
            a, b = max(other.start, lo) - lo, min(other.end, hi) - lo
            window = window[:a] + " " * (b - a) + window[b:]
    return weighted_terms(window)


def same_neighbours(new_text: str, nv: Value, old_text: str, ov: Value) -> bool:
    """Do two values share a content word right around them ("*sessions* on Saturday
    mornings" / "put the *sessions* on Tuesday evenings")?"""
    near_new = {t for t, w in _context(new_text, nv).items() if w >= 1}
    return bool(near_new & {t for t, w in _context(old_text, ov).items() if w >= 1})


# Values precise enough that a shared neighbouring word says they are the same setting.
_LOCAL_KINDS = frozenset({"qty", "money", "percent", "date", "time"})


def local_context_match(new_text: str, old_text: str) -> bool:
    """A changed value whose neighbouring words are shared: "a 25-minute slot" after
    "it's a 30-minute slot", even when the rest of the old sentence is about else."""
    old_values = extract_values(old_text)
    for nv in extract_values(new_text):
        if nv.kind not in _LOCAL_KINDS or nv.number is None:
            continue
        near_new = {t for t, w in _context(new_text, nv).items() if w >= 1}
        for ov in old_values:
            if (
                ov.kind != nv.kind
                or ov.number is None
                or not (ov.unit == nv.unit or nv.kind == "money")
                or value_signature(nv) == value_signature(ov)
            ):
                continue
            near_old = {t for t, w in _context(old_text, ov).items() if w >= 1}
            if near_new & near_old or _same_zh_verb(new_text, nv, old_text, ov):
                return True
    return False


def same_amount_verb(new_text: str, old_text: str) -> bool:
    """Two amounts right after the same one-character verb ("挂三百二十万" / "挂308万")."""
    return any(
        _same_zh_verb(new_text, nv, old_text, ov)
        for nv in extract_values(new_text) if nv.kind == "money"
        for ov in extract_values(old_text) if ov.kind == "money"
        and value_signature(nv) != value_signature(ov)
    )  # fmt: skip


# Characters that only join a number to its sentence ("是295万", "到300元").
_ZH_LINKS = frozenset("是为了到在的约共付给有和或到就才都也还再")


def _same_zh_verb(new_text: str, nv: Value, old_text: str, ov: Value) -> bool:
    """The same one-character verb right before both amounts ("挂三百二十万" / "在App上
    挂308万"): Chinese words of one character are invisible to the bigram terms."""
    if nv.kind != "money" or nv.start == 0 or ov.start == 0:
        return False
    a, b = new_text[nv.start - 1], old_text[ov.start - 1]
    return a == b and "\u4e00" <= a <= "\u9fff" and a not in _ZH_LINKS


def changed_pair(new_text: str, old_text: str) -> tuple[Value, Value] | None:
    """The (new, old) value pair most likely revised: same key, nearby words."""
    old_values = extract_values(old_text)
    old_sigs = {value_signature(v) for v in old_values}
    best: tuple[Value, Value] | None = None
    best_score = -1.0
    old_numbers = {v.number for v in old_values if v.number is not None}
    for nv in extract_values(new_text):
        if nv.kind == "id" or value_signature(nv) in old_sigs or nv.number in old_numbers:
            continue  # "60是去年的" quotes the old value, it does not set a new one
        near_new = set(_context(new_text, nv))
        for ov in old_values:
            dom = nv.kind == "date" and nv.unit == "dom" and bool(_days_of_month([ov]))
            if not same_slot(nv, ov) and not dom:
                continue
            shared = len(set(_context(old_text, ov)) & near_new)
            score = shared + numeric_closeness(nv, ov)
            if score > best_score:
                best, best_score = (nv, ov), score
    return best


_SLOT_WORDS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (slot, re.compile(pattern, re.IGNORECASE))
    for slot, pattern in (
        ("allergy", r"allerg|过敏"),
        ("diet", r"vegetarian|vegan|halal|kosher|gluten|素食|吃素|忌口|控糖|不吃"),
        (
            "budget",
            r"budget|spending|预算|开销|花费|买菜的钱|\d[\d,.]*\s?[kK]?\s+all[- ]in\b"
            r"|\bstretch (?:it |that )?to\b|\bcan afford\b|\bspend up to\b"
            r"|\bset aside\b|\b(?:can|could) spend\b",
        ),
        ("deadline", r"deadline|due|at the latest|截止|最晚|最迟"),
        ("language", r"\b(?:english|chinese|japanese|german|french)\b|中文|英文|日文|语言"),
        ("format", r"\btables?\b|bullet|markdown|表格|画表|列表|文字|格式"),
        ("tests", r"\bpytest\b|\bunittest\b|\btests?\b|测试"),
        ("region", r"\bregion\b|区域|大区"),
        ("currency", r"\byen\b|\beuros?\b|\bdollars?\b|币种|汇率"),
    )
)


NAMED_SLOTS = frozenset(slot for slot, _ in _SLOT_WORDS)


@lru_cache(maxsize=8192)
def named_slot(text: str) -> str | None:
    """The named setting `text` is about ("budget", "deadline", ...), if any."""
    for slot, pattern in _SLOT_WORDS:
        if pattern.search(text):
            return slot
    return None


def derive_slot(kind: ItemType, text: str, values: Sequence[Value]) -> str:
    """A short key grouping values that replace one another."""
    for slot, pattern in _SLOT_WORDS:
        if pattern.search(text):
            return slot
    for v in values:
        if v.kind not in ("id", "number"):
            return f"{v.kind}:{v.unit}" if v.unit else v.kind
    for v in values:
        if v.kind == "id":
            return f"id:{v.text}"
    top = sorted(weighted_terms(text).items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[:2]
    return f"{kind}:" + "-".join(term for term, _ in top) if top else kind


# What may follow a Chinese noun that heads a subject: "钢琴课*在*周二", "游泳课*是*…".
_ZH_AFTER_HEAD = frozenset("在是为有要的和，。,.；;：:！!？? ")
_EN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _outside_values(text: str) -> str:
    """`text` with every value blanked: "1 gig plan" keeps only "plan"."""
    for v in extract_values(text):
        text = text[: v.start] + " " * (v.end - v.start) + text[v.end :]
    return text


def _en_modifiers(text: str) -> dict[str, set[str]]:
    """Content word -> the content words right before it ("piano lessons": lesson -> piano)."""
    plain = _outside_values(text)
    words = list(_EN_WORD.finditer(plain))
    out: dict[str, set[str]] = {}
    for a, b in pairwise(words):
        before, head = a.group(0).casefold(), b.group(0).casefold()
        if plain[a.end() : b.start()] != " ":
            continue  # a value or a break between them: "lab: 6.5% ABV" modifies nothing
        if len(head) >= 3 and weighted_terms(head) and weighted_terms(before):
            out.setdefault(head.rstrip("s"), set()).add(before)
    return out


def _zh_modifiers(text: str) -> dict[str, set[str]]:
    """Noun character -> the two characters before it, where it ends a subject
    ("钢琴课在": 课 -> 钢琴)."""
    plain = _outside_values(text)
    out: dict[str, set[str]] = {}
    for i in range(2, len(plain)):
        head, mod = plain[i], plain[i - 2 : i]
        after = plain[i + 1] if i + 1 < len(plain) else " "
        if not ("\u4e00" <= head <= "\u9fff") or after not in _ZH_AFTER_HEAD:
            continue
        if not all("\u4e00" <= c <= "\u9fff" and weighted_terms(c) for c in mod + head):
            continue
        out.setdefault(head, set()).add(mod)
    return out


def different_subjects(new_text: str, old_text: str) -> bool:
    """Do two sentences name the same kind of thing with different modifiers, each absent
    from the other: "tennis practice" / "guitar practice", "游泳课" / "钢琴课"? Then
    their values (days, times, counts) are about two things, not one setting revised."""
    for modifiers in (_en_modifiers, _zh_modifiers):
        new, old = modifiers(new_text), modifiers(old_text)
        for head in new.keys() & old.keys():
            a, b = new[head], old[head]
            if a & b:
                continue
            fresh = all(m not in old_text.casefold() for m in a)
            gone = all(m not in new_text.casefold() for m in b)
            shared_chars = {c for m in a for c in m if not c.isascii()} & {
                c for m in b for c in m if not c.isascii()
            }
            if fresh and gone and not shared_chars:
                return True
    return False
