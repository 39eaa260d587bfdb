"""The bookkeeping of `RecallIndex` (`policies.assemble.recall`): its documents and their postings.

Documents are appended in ordinal order and taken back from the end (a
rewind), so every posting list stays ascending and a change to the last
document touches only the ends of its terms' lists. The BM25 search reads
these structures and never changes them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass


@dataclass(slots=True)
class RecallDoc:
    """One indexed turn (or stored memory item)."""

    ordinal: int
    role: str | None
    own: Counter[str]  # the turn's own terms
    tf: dict[str, float]  # own terms plus its neighbours' share (see RecallIndex)
    length: float
    names: tuple[str, ...]  # names this turn addresses its listener by


class Postings:
    """The documents in ordinal order, each term's documents, the sum of their lengths."""

    def __init__(self) -> None:
        self.docs: list[RecallDoc] = []
        self.by_term: dict[str, list[int]] = {}  # term -> indexes into docs, ascending
        self.total = 0.0

    def append(self, doc: RecallDoc) -> None:
        """Add `doc` after the last document (its ordinal is the highest)."""
        index = len(self.docs)
        self.docs.append(doc)
        self.total += doc.length
        for term in doc.tf:
            self.by_term.setdefault(term, []).append(index)

    def reweigh_last(self, terms: Counter[str], weight: float) -> None:
        """Add `weight` x `terms` to the last document, or take it back (< 0)."""
        index = len(self.docs) - 1
        doc = self.docs[index]
        for term, n in terms.items():
            had = doc.tf.get(term, 0.0)
            now = had + weight * n
            if had == 0.0:
                self.by_term.setdefault(term, []).append(index)
            if now <= 1e-9:
                del doc.tf[term]
                posting = self.by_term[term]
                if posting and posting[-1] == index:
                    posting.pop()
                if not posting:
                    del self.by_term[term]
                now = 0.0
            else:
                doc.tf[term] = now
            doc.length += now - had
            self.total += now - had

    def pop(self) -> RecallDoc:
        """Take the last document out, with its postings."""
        doc = self.docs.pop()
        index = len(self.docs)
        self.total -= doc.length
        for term in doc.tf:
            posting = self.by_term[term]
            if posting and posting[-1] == index:
                posting.pop()
            if not posting:
                del self.by_term[term]
        return doc

    def recount(self) -> None:
        """The sum of the lengths, added up again (after a rewind)."""
        self.total = sum(d.length for d in self.docs)
