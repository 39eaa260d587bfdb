"""A superseded value as the stale filter looks for it (`StaleValue`): its terms and
values the replacement no longer has, and the replacement quoted in full or by the
clause that holds its new value (`short_form`).

The values a revision names as replaced ("$60 instead of $85") are read as old,
not as part of the new value (`REPLACED_VALUE`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from policies.language.cue import Cue
from policies.language.cues import negated, read_cues
from policies.language.segment import clauses
from policies.language.text import normalize
from policies.language.values import Value, extract_values, value_signature
from policies.memory.stale_terms import loose_terms, one_line, stem, term_tuple

# Replacements longer than this are not quoted: the sentence is dropped.
MAX_SUCCESSOR_CHARS = 200


@dataclass(frozen=True, slots=True)
class StaleValue:
    """What a value no longer current looks like in a sentence, and what replaced it."""

    norm: str
    terms: frozenset[str]
    changed: frozenset[str]  # terms the replacement does not have
    pairs: frozenset[tuple[str, str]]  # adjacent terms, at least one of them changed
    values: frozenset[str]  # value signatures the replacement does not have
    stems: frozenset[str]  # changed terms, stemmed, compounds split (for quoted replies)
    successor: str | None  # the current value, one line (None: revoked, or too long)
    current: str  # the current value, normalised ("" when revoked)
    short: str  # its clause with the new value, for quoting it again
    # What the user said is matched loosely; what a tool returned or the
    # assistant inferred only by its own text (a refreshed tool result shares
    # column names and small numbers with half the conversation).
    loose: bool


# Says what to do instead ("直接分条写就行", "just list them").
_ASKS = re.compile(
    r"就行|就可以|就好|即可|直接|统一|改成|改为|换成|只要|\binstead\b|\bjust\b|\bonly\b",
    re.IGNORECASE,
)


def short_form(new_text: str, old_terms: set[str], old_text: str) -> str:
    """The clause of the replacement that holds its new value (a value the old text did
    not have: "还是每周跑三次吧", not "最近膝盖好多了"; not a clause that quotes the
    old value to say why it went: "两千以内的那几台都太吵，…预算放到三千吧"), else
    the one that says most of what the old value did not."""
    old_values = extract_values(old_text)
    old_sigs = frozenset(value_signature(v) for v in old_values)
    old_numbers = {v.number for v in old_values if v.number is not None}

    def is_old(v: Value) -> bool:
        return value_signature(v) in old_sigs or (v.number is not None and v.number in old_numbers)

    scored = []
    for c in clauses(new_text):
        values = extract_values(c)
        scored.append(
            (
                any(not is_old(v) for v in values),
                # the clause that asks for something ("直接分条写就行"), not its reason
                (read_cues(c).requirement >= 2 or bool(_ASKS.search(c))) and not negated(c),
                not any(is_old(v) for v in values),
                len(set(term_tuple(c)) - old_terms),
                -len(c),
                c,
            )
        )
    top = max(scored) if scored else None
    best = top[5] if top and (top[0] or top[1] or top[3]) else new_text
    return one_line(best)


def changed_clause(old: str, new: str) -> str:
    """The clause of `new` that says what changed from `old` (see `short_form`)."""
    return short_form(new, set(term_tuple(old)), old)


# A revision often names the value it replaces ("$60 instead of $85"): that
# value is the old one, not part of the new. The span from the cue to the end
# of its clause is left out when the replacement's values are read.
REPLACED_VALUE = Cue(
    "replaced_value",
    re.compile(
        r"\b(?:instead of|rather than|in place of|no longer|not the)\b[^,.;!?，。；！？\n]*"
        r"|(?:而不是|而非|不再是|代替|取代)[^，。；！？,.;!?\n]*",
        re.IGNORECASE,
    ),
    (
        "make it 40 chairs instead of 32",
        "we'll meet at 9 rather than 10, if that's fine",
        "the deposit is $300, no longer $250",
        "改成周四出发，而不是周二。",
        "用海鲜自助代替烤肉。",
    ),
    (
        "instead, let's keep the same hotel",
        "the rather large room on the left",
        "我们不是要改日期，只是问问",
        "这个方案不错，就它了",
    ),
)


def _new_text(successor: str) -> str:
    """The replacement's text without the values it names as replaced."""
    return REPLACED_VALUE.pattern.sub(" ", successor)


@lru_cache(maxsize=8192)
def stale_value(value: str, successor: str | None, loose: bool) -> StaleValue:
    """What a stale `value` looks like in a sentence (memoised: the filter is
    rebuilt on every request from the same, slowly changing items)."""
    old_terms = term_tuple(value)
    new_text = _new_text(successor) if successor is not None else ""
    new_terms = set(term_tuple(new_text))
    changed = frozenset(t for t in old_terms if t not in new_terms)
    old_values = extract_values(value)
    new_values = extract_values(new_text)
    new_sigs = {value_signature(v) for v in new_values}
    # When the replacement swaps a value of a kind ("3-year" -> "2-year"), only
    # values of that kind are stale: an old sentence often states several
    # facts, and the others ("12 months of fees") still hold.
    kinds = {v.key for v in new_values}
    stale_values = [
        v
        for v in old_values
        if value_signature(v) not in new_sigs and (not kinds or v.key in kinds)
    ]
    if kinds and stale_values:
        focus = frozenset(t for v in stale_values for t in term_tuple(v.text))
        pairs = frozenset(
            (a, b) for a, b in itertools.pairwise(old_terms) if a in focus or b in focus
        )
        # The counted noun stays in the new value ("ten episodes"): only what changed.
        stems = frozenset(stem(t) for t in focus) - loose_terms(new_text)
    else:
        pairs = frozenset(
            (a, b) for a, b in itertools.pairwise(old_terms) if a in changed or b in changed
        )
        stems = loose_terms(value) - loose_terms(new_text)
    full = successor if successor is not None else ""
    quoted = one_line(full) if successor is not None else ""
    return StaleValue(
        short=(short_form(full, set(old_terms), value) if successor is not None else ""),
        norm=normalize(value),
        terms=frozenset(old_terms),
        changed=changed,
        pairs=pairs,
        values=frozenset(value_signature(v) for v in stale_values),
        stems=stems,
        successor=quoted if quoted and len(quoted) <= MAX_SUCCESSOR_CHARS else None,
        current=normalize(full) if successor is not None else "",
        loose=loose,
    )
