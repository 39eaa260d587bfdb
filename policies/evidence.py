"""Room and order for the evidence a question about the past needs.

The backbone fills its room with the user's words, oldest first, and recall
gets what is left: on a long conversation under a small budget that is
nothing, and a question about something said long ago reaches the model
with a wall of condensed turns that do not hold its answer. So when the
current input asks about the past (`policies.question`), recalled turns
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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace

from policies.question import Question
from policies.recall import index_terms, query_terms
from policies.timeline import stamp_relative
from policies.types import RecallHit

# How much a hit's share of not yet covered query terms counts against its
# BM25 score (relative to the best hit's): higher for a question that ties
# several things together.
COVERAGE_WEIGHT = 0.35
BRIDGING_COVERAGE_WEIGHT = 0.7


def evidence_room(question: Question, hist_room: int, share: float, lookup_share: float) -> int:
    """Tokens the recalled turns may take: `lookup_share` of the history room for
    a question about the past, else the usual `share`."""
    return max(0, int(hist_room * (lookup_share if question.seeks_past else share)))


def order_hits(
    hits: Sequence[RecallHit], question: Question, query: Collection[str]
) -> list[RecallHit]:
    """`hits` in the order recall should show them (see the module docstring)."""
    if not hits:
        return []
    wanted = query_terms(query)
    own = "own_words" in question.kinds
    weight = BRIDGING_COVERAGE_WEIGHT if "bridging" in question.kinds else COVERAGE_WEIGHT
    best = max(h.score for h in hits) or 1.0
    covers = [wanted & set(index_terms(h.text)) for h in hits]
    left = list(range(len(hits)))
    covered: set[str] = set()
    out: list[RecallHit] = []
    while left:
        values = {
            i: (
                own and hits[i].role == "user",
                hits[i].score / best + weight * len(covers[i] - covered) / max(1, len(wanted)),
            )
            for i in left
        }
        pick = max(left, key=values.__getitem__)
        left.remove(pick)
        covered |= covers[pick]
        out.append(hits[pick])
    return out


def dated_hits(hits: Sequence[RecallHit]) -> list[RecallHit]:
    """`hits` with their relative time read against the day each was said
    (`policies.timeline`): "yesterday" weeks later means nothing without it."""
    return [replace(h, text=stamp_relative(h.text, h.date)) if h.date else h for h in hits]


def frozen_shown(unit_tokens: Sequence[int], free: int, keep_first: bool = True) -> int:
    """How many frozen units to show so that at least `free` tokens are freed,
    cutting from the end (the first unit stays when `keep_first`)."""
    n = len(unit_tokens)
    floor = 1 if keep_first and n else 0
    while free > 0 and n > floor:
        n -= 1
        free -= unit_tokens[n]
    return n


def room_needed(question: Question, cap: int, left: int, plan_tokens: Callable[[int], int]) -> int:
    """Tokens the frozen part must free for the recalled lines: what they take
    within `cap` (`plan_tokens(cap)`) beyond what is `left`; 0 unless the input
    asks about the past."""
    if not question.seeks_past or cap <= left:
        return 0
    return max(0, math.ceil(plan_tokens(cap)) - max(left, 0))
