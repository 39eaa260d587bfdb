"""The new value of a held quantity, and the item text restated at it.

Counts, money and points are added to, percentages scale, times and dates shift. The
restatement is the clause that held the value, at its new value, with how it was
derived and the words that made the change; the item's other clauses, where they
still ask for something or hold a value, are kept as an item of their own.
"""

from __future__ import annotations

import re

from policies.extract.relative.amounts import Change
from policies.extract.relative.clauses import LEADING_LINK, change_quote, clause_span, own_text
from policies.extract.relative.clock import shift_clock
from policies.extract.relative.dates import shift_date
from policies.extract.relative.held import Held, held_values
from policies.language.cues import read_cues
from policies.language.text import terms
from policies.rulebook import Joined
from policies.types import MemoryItem


def _fmt_number(n: float, like: str) -> str:
    decimals = len(like.split(".")[1]) if re.search(r"\d\.\d", like) else 0
    if decimals == 0 and abs(n - round(n)) > 1e-9:
        decimals = 2
    text = (
        f"{n:,.{decimals}f}"
        if "," in like or (n >= 10_000 and re.search(r"[$€£]", like))
        else (f"{n:.{decimals}f}")
    )
    return text


def _new_amount(change: Change, held: Held) -> float | None:
    if change.measure in ("count", "number", "money", "points"):
        new = held.number + change.sign * change.amount
    else:  # percent of an amount
        new = held.number * (1 + change.sign * change.amount / 100)
    if new < 0 or (new == 0 and held.measure == "count"):
        return None
    if held.measure == "count" and abs(new - round(new)) > 1e-9:
        return None  # "cut the 45 guests by 10%": no whole number of guests
    return round(new, 2)


# The number of a held quantity: digits (with k, 万 or 千) or Chinese numerals, then
# English number words, ignoring case (number_in of both files).
_NUM_IN = Joined.of("relative", ("zh", "number_in"), ("en", "number_in"), flags=re.IGNORECASE)


def _restate_amount(held: Held, new: float) -> str | None:
    """`held.text` with its number replaced by `new` ("$1,500" → "$1,800", "八名" → "10名")."""
    if re.search(r"[一二两三四五六七八九]成半?$", held.text):
        return f"{new:g}%"  # "三成" raised by five points is 35%, not "35成"
    m = _NUM_IN.search(held.text)
    if m is None:
        return None
    like = m.group(0)
    scale = 1.0
    if re.search(r"[kK]$", like):
        scale = 1000.0
    elif like.endswith("万"):
        scale = 10_000.0
    elif like.endswith("千") and re.match(r"\d", like):
        scale = 1000.0
    value = new / scale
    digits = _fmt_number(value, like)
    suffix = like[-1] if scale != 1.0 else ""
    return held.text[: m.start()] + digits + suffix + held.text[m.end() :]


def restated_value(change: Change, held: Held) -> tuple[str, str] | None:
    """(the held value's new text, the derivation) or None when it cannot be computed."""
    if change.measure == "minutes":
        new = shift_clock(held.text, change.sign * change.amount)
        return (new, "") if new else None
    if change.measure in ("days", "months"):
        new = shift_date(held.text, change)
        return (new, "") if new else None
    amount = _new_amount(change, held)
    if amount is None:
        return None
    new = _restate_amount(held, amount)
    if new is None:
        return None
    old_n = _fmt_number(held.number, held.text)
    if change.measure == "percent":
        delta = f"{'+' if change.sign > 0 else '−'} {change.amount:g}%"
    else:
        delta = f"{'+' if change.sign > 0 else '−'} {_fmt_number(change.amount, held.text)}"
    return new, f"{old_n} {delta}"


# "Monday, " right before a date: no longer the right day once the date moves by days
# that are not whole weeks (the year, and so the new weekday, is not known).
_WEEKDAY_BEFORE = Joined("relative", "weekday_before")


def derived_clause(
    item: MemoryItem, held: Held, new_text: str, derivation: str, change: Change
) -> str:
    """The clause that held the quantity, at its new value, with how it was derived:
    "至少10名保安（8 + 2：“再加两个”）". Only that clause: the replacement is what a
    stale mention of the old value gets annotated with, and must stay short."""
    own = own_text(item.value)
    lo, hi = clause_span(own, held.start, held.end)
    before = own[lo : held.start]
    if change.measure == "days" and change.amount % 7:
        before = _WEEKDAY_BEFORE.sub("", before)
    clause = before + new_text + own[held.end : hi]
    clause = LEADING_LINK.sub("", clause.strip())
    zh = bool(re.search(r"[\u4e00-\u9fff]", change.sentence))
    quote = change_quote(change)
    if not derivation:
        sign = "+" if change.sign > 0 else "−"
        derivation = f"{sign}{change.amount_text}"
    body = f"{derivation}：“{quote}”" if zh else f'{derivation}: "{quote}"'
    return f"{clause}（{body}）" if zh else f"{clause} ({body})"


# A limit with its number in words ("teams of up to four") is a value of its own.
_WORDED_BOUND = Joined("relative", "worded_bound")


def other_clauses(item: MemoryItem, held: Held) -> str | None:
    """The other clauses of the item ("Canning day is Thursday, May 8"): they still hold."""
    own = own_text(item.value)
    lo, hi = clause_span(own, held.start, held.end)
    return rest_around(item, own, lo, hi)


def rest_around(item: MemoryItem, own: str, lo: int, hi: int) -> str | None:
    head = own[:lo].rstrip()
    head = re.sub(r"(?:\s+(?:and|but|so))?[\s，,；;、]*$", "", head)
    tail = own[hi:].lstrip(" ，,；;、")
    if not re.search(r"\w", tail):
        tail = ""
    sep = "，" if re.search(r"[\u4e00-\u9fff]$", head) else ", "
    rest = (head + sep + tail if head and tail else head or tail).strip()
    rest = rest.rstrip("，,；;、 ")
    content = [t for t in terms(rest) if not re.fullmatch(r"[\d.,%]+", t)]
    valued = bool(held_values(rest)) or bool(_WORDED_BOUND.search(rest))
    if len(content) < 3 and not valued:
        return None
    # What is left of a rule must still ask for something or hold a value of its own
    # (as the revision resolver keeps the rest of a revised item); the reasons given
    # for the old value ("we're home in the evenings") are no requirement.
    if item.type in ("constraint", "preference") and not valued and read_cues(rest).requirement < 2:
        return None
    return rest
