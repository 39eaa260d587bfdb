"""Recall of older turns: an incremental BM25 index over one session's turns.

Terms are `policies.text.terms`: lower-cased English words without stopwords
and CJK character bigrams, so "HK-55817", "Canberra" and "花生酱" are all
findable. The index grows by the new turns of each request and is cut back on
a rewind; a search touches only the postings of the query's terms (each
capped to its most recent entries), so the work per request does not grow
with the history.

Recalled turns are shown as dated snippets: the sentences of the turn that
share the most terms with the input, so one long turn cannot eat the section.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass

from policies.segment import split_sentences
from policies.text import terms


@dataclass(slots=True)
class _Doc:
    ordinal: int
    length: int
    tf: dict[str, int]


class RecallIndex:
    """BM25 (Okapi: k1, b) over the turns of one session, appended in ordinal order."""

    def __init__(self, k1: float = 1.2, b: float = 0.75, max_postings: int = 128) -> None:
        self.k1, self.b, self.max_postings = k1, b, max_postings
        self._docs: list[_Doc] = []
        self._postings: dict[str, list[int]] = {}  # term -> indexes into _docs, ascending
        self._total = 0
        self._next = 0  # one past the last ordinal added

    def __len__(self) -> int:
        return len(self._docs)

    @property
    def next_ordinal(self) -> int:
        return self._next

    def add(self, ordinal: int, text: str) -> None:
        """Index one turn (ordinals must increase); an empty text only advances."""
        if ordinal < self._next:
            raise ValueError(f"ordinal {ordinal} already indexed (next is {self._next})")
        self._next = ordinal + 1
        tf = Counter(terms(text))
        if not tf:
            return
        index = len(self._docs)
        self._docs.append(_Doc(ordinal, sum(tf.values()), dict(tf)))
        self._total += self._docs[-1].length
        for term in tf:
            self._postings.setdefault(term, []).append(index)

    def truncate(self, ordinal: int) -> None:
        """Forget turns from `ordinal` on (a rewind discarded them)."""
        while self._docs and self._docs[-1].ordinal >= ordinal:
            doc = self._docs.pop()
            index = len(self._docs)
            self._total -= doc.length
            for term in doc.tf:
                posting = self._postings[term]
                if posting and posting[-1] == index:
                    posting.pop()
                if not posting:
                    del self._postings[term]
        self._next = min(self._next, ordinal)

    def search(
        self, query: Collection[str], *, limit: int, before: int | None = None
    ) -> list[tuple[int, float]]:
        """Up to `limit` (ordinal, score) pairs, best first, among ordinals < `before`."""
        n = len(self._docs)
        if not n or limit <= 0:
            return []
        avg = self._total / n
        # Docs are in ordinal order, so "before" is a cut in every posting list.
        cut = n if before is None else bisect_left(self._docs, before, key=lambda d: d.ordinal)
        scores: dict[int, float] = {}
        for term in set(query):
            posting = self._postings.get(term)
            if not posting:
                continue
            df = len(posting)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            end = bisect_left(posting, cut)
            # A term in more than max_postings turns says little; its most
            # recent occurrences are scored, the work per term stays bounded.
            for index in posting[max(0, end - self.max_postings) : end]:
                doc = self._docs[index]
                tf = doc.tf[term]
                norm = tf + self.k1 * (1 - self.b + self.b * doc.length / avg)
                scores[index] = scores.get(index, 0.0) + idf * tf * (self.k1 + 1) / norm
        best = heapq.nlargest(limit, scores.items(), key=lambda kv: (kv[1], kv[0]))
        return [(self._docs[i].ordinal, score) for i, score in best]


def snippet(text: str, query: Collection[str], max_chars: int) -> list[str]:
    """The sentences of `text` to show: all of them if they fit `max_chars`, else
    those sharing most terms with `query`, in their order."""
    sentences = [" ".join(s.split()) for s in split_sentences(text)]
    if sum(len(s) + 1 for s in sentences) <= max_chars:
        return sentences
    wanted = set(query)
    ranked = sorted(
        range(len(sentences)),
        key=lambda i: (-len(wanted & set(terms(sentences[i]))), i),
    )
    chosen: list[int] = []
    used = 0
    for i in ranked:
        size = len(sentences[i]) + 1
        if used + size > max_chars:
            continue
        chosen.append(i)
        used += size
    if not chosen and sentences:
        return [sentences[ranked[0]][: max_chars - 1] + "…"]
    return [sentences[i] for i in sorted(chosen)]
