"""Which live item a statement talks about, and how sure that is.

The live items are indexed by their terms (and a title's start, which a
rename shares without sharing a word): only items sharing a term with a
statement can be its target, which keeps long sessions cheap. `best` scores
those candidates, mostly by how much of the item the statement mentions,
partly by plain similarity, with bonuses for a changed value of the same
kind; `lexical` is the word overlap alone, memoised for the message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from policies.extract.linking.subjects import own_words
from policies.extract.linking.thresholds import LEXICAL_MIN
from policies.extract.revision import near_same_words, renamed_title, same_named_slot, title_key
from policies.extract.statements import Statement
from policies.language.matching import (
    Idf,
    content_terms,
    covered,
    merge_terms,
    opposed,
    similarity,
    weighted_terms,
)
from policies.language.values import extract_values
from policies.memory.slots import named_slot, same_unit_change, value_change
from policies.types import MemoryItem


@dataclass(slots=True)
class TargetFinder:
    """The live items indexed by term, and the scores of a statement against them."""

    live: Sequence[MemoryItem]
    message: str
    # Lexical scores by (statement text, item id, with message context).
    memo: dict[tuple[str, str, bool], float] = field(default_factory=dict)
    idf: Idf = field(init=False)
    message_bag: Mapping[str, float] = field(init=False)
    # term -> ids of live items holding it.
    index: dict[str, set[str]] = field(init=False)

    def __post_init__(self) -> None:
        self.index = {}
        for it in self.live:
            for term in content_terms(it.value):
                self.index.setdefault(term, set()).add(it.id)
            for v in extract_values(it.value):
                if v.kind == "title":  # a rename shares the title's start, not a word
                    self.index.setdefault(title_key(v), set()).add(it.id)
        self.idf = Idf.from_counts({t: len(ids) for t, ids in self.index.items()}, len(self.live))
        self.message_bag = weighted_terms(own_words(self.message))

    def slot_related(self, st: Statement) -> set[str]:
        slot = named_slot(st.text)
        if slot is None or not st.strong_values:
            return set()
        return {it.id for it in self.live if it.slot == slot}

    def related(self, bag: Mapping[str, float]) -> set[str]:
        related: set[str] = set()
        for term in bag:
            ids = self.index.get(term)
            if ids:
                related |= ids
        return related

    def bag(self, st: Statement, with_message: bool) -> Mapping[str, float]:
        own = content_terms(own_words(st.text))
        if not with_message:
            return own
        return merge_terms((own, 1.0), (self.message_bag, 0.5))

    def best(
        self, st: Statement, pool: list[MemoryItem], with_message: bool
    ) -> tuple[MemoryItem | None, float]:
        """The live item `st` most likely talks about, and how sure that is.

        Mostly: how much of the item is mentioned by the statement (and its
        message): a revision restates the old item's subject, not its whole
        text. Partly: plain similarity of the statement to the item.
        """
        bag = self.bag(st, with_message)
        related = self.related(bag) | self.slot_related(st)
        for v in st.strong_values:
            if v.kind == "title":
                related |= self.index.get(title_key(v), set())
        best: MemoryItem | None = None
        best_score = 0.0
        for rank, item in enumerate(pool):
            if item.id not in related and not near_same_words(st, item):
                continue
            old_values = extract_values(item.value)
            score = self.lexical(st, item, bag)
            slot_match = same_named_slot(st, item)
            # Sharing a kind of value is not enough to be about the same thing,
            # unless it is the same counted thing ("120人" → "150人") or the same
            # named slot ("stretch to 42k all in" after "budget is $38,000 all in").
            if (
                score < LEXICAL_MIN
                and not slot_match
                and not same_unit_change(st.strong_values, old_values)
                and not renamed_title(st.strong_values, old_values)
                and not near_same_words(st, item)
            ):
                continue
            if slot_match:
                score += 0.15
            changed, closeness = value_change(st.strong_values, old_values)
            if changed:
                # A revision adjusts a value; an order of magnitude apart ("$5" for
                # gas, "$150" for an inspection) they are most likely different things.
                score += 0.15 + 0.15 * closeness if closeness > 0 else 0.05
                if same_unit_change(st.strong_values, old_values):
                    score += 0.2  # the very same named thing ("Python 3.9" → "Python 3.11")
            if opposed(st.text, item.value):
                score += 0.15
            if item.type == st.type:
                score += 0.03
            score += 0.01 * rank / max(len(pool), 1)  # ties go to the newer item
            if score > best_score:
                best, best_score = item, score
        return best, best_score

    def lexical(
        self, st: Statement, item: MemoryItem, bag: Mapping[str, float] | None = None
    ) -> float:
        """Word overlap of a statement (or its context `bag`) with an item, 0..1."""
        key = (st.text, item.id, bag is not None)
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        own = content_terms(own_words(st.text))
        item_bag = content_terms(item.value)
        mentioned = covered(bag if bag is not None else own, item_bag, self.idf)
        score = 0.6 * mentioned + 0.4 * similarity(own, item_bag, self.idf)
        self.memo[key] = score
        return score
