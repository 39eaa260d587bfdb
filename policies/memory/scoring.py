"""How much a memory item deserves a place in the context right now.

score = importance x type/source weight x recency decay
        + relevance to the current input - exposure penalty (+ pinned bonus)

Scores only *rank* items when a section is over its share; they never decide
alone whether a user's requirement exists (that is extraction's job), so the
weights favour stability: a decay floor keeps old directives competitive, and
user statements always start above what the assistant inferred.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from policies.language.names import names_contact
from policies.language.segment import self_fixed
from policies.language.text import term_set
from policies.language.values import extract_values
from policies.types import ItemSource, ItemType, MemoryItem

# Item types that are rules the model must follow (anchors, replay).
_RULE_TYPES = frozenset({"directive", "constraint"})

_SOURCE_WEIGHTS: dict[ItemSource, float] = {"user": 1.0, "tool": 0.8, "assistant": 0.6}
_TYPE_WEIGHTS: dict[ItemType, float] = {
    "directive": 1.0,
    "constraint": 1.0,
    "goal": 1.0,
    "fact": 0.9,
    "preference": 0.9,
    # Rule extraction makes a state only of a withdrawn rule ("no need to list the
    # hours any more", "感叹号随便用吧"): what holds now in that rule's place, so it
    # weighs like the rule did.
    "state": 1.0,
    "entity": 0.7,
    "inferred": 0.5,
}


class ScoringParams(BaseModel):
    """Weights of `score_item`; part of a policy's config, validated at start-up."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    importance_weight: float = Field(default=1.0, ge=0)
    # Half-life of the recency decay, in message ordinals (a user/assistant
    # round is two). Long enough that a requirement from 20 rounds ago still
    # counts, short enough that fresh facts win ties.
    half_life: float = Field(default=40.0, gt=0)
    # Decay never goes below this share: standing directives do not fade.
    decay_floor: float = Field(default=0.35, ge=0, le=1)
    relevance_weight: float = Field(default=1.0, ge=0)
    exposure_penalty: float = Field(default=0.02, ge=0)
    max_exposure_penalty: float = Field(default=0.2, ge=0)
    # The user's word outranks what the assistant or a tool said.
    source_weights: dict[ItemSource, float] = Field(default_factory=lambda: dict(_SOURCE_WEIGHTS))
    type_weights: dict[ItemType, float] = Field(default_factory=lambda: dict(_TYPE_WEIGHTS))
    # Added to what the user stated, so it starts above comparable inferred
    # items (placement additionally puts every user statement first).
    user_bonus: float = Field(default=0.5, ge=0)
    pinned_bonus: float = Field(default=100.0, ge=0)
    # A decision with a concrete value (a date, an amount, an ID, a count, a
    # title) is what a user asks back for: it ranks like a rule, whatever its
    # type, with at least this importance.
    valued_importance: float = Field(default=0.85, ge=0, le=1)
    # An ID or reference number the user gave (an order number, an application ID)
    # is what every later message to a third party needs: above a plain value.
    id_importance: float = Field(default=0.95, ge=0, le=1)
    # A value the user revised is the current answer to something that was
    # asked twice: it ranks above what was said once.
    revised_bonus: float = Field(default=0.1, ge=0)
    # Decay floor of IDs and named contacts the user gave: stated once, early, and
    # needed whenever a message to a third party is written.
    reference_decay_floor: float = Field(default=0.7, ge=0, le=1)


# Item values repeat across requests (same session, same items), so their term
# sets are worth caching; the bound keeps a long-running proxy's memory flat.
@lru_cache(maxsize=8192)
def _cached_terms(text: str) -> frozenset[str]:
    return term_set(text)


def relevance(query_terms: Collection[str], text: str) -> float:
    """Lexical relevance of `text` to the current input (0..1).

    Cosine over term sets: symmetric, so neither a long input nor a long item
    wins by length alone (a plain share-of-query would favour long items).
    """
    if not query_terms:
        return 0.0
    item_terms = _cached_terms(text)
    if not item_terms:
        return 0.0
    query = query_terms if isinstance(query_terms, (set, frozenset)) else set(query_terms)
    hits = sum(1 for term in item_terms if term in query)
    return hits / math.sqrt(len(item_terms) * len(query))


# Kinds of value that make a statement concrete (bare numbers do not).
_CONCRETE = frozenset(
    {"money", "percent", "date", "time", "qty", "label", "id", "freq", "title", "bound", "version"}
)


@lru_cache(maxsize=8192)
def concrete(text: str) -> bool:
    """Does `text` state a date, an amount, an ID, a count, a title…?"""
    return any(v.kind in _CONCRETE for v in extract_values(text))


@lru_cache(maxsize=8192)
def holds_id(text: str) -> bool:
    """Does `text` give an ID or reference number ("application ID APP-55821")?"""
    return any(v.kind == "id" for v in extract_values(text))


def recency(
    item: MemoryItem, current_ordinal: int, params: ScoringParams, floor: float | None = None
) -> float:
    age = max(current_ordinal - item.source_ordinal, 0)
    decay = math.pow(0.5, age / params.half_life)
    low = params.decay_floor if floor is None else floor
    return low + (1.0 - low) * decay


def score_item(
    item: MemoryItem,
    *,
    current_ordinal: int,
    query_terms: Collection[str],
    params: ScoringParams,
) -> float:
    source_weight = params.source_weights.get(item.source, 1.0)
    weight = source_weight * params.type_weights.get(item.type, 1.0)
    importance = item.importance
    # A value fixed mid-sentence ("84-2219047 — wait no, 84-2291047") is concrete
    # and revised at once: the user took care to get it right, like an ID.
    fixed = is_user_stated(item) and self_fixed(item.value)
    # Who to reach ("our contact at the venue is Marta") is said once and asked
    # back like a date: it ranks like a concrete value, not like a passing remark.
    contact = is_user_stated(item) and item.type != "goal" and names_contact(item.value)
    floor = None
    if fixed or contact or (is_user_stated(item) and concrete(item.value)):
        weight = max(weight, source_weight)
        importance = max(importance, params.valued_importance)
        if fixed or contact or holds_id(item.value):
            importance = max(importance, params.id_importance)
            # An ID or a contact does not get less true with age; a remark does.
            floor = max(params.decay_floor, params.reference_decay_floor)
    if (item.replaces or fixed) and is_user_stated(item):
        importance += params.revised_bonus
    score = params.importance_weight * importance * weight
    score *= recency(item, current_ordinal, params, floor)
    score += params.relevance_weight * relevance(query_terms, item.value)
    score -= min(params.exposure_penalty * item.exposure, params.max_exposure_penalty)
    if item.source == "user" and item.type != "inferred":
        score += params.user_bonus
    if item.pinned:
        score += params.pinned_bonus
    return score


def is_user_stated(item: MemoryItem) -> bool:
    """What the user said, as opposed to what the assistant or a tool concluded."""
    return item.source == "user" and item.type != "inferred"


def pick_anchors(
    items: Sequence[MemoryItem], *, max_anchors: int, min_anchors: int, min_importance: float
) -> list[MemoryItem]:
    """The 2-4 items that must never be lost, most important first.

    Deliberately independent of the current input: anchors sit right after
    the system prompt, and a set that changed with every message would break
    the provider's prompt cache. Pinned items come first, then the earliest
    goal the user stated, then the user's weightiest directives/constraints,
    then (up to `min_anchors`) the user's weightiest statements of any kind.
    """
    active = [it for it in items if it.status == "active"]
    by_weight = sorted(active, key=lambda it: (-it.importance, it.source_ordinal, it.id))
    chosen: dict[str, MemoryItem] = {}

    def add(item: MemoryItem) -> None:
        if len(chosen) < max_anchors:
            chosen.setdefault(item.id, item)

    for it in by_weight:
        if it.pinned:
            add(it)
    goals = [it for it in active if it.type == "goal" and is_user_stated(it)]
    if goals:
        add(min(goals, key=lambda it: (it.source_ordinal, it.id)))
    for it in by_weight:
        if is_user_stated(it) and it.type in _RULE_TYPES and it.importance >= min_importance:
            add(it)
    for it in by_weight:
        if len(chosen) >= min(min_anchors, max_anchors):
            break
        if is_user_stated(it):
            add(it)
    return list(chosen.values())


def rank_items(items: Iterable[MemoryItem], scores: Mapping[str, float]) -> list[MemoryItem]:
    """Placement priority: every user statement before anything inferred, then by score."""
    return sorted(
        items, key=lambda it: (not is_user_stated(it), -scores[it.id], it.source_ordinal, it.id)
    )


def pick_replay(
    items: Iterable[MemoryItem], query_terms: Collection[str], *, limit: int, threshold: float
) -> list[tuple[MemoryItem, float]]:
    """Up to `limit` active rules the current input touches, most relevant first."""
    scored = [
        (it, relevance(query_terms, it.value))
        for it in items
        if it.status == "active" and it.type in _RULE_TYPES
    ]
    relevant = [(it, rel) for it, rel in scored if rel > threshold]
    relevant.sort(key=lambda pair: (-pair[1], pair[0].source_ordinal, pair[0].id))
    return relevant[:limit]
