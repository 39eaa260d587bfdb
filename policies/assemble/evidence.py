"""Room and order for the evidence a question about the past needs.

The backbone fills its room with the user's words, oldest first, and recall
gets what is left: on a long conversation under a small budget that is
nothing, and a question about something said long ago reaches the model
with a wall of condensed turns that do not hold its answer. So when the
current input asks about the past (`policies.assemble.question`), recalled turns
keep a guaranteed share of the history room: the frozen part gives way from
its end for this request only (its levels are not changed, so the next
request lays it out as before and the prompt up to the cut stays a cache
hit), and only as far as the recalled lines need.

What recall shows is ordered by what the question asks: the user's own
turns first for "what did I say…", and, for every question, turns that
cover the things it names that better-scoring turns left uncovered, so a
question tying two events together gets both rather than two matches of one.
Relative time in a recalled turn ("yesterday", "上周五") is read against the
day it was said, so the date of an event is there for a question about when.
A question about a change of mind gets both statements, dated (`rival_hits`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from policies.assemble.question import Question
from policies.assemble.recall import index_terms, query_terms
from policies.language.dates import DateLabels, stated_date
from policies.language.timeline import stamp_relative
from policies.types import MemoryItem, RecallHit, Turn

# How much a hit's share of the query terms not yet covered counts beside its
# BM25 score (relative to the best hit's), and what is left of that score for
# a hit that covers nothing new: a question that ties several things together
# wants each of them more than a second match of one.
COVERAGE_WEIGHT = 0.35
REDUNDANT = 0.85
BRIDGING_COVERAGE_WEIGHT = 0.7
BRIDGING_REDUNDANT = 0.6


def evidence_room(question: Question, hist_room: int, share: float, lookup_share: float) -> int:
    """Tokens the recalled turns may take: `lookup_share` of the history room for
    a question about the past, else the usual `share`."""
    return max(0, int(hist_room * (lookup_share if question.seeks_past else share)))


def order_hits(
    hits: Sequence[RecallHit], question: Question, query: Collection[str]
) -> list[RecallHit]:
    """`hits` in the order recall should show them (see the module docstring);
    as they are for an input that does not ask about the past."""
    if not hits or not question.seeks_past:
        return list(hits)
    wanted = query_terms(query)
    own = "own_words" in question.kinds
    bridging = "bridging" in question.kinds
    weight = BRIDGING_COVERAGE_WEIGHT if bridging else COVERAGE_WEIGHT
    redundant = BRIDGING_REDUNDANT if bridging else REDUNDANT
    best = max(h.score for h in hits) or 1.0
    covers = [wanted & set(index_terms(h.text)) for h in hits]
    left = list(range(len(hits)))
    covered: set[str] = set()
    out: list[RecallHit] = []
    while left:
        uncovered = max(1, len(wanted - covered))
        values = {}
        for i in left:
            new = len(covers[i] - covered)
            score = hits[i].score / best * (1.0 if new else redundant)
            values[i] = (own and hits[i].role == "user", score + weight * new / uncovered)
        pick = max(left, key=values.__getitem__)
        left.remove(pick)
        covered |= covers[pick]
        out.append(hits[pick])
    return out


def dated_hits(hits: Sequence[RecallHit], question: Question) -> list[RecallHit]:
    """For a question about the past, `hits` with their relative time read
    against the day each was said (`policies.language.timeline`): "yesterday" weeks
    later means nothing without it."""
    if not question.seeks_past:
        return list(hits)
    return [replace(h, text=stamp_relative(h.text, h.date)) if h.date else h for h in hits]


_RULES = frozenset({"directive", "constraint"})
# A statement the user later contradicted, recalled for a question about the
# change, ranks with the best hits (a multiple of the best BM25 score).
RIVAL_SCORE = 1.5


def rival_hits(
    question: Question,
    items: Sequence[MemoryItem],
    history: Sequence[Turn],
    query: Collection[str],
    top: float,
) -> list[RecallHit]:
    """For a question about a change of mind: the turns of both statements (the
    one the user said first and the one that replaced it), each with its date,
    for every changed item that shares a term with the question; scored above
    `top` (the best BM25 hit's score)."""
    if "contradiction" not in question.kinds or not items:
        return []
    wanted = query_terms(query)
    by_id = {it.id: it for it in items}
    ordinals: list[int] = []
    for it in items:
        if it.status != "superseded" or it.superseded_by not in by_id:
            continue
        new = by_id[it.superseded_by]
        if not wanted & set(index_terms(f"{it.value} {new.value}")):
            continue
        ordinals += [o for o in (it.source_ordinal, new.source_ordinal) if o not in ordinals]
    if not ordinals:
        return []
    labels = DateLabels()
    dates = {t.ordinal: labels.add(t.text, None, stated_date(t.raw)) for t in history}
    by_ordinal = {t.ordinal: t for t in history}
    score = RIVAL_SCORE * (top or 1.0)
    return [
        RecallHit(o, by_ordinal[o].role, dates.get(o, ""), by_ordinal[o].text, score)
        for o in sorted(ordinals)
        if o in by_ordinal
    ]


def frozen_cut(
    unit_tokens: Sequence[int], free: int, keep: Collection[int] = (), keep_first: bool = True
) -> set[int]:
    """Indexes of the frozen units to leave out so that at least `free` tokens
    are freed, from the end (the prompt up to the first of them stays as it
    was); the first unit and those in `keep` (the user's standing rules, which
    apply to the answer whatever the question) stay."""
    cut: set[int] = set()
    floor = 1 if keep_first else 0
    for i in range(len(unit_tokens) - 1, floor - 1, -1):
        if free <= 0:
            break
        if i in keep:
            continue
        cut.add(i)
        free -= unit_tokens[i]
    return cut


def standing_ordinals(items: Sequence[MemoryItem]) -> set[int]:
    """Ordinals of the user turns that state a live rule (a directive or a
    constraint): a question about the past does not make them give way."""
    return {
        it.source_ordinal
        for it in items
        if it.source == "user" and it.status in ("active", "pending") and it.type in _RULES
    }


def room_needed(question: Question, cap: int, left: int, plan_tokens: Callable[[int], int]) -> int:
    """Tokens the frozen part must free for the recalled lines: what they take
    within `cap` (`plan_tokens(cap)`) beyond what is `left`; 0 unless the input
    points back at the conversation's past (`Question.refers_back`)."""
    if not (question.seeks_past and question.refers_back) or cap <= left:
        return 0
    return max(0, math.ceil(plan_tokens(cap)) - max(left, 0))
