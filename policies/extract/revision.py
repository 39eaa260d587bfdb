"""Which value of a statement revises which value of an item.

A new value revises an old one only when the two are about the same thing: the
same named slot ("budget", "deadline"), a word of the same clause or the same verb
before both amounts, a title renamed; not a value the statement denies, nor one
that plays another role (an attribute of another noun, a price on something for
sale, a case under a condition). And once a value changes, what changes with it:
the same amount however written, the same day told as a weekday and a date, a
split restated whole. The linkers of `policies.extract.linking` read these.
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
    extract_values,
    value_signature,
)
from policies.memory.slots import (
    NAMED_SLOTS,
    REVISABLE_KINDS,
    named_slot,
    same_amount_verb,
    same_slot,
)
from policies.rulebook import Joined
from policies.types import MemoryItem

# The kinds of value a revision naming no subject may change by the value alone
# (`value_only`), and whose absence from an item sends a revision there (`explicit`):
# the revisable kinds, and a clock time.
VALUE_ONLY_KINDS = REVISABLE_KINDS | {"time"}


def same_day_told_twice(old: MemoryItem, changed: Value, v: Value, st: Statement) -> bool:
    """ "Saturday, June 7": one day told as a weekday and a date. A new day ("Sunday
    the 15th") replaces both; the date left behind would still say the old day."""
    if not (changed.kind == v.kind == "date" and (changed.number is None) != (v.number is None)):
        return False
    if any(value_signature(x) == value_signature(v) for x in st.values):
        return False  # the statement keeps that one
    near = old.value[max(0, changed.start - len(v.text) - 4) : changed.end + len(v.text) + 4]
    return v.text in near and any(x.kind == "date" for x in st.strong_values)


def asserted_values(st: Statement) -> tuple[Value, ...]:
    """The values `st` puts forward, not those it denies ("forget $900 as the catering
    max" puts no $900 forward: it is no new value for another amount)."""
    denied = [t for t in st.contrast if any(ch.isdigit() for ch in t)]
    return tuple(v for v in st.strong_values if not any(v.text in t or t in v.text for t in denied))


def split_restated(st: Statement, old: MemoryItem) -> bool:
    """Do both the statement and the item give two or more shares (a whole split)?"""
    new = [v for v in st.strong_values if v.kind == "percent"]
    held = [v for v in extract_values(old.value) if v.kind == "percent"]
    return len(new) >= 2 and len(held) >= 2


def quotes_another_old_value(st: Statement, item: MemoryItem) -> bool:
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


def plays_other_role(st: Statement, item: MemoryItem) -> bool:
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


def same_named_slot(st: Statement, item: MemoryItem) -> bool:
    """Both name the same kind of setting ("budget", "deadline", ...) and the statement
    holds a value to replace it with."""
    if item.slot not in NAMED_SLOTS or not st.strong_values:
        return False
    return named_slot(st.text) == item.slot


def near_same_words(st: Statement, item: MemoryItem) -> bool:
    """ "挂三百二十万" / "明天在App上挂308万": Chinese one-character words are no terms,
    so the shared verb before the amounts is what ties them."""
    return bool(st.strong_values) and same_amount_verb(st.text, item.value)


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


def value_clause_shared(st: Statement, item: MemoryItem) -> bool:
    """Said with no change cue, a new value revises an old one only when a word of its
    own clause is also in the old value's clause ("the shop opens at 8am" / "the shop
    opens at 7am"). A word shared from another clause names who or where, not what is
    set: "write check-in from 3pm, Rosa can't clean six rooms in two hours" shares Rosa
    with "Rosa arrives at 7:30", yet a check-in time is no arrival time; "刚跟老陈打完电话，
    …两周内打完" changes none of the hours 老陈 offered."""
    if near_same_words(st, item):
        return True  # the same one-character verb before both amounts ("挂…万")
    old_values = extract_values(item.value)
    return any(
        _clause_terms(st.text, nv) & _clause_terms(item.value, ov, back=True)
        for nv in st.strong_values for ov in old_values
        if same_slot(nv, ov) and value_signature(nv) != value_signature(ov)
    )  # fmt: skip


def _title_core(v: Value) -> str:
    return re.sub(r"[《》“”\"'「」\s]", "", v.text).casefold()


def title_key(v: Value) -> str:
    return "\x00title:" + _title_core(v)[:2]


def renamed_title(new: Sequence[Value], old: Sequence[Value]) -> bool:
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


def same_amount(a: Value, b: Value) -> bool:
    """The same amount or count, however written ("$18k" / "over $18,000")."""
    if a.number is None or a.number != b.number:
        return value_signature(a) == value_signature(b)
    return a.kind in ("money", "bound", "qty", "percent", "date", "time") and same_slot(a, b)
