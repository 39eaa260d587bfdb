"""The clause a change or a held quantity sits in, and the derivation appended to it.

Both an item's text and the sentence of a change are cut into clauses: a quantity is
judged by the words of its own clause ("…, which used to be 4" is no current value),
and a restatement keeps only the clause that held the old value. These spans are
shared by fitting, restating and the entry point.
"""

from __future__ import annotations

import re

from policies.extract.relative.amounts import Change
from policies.rulebook import Joined

# The comma of "Monday, September 8" sits inside one date, not between clauses: the
# words before the weekday ("Start date Monday, …") say what that date is.
_NOT_AFTER_WEEKDAY = (
    r"(?<!monday)(?<!tuesday)(?<!wednesday)(?<!thursday)(?<!friday)(?<!saturday)(?<!sunday)"
    r"(?<!mon)(?<!tue)(?<!wed)(?<!thu)(?<!fri)(?<!sat)(?<!sun)"
)
_CLAUSE = re.compile(
    rf"[，；。！？、：]|{_NOT_AFTER_WEEKDAY},(?=\s)|[;:](?=\s)|[.!?](?=\s|$)", re.IGNORECASE
)


def clause_at(text: str, start: int, end: int) -> str:
    lo = max((m.end() for m in _CLAUSE.finditer(text, 0, start)), default=0)
    hi = _CLAUSE.search(text, end)
    return text[lo : hi.start() if hi else len(text)]


# The derivation this module appends to a restated quantity: "(40 + 12: "Add twelve…")".
_DERIVATION = re.compile(r"\s?[(（][^()（）]*[:：]\s?[\"“][^\"”]*[\"”][)）]\s*$")


def own_text(value: str) -> str:
    """An item's own words, without the derivation it may carry (a prefix of `value`)."""
    m = _DERIVATION.search(value)
    return value[: m.start()] if m else value


_QUOTE_CLAUSE = re.compile(r"[，,;；:：]\s*")


def change_quote(change: Change) -> str:
    """The words that made the change, short: the clause holding the cue ("let's allow
    two more than I said", "首播往后推一周吧"), or the cue alone when that clause is long."""
    s = change.sentence
    lo = max((m.end() for m in _QUOTE_CLAUSE.finditer(s, 0, change.start)), default=0)
    hi = _QUOTE_CLAUSE.search(s, change.end)
    clause = s[lo : hi.start() if hi else len(s)]
    if len(clause) > 45:
        clause = s[change.start : change.end]
    return " ".join(clause.split()).strip().rstrip("。.!！")


# Where a comma-level clause ends (as `policies.language.segment.without_clause` reads them).
_CLAUSE_END = re.compile(
    rf"[，；;、]\s*|{_NOT_AFTER_WEEKDAY},(?!\d{{3}}\b)\s*|\s+(?:and|but)\s+|[。.!?！？]\s*$",
    re.IGNORECASE,
)
LEADING_LINK = Joined("relative", "leading_link")


def clause_span(text: str, start: int, end: int) -> tuple[int, int]:
    lo = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    hi = _CLAUSE_END.search(text, end)
    return lo, hi.start() if hi else len(text)


def unpunctuated(text: str) -> str:
    return re.sub(r"[\s，。,.!?！？；;：:]+", "", text)
