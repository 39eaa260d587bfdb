"""What a statement denies: the value it takes back, and where that value is held.

"I meant Paulina, not Priyanka", "X — no wait, Y", "forget the 400 cap": the
denied token read whole, whether it names anything at all, whether it is worth
remembering as replaced, and the pattern that finds it in an item. The contrast,
correction and self-fix linkers read these, and so does a revocation that names
what it drops.
"""

from __future__ import annotations

import re

from policies.language.matching import weighted_terms
from policies.language.segment import SELF_FIX
from policies.language.values import Value, extract_values, value_signature
from policies.memory.slots import REVISABLE_KINDS, same_slot


def taken_back(text: str) -> tuple[Value, ...] | None:
    """The value a speaker takes back mid-sentence: X in "X — no wait, Y", "X——不对，Y".

    X is the value right before the marker that a value after it replaces
    (same kind, preferably the same unit).
    """
    values = extract_values(text)
    for m in SELF_FIX.finditer(text):
        before = [
            v for v in values
            if v.end <= m.start() and (v.kind in REVISABLE_KINDS or v.kind in ("id", "time"))
        ]  # fmt: skip
        after = [v for v in values if v.start >= m.end()]
        if not before or m.start() - before[-1].end > 12:
            continue
        for exact in (True, False):
            for x in reversed(before):
                if x.end < m.start() - 12:
                    break
                if any(
                    value_signature(y) != value_signature(x)
                    and (y.key == x.key if exact else same_slot(y, x))
                    for y in after
                ):
                    return (x,)
    return None


def denied_value(text: str, token: str) -> str:
    """The whole value a contrast token begins ("instead of *two* weeks" denies "two
    weeks", not the word "two"), else the token."""
    at = text.find(token)
    for v in extract_values(text):
        if v.start == at and len(v.text) > len(token) and v.kind in REVISABLE_KINDS:
            return v.text
    return token


def names_something(token: str) -> bool:
    """Does a denied token name anything? A number or a content word does; "not us",
    "not to whoever filed it", "not at the end" deny a function word."""
    if re.search(r"\d", token) or re.search(r"[\u3400-\u9fff]", token):
        return True
    return any(w >= 1 for w in weighted_terms(token).values())


def memorable_denial(token: str) -> bool:
    """A denied value worth marking wherever it is quoted: a name or a word, not a
    bare number or a fragment that would match unrelated text."""
    if re.search(r"[\u3400-\u9fff]", token):
        return len(token) >= 2
    return len(token) >= 4 and not re.fullmatch(r"[\d.,$€£%]+", token)


def denied_token_pattern(token: str) -> re.Pattern[str]:
    """Where a denied value occurs in an item: a whole number, a whole word, or CJK text."""
    if re.fullmatch(r"[\d.]+", token):
        # "48" is not in "48,000 miles".
        return re.compile(rf"(?<![\d.,]){re.escape(token)}(?![\d]|[.,]\d)")
    if re.search(r"[\u3400-\u9fff]", token):
        return re.compile(re.escape(token))
    return re.compile(rf"(?<![\w-]){re.escape(token)}(?![\w-])", re.IGNORECASE)
