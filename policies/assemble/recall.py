"""Recall of older turns: an incremental BM25 index over one session's turns.

Terms are `policies.language.text.terms`: lower-cased English words without stopwords
and CJK character bigrams, so "HK-55817", "Canberra" and "花生酱" are all
findable. English words are crudely stemmed ("paintings" finds "painting",
"adopted" finds "adopt"), and a name used to address the listener ("Thanks,
Mel!") is left out: it says who is spoken to, not what about, and would tie
every question naming a speaker to all the turns addressed to them. The
index grows by the new turns of each request and is cut back on a rewind;
a search touches only the postings of the query's terms (each capped to its
most recent entries), so the work per request does not grow with the history.

What of a recalled turn is shown is `policies.assemble.recall_snippets`.
"""

from __future__ import annotations

import heapq
import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Collection

from policies.assemble.recall_postings import Postings, RecallDoc
from policies.language.dates import strip_marker
from policies.language.matching import stem
from policies.language.social import addressed_names, strip_vocatives
from policies.language.text import terms

_LATIN_WORD = re.compile(r"[a-z]+")
# A capitalised word after another word of its sentence: a name, not a sentence's start.
_NAME_IN_SENTENCE = re.compile(r"(?<=[\w,;:'’)] )([A-Z][a-z]+)\b")


def _norm(term: str) -> str:
    # Twice: the stemmer takes one suffix at a time ("paintings" -> "painting" -> "paint").
    return stem(stem(term)) if _LATIN_WORD.fullmatch(term) else term


def index_terms(text: str) -> list[str]:
    """The terms a turn is indexed (and a snippet ranked) by."""
    return [_norm(t) for t in terms(strip_vocatives(strip_marker(text)))]


def query_terms(query: Collection[str]) -> set[str]:
    """Query terms (`policies.language.text.terms` of the input) in the index's form."""
    return {_norm(t) for t in query}


# A conversation turn is indexed with part of the turns next to it: a reply's
# words often only make sense with the question it answers ("What do you do
# on weekends?" / "Mostly pottery, and camping with the kids"), and a question
# is found by the answer's words. The turn's own terms weigh 1, the previous
# turn's 0.5, the next turn's 0.3 (the previous one is more often what the
# turn is about). On LoCoMo (all 1,986 questions, evidence turns in the
# top 8), this took the share of answers found from 0.56 to 0.68.
CONTEXT_BEFORE = 0.5
CONTEXT_AFTER = 0.3
# A query naming the person who spoke a turn ("What did Melanie paint?")
# scores that speaker's turns this many times higher. Who is who is learned
# from the conversation itself: a name one side addresses the other by
# ("Thanks, Melanie!") names the other side.
NAMED_SPEAKER_BOOST = 2.0
_OTHER_SIDE = {"user": "assistant", "assistant": "user"}


class SpeakerNames:
    """Who is called by which name: the names one side addresses the other by.

    A name a turn of the user addresses its listener by names the assistant's
    side, and the other way round; `role_named` is the side a query names.
    """

    def __init__(self) -> None:
        # name (index form) -> role -> how often one side addressed the other by it
        self._roles: dict[str, Counter[str]] = {}

    def add(self, names: tuple[str, ...], role: str | None) -> None:
        """A turn of `role` addressed its listener by `names`."""
        spoken_to = _OTHER_SIDE.get(role or "")
        if spoken_to:
            for name in names:
                self._roles.setdefault(name, Counter())[spoken_to] += 1

    def remove(self, names: tuple[str, ...], role: str | None) -> None:
        """Take back `add` (a rewind discarded the turn)."""
        spoken_to = _OTHER_SIDE.get(role or "")
        for name in names:
            if spoken_to is None:
                break
            counts = self._roles[name]
            counts[spoken_to] -= 1
            if counts[spoken_to] <= 0:
                del counts[spoken_to]
            if not counts:
                del self._roles[name]

    def names_any(self, text: str) -> bool:
        """Whether `text` names either side by a name it was addressed by, written
        as a name: capitalised, not the first word of its sentence, and not
        itself an address ("Wow, Dana! What next?" speaks to Dana, it asks
        nothing about her)."""
        return any(
            _norm(m.group(1).lower()) in self._roles
            for m in _NAME_IN_SENTENCE.finditer(strip_vocatives(text))
        )

    def role_named(self, query: Collection[str]) -> str | None:
        """The role a query names by one of the names it was addressed by, if exactly one."""
        roles: set[str] = set()
        for term in query_terms(query):
            counts = self._roles.get(term)
            if counts:
                role, n = counts.most_common(1)[0]
                # A name both sides are called by says nothing about who spoke.
                if n >= 2 * (sum(counts.values()) - n):
                    roles.add(role)
        return roles.pop() if len(roles) == 1 else None


class RecallIndex:
    """BM25 (Okapi: k1, b) over the turns of one session, appended in ordinal order.

    `context=(before, after)`: how much of the previous and next turn's terms
    count towards a turn's own (0, 0 for independent documents such as stored
    memory items). Roles, when given, let a query that names a speaker prefer
    that speaker's turns.
    """

    def __init__(
        self,
        k1: float = 1.2,
        b: float = 0.75,
        max_postings: int = 128,
        context: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        self.k1, self.b, self.max_postings = k1, b, max_postings
        self.before, self.after = context
        self._postings = Postings()
        self._next = 0  # one past the last ordinal added
        self.speakers = SpeakerNames()

    @classmethod
    def for_conversation(cls) -> RecallIndex:
        """The index of a session's turns: each turn read with its neighbours."""
        return cls(context=(CONTEXT_BEFORE, CONTEXT_AFTER))

    def __len__(self) -> int:
        return len(self._postings.docs)

    @property
    def next_ordinal(self) -> int:
        return self._next

    def add(self, ordinal: int, text: str, role: str | None = None, date: str = "") -> None:
        """Index one turn (ordinals must increase); an empty text only advances.

        `date`: the day the turn was said (its label), indexed with it, so a
        question anchored in time ("what did she adopt in June 2023?") finds
        the turns of that day.
        """
        if ordinal < self._next:
            raise ValueError(f"ordinal {ordinal} already indexed (next is {self._next})")
        self._next = ordinal + 1
        own = Counter(index_terms(text))
        if not own:
            return
        own.update(index_terms(date))
        names = tuple(_norm(n.lower()) for n in addressed_names(text)) if role else ()
        self.speakers.add(names, role)
        prev = self._neighbour(ordinal)
        tf: dict[str, float] = dict(own)
        if prev is not None and self.before:
            for term, n in prev.own.items():
                tf[term] = tf.get(term, 0.0) + self.before * n
        doc = RecallDoc(ordinal, role, own, tf, sum(tf.values()), names)
        if prev is not None and self.after:
            self._postings.reweigh_last(own, self.after)
        self._postings.append(doc)

    def _neighbour(self, ordinal: int) -> RecallDoc | None:
        """The last indexed turn, if it is the one right before `ordinal`."""
        docs = self._postings.docs
        if docs and docs[-1].ordinal == ordinal - 1:
            return docs[-1]
        return None

    def truncate(self, ordinal: int) -> None:
        """Forget turns from `ordinal` on (a rewind discarded them)."""
        docs = self._postings.docs
        while docs and docs[-1].ordinal >= ordinal:
            doc = self._postings.pop()
            self.speakers.remove(doc.names, doc.role)
            if docs and self.after and docs[-1].ordinal == doc.ordinal - 1:
                self._postings.reweigh_last(doc.own, -self.after)
        self._next = min(self._next, ordinal)
        # Sums of floats taken back drift; a rewind is rare, so add up again.
        self._postings.recount()

    def search(
        self, query: Collection[str], *, limit: int, before: int | None = None
    ) -> list[tuple[int, float]]:
        """Up to `limit` (ordinal, score) pairs, best first, among ordinals < `before`."""
        docs, by_term = self._postings.docs, self._postings.by_term
        n = len(docs)
        if not n or limit <= 0:
            return []
        avg = self._postings.total / n
        # Docs are in ordinal order, so "before" is a cut in every posting list.
        cut = n if before is None else bisect_left(docs, before, key=lambda d: d.ordinal)
        scores: dict[int, float] = {}
        for term in query_terms(query):
            posting = by_term.get(term)
            if not posting:
                continue
            df = len(posting)
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            end = bisect_left(posting, cut)
            # A term in more than max_postings turns says little; its most
            # recent occurrences are scored, the work per term stays bounded.
            for index in posting[max(0, end - self.max_postings) : end]:
                doc = docs[index]
                tf = doc.tf[term]
                norm = tf + self.k1 * (1 - self.b + self.b * doc.length / avg)
                scores[index] = scores.get(index, 0.0) + idf * tf * (self.k1 + 1) / norm
        speaker = self.speakers.role_named(query)
        if speaker is not None:
            for index in scores:
                if docs[index].role == speaker:
                    scores[index] *= NAMED_SPEAKER_BOOST
        best = heapq.nlargest(limit, scores.items(), key=lambda kv: (kv[1], kv[0]))
        return [(docs[i].ordinal, score) for i, score in best]
