"""Keep text the proxy writes from presenting a superseded value as current.

The rolling summary and the recalled turns quote old turns verbatim, and old
turns hold values the user later changed ("4 nights in Kyoto", "周三前") or
rules the user withdrew. Working memory knows which: items that are
`superseded` or `revoked`. A sentence that states such an item is either
annotated on the same line with the value that replaced it ("… (later
changed: …)"), or dropped when nothing replaced it (a revoked rule) or the
replacement is too long to quote.

A sentence "states" an old item when it contains the item's text (or is
contained in it); for what the user said, also when it repeats a value of
it that the replacement no longer has (a number, date, ID, amount), repeats
two adjacent terms of it one of which changed, or shares most of its terms
including a changed one. The test errs
towards matching: a false match costs one quoted replacement or one dropped
sentence of a summary; a miss presents an old value as current.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import cached_property, lru_cache

from policies.language.text import normalize
from policies.memory.stale_terms import (
    is_distinctive,
    loose_terms,
    stem,
    term_tuple,
    value_signatures,
)
from policies.memory.stale_values import StaleValue, stale_value
from policies.types import MemoryItem

_STALE_STATUSES = frozenset({"superseded", "revoked", "expired"})
_LIVE = frozenset({"active", "pending"})
CHANGED_MARK = "(later changed: {})"
# The version note the admin API writes when an operator edits a value.
OPERATOR_EDIT = "edited by operator"


def _successor(
    item: MemoryItem, by_id: dict[str, MemoryItem], memo: dict[str, MemoryItem | None]
) -> MemoryItem | None:
    """The live item at the end of `item`'s superseded_by chain (None: none, or a cycle).

    A chain's items all lead to the same end, so `memo` records it for each of
    them: a slot revised n times costs n steps, not n² (the filter is rebuilt
    on every request).
    """
    seen: set[str] = set()
    walked: list[str] = []
    current = item
    end: MemoryItem | None = None
    while current.id not in memo:
        walked.append(current.id)
        if not current.superseded_by or current.superseded_by in seen:
            break
        seen.add(current.superseded_by)
        nxt = by_id.get(current.superseded_by)
        if nxt is None:
            break
        if nxt.status in _LIVE:
            end = nxt
            break
        current = nxt
    else:
        end = memo[current.id]
    for walked_id in walked:
        memo[walked_id] = end
    return end


def _stale_value_of(
    item: MemoryItem, successor: MemoryItem | None, value: str | None = None
) -> StaleValue:
    value = item.value if value is None else value
    return stale_value(value, successor.value if successor else None, item.source == "user")


# Sentences already matched, per set of old items (see `StaleFilter.matches`).
_MEMO_SENTENCES = 4096


@lru_cache(maxsize=256)
def _matches_memo(olds: tuple[StaleValue, ...]) -> dict[str, tuple[StaleValue, ...]]:
    """One memo per set of old items: a session's stale items change rarely, and
    every request re-renders the same summary lines, so its later filters reuse
    the earlier one's answers (the answer depends only on the sentence and `olds`)."""
    return {}


def _states_current(norm: str, old: StaleValue) -> bool:
    """Is the (normalised) sentence the replacement itself, or a part of it?"""
    if not old.current or len(norm) < 8:
        return False
    return norm in old.current or old.current in norm


def _stale_values(items: list[MemoryItem]) -> list[StaleValue]:
    """The values no longer current: replaced or revoked items (with what replaced
    them), and the values an operator edited away."""
    by_id = {it.id: it for it in items}
    ends: dict[str, MemoryItem | None] = {}
    olds = [
        _stale_value_of(it, _successor(it, by_id, ends))
        for it in items
        if it.status in _STALE_STATUSES
    ]
    # A value an operator edited is stale too. It was wrong, or not to be
    # repeated: sentences stating it are dropped, not annotated. (Only
    # operator edits: the extractor also narrows values in place.)
    olds += [
        replace(_stale_value_of(it, it, old), successor=None)
        for it in items
        if it.status in _LIVE
        for old in dict.fromkeys(v.value for v in it.versions if v.note.startswith(OPERATOR_EDIT))
        if old and old != it.value
    ]
    return olds


def _withdrawn_rules(items: list[MemoryItem]) -> dict[int, list[frozenset[str]]]:
    """Where a rule was withdrawn: the ordinal of the withdrawing turn -> the rule's
    stems. The withdrawing sentence names the rule ("you can stop adding packing
    tips"), and quoting it would only remind the model of the rule."""
    revoked_at: dict[int, list[frozenset[str]]] = {}
    for it in items:
        if it.status != "revoked":
            continue
        for version in it.versions:
            if version.note.startswith("revoked"):
                stems = frozenset(stem(t) for t in term_tuple(it.value))
                revoked_at.setdefault(version.ordinal, []).append(stems)
    return revoked_at


class StaleFilter:
    """Built once per request from the session's items; applied per sentence."""

    def __init__(self, items: Iterable[MemoryItem]) -> None:
        items = list(items)
        self._old = _stale_values(items)
        self._revoked_at = _withdrawn_rules(items)
        self._memo = _matches_memo(tuple(self._old)) if self._old else {}

    def __bool__(self) -> bool:
        return bool(self._old or self._revoked_at)

    @cached_property
    def fingerprint(self) -> int:
        """Equal for two filters that treat every sentence alike: text cleaned
        under one is still clean under the other (`PlacedNote.stale_key`).
        Asked once per kept recalled note and request: computed once."""
        revoked = frozenset((k, frozenset(v)) for k, v in self._revoked_at.items())
        return hash((frozenset(self._old), revoked))

    def _withdraws(self, sentence: str, ordinal: int | None) -> bool:
        rules = self._revoked_at.get(ordinal) if ordinal is not None else None
        if not rules:
            return False
        own = {stem(t) for t in term_tuple(sentence)}
        return any(len(own & rule) >= 1 for rule in rules)

    def matches(self, sentence: str) -> list[StaleValue]:
        """The old items `sentence` states (a sentence may state several)."""
        if not self._old:
            return []
        known = self._memo.get(sentence)
        if known is not None:
            return list(known)
        out = self._match(sentence)
        if len(self._memo) >= _MEMO_SENTENCES:
            self._memo.clear()
        self._memo[sentence] = tuple(out)
        return out

    def _match(self, sentence: str) -> list[StaleValue]:
        norm = normalize(sentence)
        seq = term_tuple(sentence)
        own = frozenset(seq)
        loose = loose_terms(sentence)
        sigs = value_signatures(sentence)
        pairs = set(itertools.pairwise(seq))
        out = []
        for old in self._old:
            if old.norm and (old.norm in norm or (len(norm) >= 8 and norm in old.norm)):
                out.append(old)
                continue
            if not old.loose:
                continue
            if sigs & old.values or (own & old.changed and pairs & old.pairs):
                out.append(old)
                continue
            shared = len(own & old.terms)
            if own & old.changed and shared >= 2 and shared >= 0.6 * min(len(own), len(old.terms)):
                out.append(old)
                continue
            # Mentioning the old value itself ("...the quartz isn't the splurge").
            if any(is_distinctive(t, 6) for t in loose & old.stems):
                out.append(old)
        return out

    def match(self, sentence: str) -> StaleValue | None:
        """The first old item `sentence` states, if any."""
        found = self.matches(sentence)
        return found[0] if found else None

    def echoes(self, sentence: str) -> bool:
        """Whether a sentence (of the assistant) repeats a value the user changed.

        The assistant restates requirements in its own words ("I'll use
        unittest.mock"), so its sentences are held to a stricter test: two
        changed terms, or one distinctive one (a number, a long or CJK term).
        They are dropped, not annotated: the user's own words say it better.
        """
        own = loose_terms(sentence)
        for old in self._old:
            if not old.loose:
                continue
            shared = own & old.stems
            if len(shared) >= 2 or any(is_distinctive(t, 7) for t in shared):
                return True
        return False

    def clean(
        self,
        sentences: Sequence[str],
        quoted: set[str] | None = None,
        ordinal: int | None = None,
        role: str = "user",
    ) -> list[str]:
        """`sentences` (of turn `ordinal` by `role`) with stale ones annotated or dropped.

        A replacement is quoted in full once per `quoted` set (share one across
        a section), then by its short form (the clause with the new value).
        A sentence stating something withdrawn, or replaced by text too long to
        quote, is dropped.
        """
        out: list[str] = []
        quoted = set() if quoted is None else quoted
        for sentence in sentences:
            if self._withdraws(sentence, ordinal):
                continue
            if role != "user" and self.echoes(sentence):
                continue
            # A sentence that is (part of) the current value states it, not the old one.
            norm = normalize(sentence)
            olds = [old for old in self.matches(sentence) if not _states_current(norm, old)]
            if not olds:
                out.append(sentence)
                continue
            if any(old.successor is None for old in olds):
                continue
            notes: list[str] = []
            for old in olds:
                assert old.successor is not None
                note = old.short if old.successor in quoted else old.successor
                quoted.add(old.successor)
                if note not in notes:
                    notes.append(note)
            out.append(f"{sentence} {CHANGED_MARK.format('; '.join(notes))}")
        return out
