"""Graded forgetting: active → compressible → discardable → archived, and back.

Forgetting is a demotion, not a deletion (DESIGN "Memory items"):

- active: a line of its own in the working-memory block;
- compressible: no line; what the item says lives on in the rolling summary
  (and verbatim in the recent turns or the store, findable by recall);
- discardable: only its key terms stay, in one "entity index" line;
- archived: nothing is shown; the status is persisted.

Any of the three comes back to active when the current input mentions the
item (one of its values, IDs or names, or several of its terms).

What fades: facts, entities, states and everything the assistant inferred or
a tool returned. What does not fade while it is active: rules the user set
(directives and constraints), the user's goals and preferences, pinned
items and items pending confirmation. A standing rule must hold on round 300
as on round 3 whether or not it was mentioned since; it leaves working memory
only when the user revokes it (or replaces it), never by age. Facts, on the
other hand, pile up in a long conversation and most stop mattering.

Retention = importance × source/type weight × 0.5^(age / half-life), where
age counts message ordinals since the item was stated or last re-promoted.
Grades are computed only when the working-memory block is rebuilt (see
`MemoryLayout`), so that the block stays stable between rebuilds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from policies.language.text import terms
from policies.language.values import extract_values, value_signature
from policies.memory.scoring import ScoringParams
from policies.types import ItemStatus, ItemType, ItemVersion, MemoryItem, Tier

REPROMOTED_NOTE = "re-promoted: mentioned by the user"
ARCHIVED_NOTE = "archived: faded out of working memory"
_NAME = re.compile(r"\b[A-Z][a-zA-Z]{2,}(?:[ -][A-Z][a-zA-Z]+)*")
_FADING_TYPES: frozenset[ItemType] = frozenset({"fact", "entity", "state", "inferred"})


class ForgettingParams(BaseModel):
    """Thresholds of the graded forgetting; part of the `full` preset's config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    # In message ordinals (a round is two). Long: a fact from 50 rounds ago
    # may well still matter; working memory has a share cap besides.
    half_life: float = Field(default=160.0, gt=0)
    # Nothing younger than this is demoted, whatever its weight.
    min_age: int = Field(default=40, ge=0)
    active_above: float = Field(default=0.3, ge=0)
    compressible_above: float = Field(default=0.18, ge=0)
    discardable_above: float = Field(default=0.08, ge=0)
    # The share of an item's terms the input must repeat to re-promote it
    # (besides repeating one of its values or names, which always does).
    mention_share: float = Field(default=0.4, gt=0, le=1)


def fades(item: MemoryItem) -> bool:
    """Whether age may demote the item at all (see the module docstring)."""
    if item.pinned or item.status == "pending":
        return False
    if item.source != "user":
        return True
    return item.type in _FADING_TYPES


def promoted_at(item: MemoryItem) -> int:
    """Ordinal of the item's latest re-promotion, else the one that stated it."""
    for version in reversed(item.versions):
        if version.note.startswith(REPROMOTED_NOTE):
            return max(version.ordinal, item.source_ordinal)
    return item.source_ordinal


def retention(item: MemoryItem, current_ordinal: int, params: ForgettingParams) -> float:
    weights = ScoringParams()
    weight = weights.source_weights.get(item.source, 1.0) * weights.type_weights.get(item.type, 1.0)
    age = max(current_ordinal - promoted_at(item), 0)
    return float(item.importance * weight * 0.5 ** (age / params.half_life))


def grade(item: MemoryItem, current_ordinal: int, params: ForgettingParams) -> Tier:
    if item.status == "archived":
        return "archived"
    if not params.enabled or not fades(item):
        return "active"
    if current_ordinal - promoted_at(item) < params.min_age:
        return "active"
    kept = retention(item, current_ordinal, params)
    if kept > params.active_above:
        return "active"
    if kept > params.compressible_above:
        return "compressible"
    if kept > params.discardable_above:
        return "discardable"
    return "archived"


def grade_items(
    items: Iterable[MemoryItem], current_ordinal: int, params: ForgettingParams
) -> dict[str, Tier]:
    """Grades of live and archived items (superseded/revoked ones are history)."""
    return {
        it.id: grade(it, current_ordinal, params)
        for it in items
        if it.status in ("active", "pending", "archived")
    }


def entity_keys(item: MemoryItem) -> list[str]:
    """What the entity index keeps of an item: its values, IDs and names."""
    keys = [v.text for v in extract_values(item.value)]
    keys += [m.group(0) for m in _NAME.finditer(item.value) if m.start() > 0]
    if not keys:
        keys = [" ".join(terms(item.value)[:3])]
    return list(dict.fromkeys(k.strip() for k in keys if k.strip()))


def entity_line(items: Sequence[MemoryItem], max_keys: int = 16) -> str:
    """One line naming the discardable items, so the model knows they exist."""
    keys: list[str] = []
    for item in sorted(items, key=lambda it: (it.source_ordinal, it.id)):
        keys.extend(k for k in entity_keys(item) if k not in keys)
    if not keys:
        return ""
    return "- [mentioned earlier] " + "; ".join(keys[:max_keys])


def mentioned(
    item: MemoryItem, query_terms: Collection[str], query_text: str, params: ForgettingParams
) -> bool:
    """Whether the current input mentions the item (re-promotion)."""
    if not query_terms:
        return False
    signatures = {value_signature(v) for v in extract_values(query_text)}
    if signatures & {value_signature(v) for v in extract_values(item.value)}:
        return True
    names = {m.group(0).lower() for m in _NAME.finditer(item.value) if m.start() > 0}
    query = set(query_terms)
    if any(all(part in query for part in terms(name)) for name in names if terms(name)):
        return True
    own = set(terms(item.value))
    shared = len(own & query)
    return shared >= 2 and shared >= params.mention_share * len(own)


def apply_tiers(
    items: list[MemoryItem], archive: Collection[str], repromote: Collection[str], ordinal: int
) -> list[str]:
    """Archive faded items and re-promote mentioned ones, replacing them in `items`
    (in place: the list may be the one a cache holds). Returns the changed ids.

    Each change is a version (rollback restores the previous status). A
    re-promotion of an item that was not archived only records the
    mention: its age for forgetting restarts there.
    """
    wanted_archive, wanted_back = set(archive), set(repromote)
    changed: list[str] = []
    for i, item in enumerate(items):
        status: ItemStatus
        if item.id in wanted_back and item.status in ("active", "archived"):
            note = REPROMOTED_NOTE
            status = "active"
        elif item.id in wanted_archive and item.status == "active":
            note, status = ARCHIVED_NOTE, "archived"
        else:
            continue
        copy = dataclasses.replace(item, versions=list(item.versions))
        copy.versions.append(ItemVersion(ordinal, item.status, item.value, note))
        copy.status = status
        items[i] = copy
        changed.append(item.id)
    return changed
