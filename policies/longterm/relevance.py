"""Which long-term items the current conversation is about, and how much.

Items are retrieved lexically for the current input and the conversation's
working memory (BM25 from `policies.assemble.recall` as a pre-filter for users
with many items, then a rerank by the share of each item's terms the
conversation mentions). With an embedding model, items whose vector is close to
the input's join the candidates, and the rerank takes the stronger of the two
signals plus a bonus when both agree (`_hybrid`). A rule on the same kind of
choice as the input (a courier, a payment method: `policies.language.value_kinds`)
is relevant though no word is shared, and so is a standing rule for the kind of
task the input asks for ("whenever you book a hotel…" / "find a hotel in…":
`policies.longterm.task_scope`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from policies.assemble.recall import RecallIndex
from policies.language.matching import Idf, content_terms, covered, merge_terms
from policies.language.text import term_set
from policies.language.value_kinds import shared_kinds
from policies.longterm.items import LongTermItem
from policies.longterm.params import LongTermParams
from policies.longterm.task_scope import shared_task
from policies.types import RULE_TYPES, MemoryItem

_CONTEXT_WEIGHT = 0.75  # working memory and system prompt count a bit less than the input
_LIVE = frozenset({"active", "pending"})
# What agreement of the lexical and the vector signal adds to the stronger one.
_AGREEMENT = 0.25
# Long-term kinds that choose among alternatives (a rule, a final decision).
_CHOOSING = frozenset({"rule", "preference", "decision"})


@dataclass(frozen=True, slots=True)
class BackfillQuery:
    """What the current conversation is about."""

    text: str  # the current input (the user's words of the tail)
    items: Sequence[MemoryItem]  # this conversation's working memory, all statuses
    system: str
    session_id: str
    # The input's vector and the model that made it (None: lexical retrieval only).
    vector: tuple[float, ...] | None = None
    vector_model: str | None = None


def live_user_items(items: Sequence[MemoryItem]) -> list[MemoryItem]:
    """What the user said that still holds in this conversation."""
    return [it for it in items if it.status in _LIVE and it.source == "user"]


def _norm(v: Sequence[float]) -> float:
    return math.sqrt(sum(map(operator.mul, v, v)))


def cosine(a: Sequence[float], b: Sequence[float], a_norm: float | None = None) -> float:
    """Cosine similarity (0 for vectors of other sizes, or zero vectors). On the
    request path for every embedded row: `map(operator.mul)` is ~4x `fsum`'s speed."""
    if len(a) != len(b):
        return 0.0
    norm = (_norm(a) if a_norm is None else a_norm) * _norm(b)
    return sum(map(operator.mul, a, b)) / norm if norm else 0.0


def similarities(rows: Sequence[LongTermItem], q: BackfillQuery) -> dict[str, float]:
    """Row id -> cosine with the input, for rows embedded by the input's model."""
    if q.vector is None:
        return {}
    q_norm = _norm(q.vector)
    return {
        r.id: cosine(q.vector, r.embedding, q_norm)
        for r in rows
        if r.embedding is not None and r.embedding_model == q.vector_model
    }


def _hybrid(lexical: float, cos: float | None, p: LongTermParams) -> float:
    """One score from both signals. A vector at `embedding_min_similarity` just
    clears `min_score` and one at 1.0 scores 1; agreement adds a bonus."""
    if cos is None or cos < p.embedding_min_similarity:
        return lexical
    floor = p.embedding_min_similarity
    by_vector = p.min_score + (1 - p.min_score) * (cos - floor) / (1 - floor)
    return min(1.0, max(lexical, by_vector) + _AGREEMENT * min(lexical, by_vector))


def shortlist(
    rows: Sequence[LongTermItem], q: BackfillQuery, p: LongTermParams, cos: Mapping[str, float]
) -> list[int]:
    """Indexes of the rows worth reranking: all, or for very large stores BM25's best
    and the rows close by meaning."""
    if len(rows) <= p.prefilter:
        return list(range(len(rows)))
    index = RecallIndex()
    for i, row in enumerate(rows):
        index.add(i, row.value)
    query = term_set(q.text) | term_set(q.system)
    for it in live_user_items(q.items):
        query |= term_set(it.value)
    hits = {i for i, _ in index.search(query, limit=p.prefilter)}
    hits |= {i for i, r in enumerate(rows) if r.slot in p.global_slots}
    hits |= {i for i, r in enumerate(rows) if cos.get(r.id, 0.0) >= p.embedding_min_similarity}
    return sorted(hits)


def score_rows(
    rows: Sequence[LongTermItem], q: BackfillQuery, p: LongTermParams, cos: Mapping[str, float]
) -> list[tuple[LongTermItem, float, str]]:
    idf = Idf(r.value for r in rows)
    input_bag = content_terms(q.text) if q.text else {}
    context = merge_terms(
        (content_terms(q.system), 1.0),
        *((content_terms(it.value), 1.0) for it in live_user_items(q.items)),
    )
    out = []
    for row in rows:
        bag = content_terms(row.value)
        by_input = covered(input_bag, bag, idf) if input_bag else 0.0
        by_context = _CONTEXT_WEIGHT * covered(context, bag, idf) if context else 0.0
        score, why = (
            (by_input, "current input")
            if by_input >= by_context
            else (by_context, "this conversation")
        )
        similar = cos.get(row.id)
        hybrid = _hybrid(score, similar, p)
        if hybrid > score:
            meaning = f"meaning (cosine {similar:.2f})"
            why = meaning if score == 0 else f"{why} and {meaning}"
            score = hybrid
        if row.slot in p.global_slots and row.type in RULE_TYPES and score < p.min_score:
            score, why = p.min_score, f"applies to every conversation ({row.slot})"
        kinds = shared_kinds(row.value, q.text) if row.kind in _CHOOSING else []
        if kinds and score < p.min_score:
            score, why = p.min_score, f"a {kinds[0]} the input names"
        task = shared_task(row.value, q.text) if row.type in RULE_TYPES else None
        if task and score < p.min_score:
            score, why = p.min_score, f"a standing rule for this kind of task ({task})"
        out.append((row, score, why))
    return out
