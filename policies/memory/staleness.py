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
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from policies.language.cue import Cue
from policies.language.cues import negated, read_cues
from policies.language.segment import clauses
from policies.language.text import normalize, terms
from policies.language.values import Value, extract_values, value_signature
from policies.types import MemoryItem

_STALE_STATUSES = frozenset({"superseded", "revoked", "expired"})
_LIVE = frozenset({"active", "pending"})
# Replacements longer than this are not quoted: the sentence is dropped.
MAX_SUCCESSOR_CHARS = 200
CHANGED_MARK = "(later changed: {})"
# The version note the admin API writes when an operator edits a value.
OPERATOR_EDIT = "edited by operator"


@lru_cache(maxsize=8192)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(terms(text))


@lru_cache(maxsize=8192)
def _signatures(text: str) -> frozenset[str]:
    return frozenset(value_signature(v) for v in extract_values(text))


@dataclass(frozen=True, slots=True)
class _Old:
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


def _short_form(new_text: str, old_terms: set[str], old_text: str) -> str:
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
                len(set(_terms(c)) - old_terms),
                -len(c),
                c,
            )
        )
    top = max(scored) if scored else None
    best = top[5] if top and (top[0] or top[1] or top[3]) else new_text
    return _one_line(best)


def changed_clause(old: str, new: str) -> str:
    """The clause of `new` that says what changed from `old` (see `_short_form`)."""
    return _short_form(new, set(_terms(old)), old)


def _stem(term: str) -> str:
    """Plural and third-person "s" off English words ("tips" ~ "tip")."""
    return term[:-1] if len(term) > 3 and term.endswith("s") and term.isascii() else term


@lru_cache(maxsize=8192)
def _loose_terms(text: str) -> frozenset[str]:
    """Stemmed terms, compounds split too ("unittest.mock" also gives "unittest")."""
    out: set[str] = set()
    for term in _terms(text):
        out.add(_stem(term))
        if term.isascii():
            out.update(_stem(p) for p in re.split(r"[._/\-]+", term) if len(p) > 2)
    return frozenset(out)


# A bare number this long ("2024", "500") is specific enough to tie a sentence to a value.
_DISTINCTIVE_DIGITS = 3
# Characters of Chinese function words: a bigram holding one ("的时", "候都") is glue
# between words, not a word of its own.
_ZH_GLUE = frozenset(
    "的了是我你他她它们在有和就都也要不这那个一上下吗呢吧啊呀把给让被说会能很再还又用后以来去到之时候"
)


def _distinctive(term: str, length: int) -> bool:
    """A term specific enough that one occurrence ties a sentence to a value. Not a
    bare small number: "5" of "订4、5间" is in every other sentence ("儿子5岁");
    a sentence restating such a value is found by its value signature."""
    if term.isdigit():
        return len(term) >= _DISTINCTIVE_DIGITS
    if not term.isascii():
        return not any(c in _ZH_GLUE for c in term)
    return any(c.isdigit() for c in term) or len(term) >= length


def _one_line(text: str) -> str:
    return " ".join(text.split())


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


def _old(item: MemoryItem, successor: MemoryItem | None, value: str | None = None) -> _Old:
    value = item.value if value is None else value
    return _old_of(value, successor.value if successor else None, item.source == "user")


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
def _old_of(value: str, successor: str | None, loose: bool) -> _Old:
    """What a stale `value` looks like in a sentence (memoised: the filter is
    rebuilt on every request from the same, slowly changing items)."""
    old_terms = _terms(value)
    new_text = _new_text(successor) if successor is not None else ""
    new_terms = set(_terms(new_text))
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
        focus = frozenset(t for v in stale_values for t in _terms(v.text))
        pairs = frozenset(
            (a, b) for a, b in itertools.pairwise(old_terms) if a in focus or b in focus
        )
        # The counted noun stays in the new value ("ten episodes"): only what changed.
        stems = frozenset(_stem(t) for t in focus) - _loose_terms(new_text)
    else:
        pairs = frozenset(
            (a, b) for a, b in itertools.pairwise(old_terms) if a in changed or b in changed
        )
        stems = _loose_terms(value) - _loose_terms(new_text)
    full = successor if successor is not None else ""
    quoted = _one_line(full) if successor is not None else ""
    return _Old(
        short=(_short_form(full, set(old_terms), value) if successor is not None else ""),
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


# Sentences already matched, per set of old items (see `StaleFilter.matches`).
_MEMO_SENTENCES = 4096


@lru_cache(maxsize=256)
def _matches_memo(olds: tuple[_Old, ...]) -> dict[str, tuple[_Old, ...]]:
    """One memo per set of old items: a session's stale items change rarely, and
    every request re-renders the same summary lines, so its later filters reuse
    the earlier one's answers (the answer depends only on the sentence and `olds`)."""
    return {}


def _states_current(norm: str, old: _Old) -> bool:
    """Is the (normalised) sentence the replacement itself, or a part of it?"""
    if not old.current or len(norm) < 8:
        return False
    return norm in old.current or old.current in norm


def _stale_values(items: list[MemoryItem]) -> list[_Old]:
    """The values no longer current: replaced or revoked items (with what replaced
    them), and the values an operator edited away."""
    by_id = {it.id: it for it in items}
    ends: dict[str, MemoryItem | None] = {}
    olds = [_old(it, _successor(it, by_id, ends)) for it in items if it.status in _STALE_STATUSES]
    # A value an operator edited is stale too. It was wrong, or not to be
    # repeated: sentences stating it are dropped, not annotated. (Only
    # operator edits: the extractor also narrows values in place.)
    olds += [
        replace(_old(it, it, old), successor=None)
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
                stems = frozenset(_stem(t) for t in _terms(it.value))
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
        own = {_stem(t) for t in _terms(sentence)}
        return any(len(own & rule) >= 1 for rule in rules)

    def matches(self, sentence: str) -> list[_Old]:
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

    def _match(self, sentence: str) -> list[_Old]:
        norm = normalize(sentence)
        seq = _terms(sentence)
        own = frozenset(seq)
        loose = _loose_terms(sentence)
        sigs = _signatures(sentence)
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
            if any(_distinctive(t, 6) for t in loose & old.stems):
                out.append(old)
        return out

    def match(self, sentence: str) -> _Old | None:
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
        own = _loose_terms(sentence)
        for old in self._old:
            if not old.loose:
                continue
            shared = own & old.stems
            if len(shared) >= 2 or any(_distinctive(t, 7) for t in shared):
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
