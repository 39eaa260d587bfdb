"""What of a conversation's working memory is kept beyond it (`consolidation_candidates`).

The seeds' third layer (003, section 5): what a user told one conversation
("always book non-smoking rooms", a recurring address) should help the next
one. Consolidation runs off the request path, after a request's extraction,
over the session's working memory. Kept:
- the user's standing rules and preferences (directive, constraint, preference);
- resolved conflicts and final decisions: a user item that replaced an earlier
  value (its predecessors become its history);
- entities and facts the user repeated across rounds (two user turns or more);
- what the assistant concluded, only when the user confirmed it right after.
Never kept: revoked, superseded or pending items, goals and task state, tool data.
What is kept is then merged into the user's long-term items
(`policies.longterm.merge`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from policies.language.matching import Idf, content_terms, covered, weighted_terms
from policies.language.social import CONFIRM
from policies.language.values import extract_values, value_signature
from policies.longterm.items import LongTermKind
from policies.types import RULE_TYPES, ItemType, MemoryItem, Turn

FACT_TYPES: frozenset[ItemType] = frozenset({"fact", "entity"})
# Task-local: a goal or the task's state is about that conversation only.
_SKIPPED_TYPES: frozenset[ItemType] = frozenset({"goal", "state"})
_KEPT_STATUSES = frozenset({"active", "archived"})  # archived: faded, still valid
# A short yes right after the assistant said something confirms it (as the
# extractor reads a confirmation: `policies.extract.extraction._reply_only`).
_CONFIRM_CHARS, _CONFIRM_WINDOW = 60, 2
_MENTION_MIN = 0.6  # share of a fact's terms another user turn repeats


@dataclass(frozen=True, slots=True)
class Pick:
    """A working-memory item chosen for consolidation, and why."""

    item: MemoryItem
    kind: LongTermKind
    earlier: tuple[str, ...] = ()  # values it replaced in its own conversation


def _predecessors(item: MemoryItem, replaced: Mapping[str, list[MemoryItem]]) -> list[MemoryItem]:
    """Items `item` superseded, directly or through a chain, oldest first."""
    chain: list[MemoryItem] = []
    frontier, seen = [item.id], {item.id}
    while frontier:
        for other in replaced.get(frontier.pop(), ()):
            if other.id not in seen:
                seen.add(other.id)
                chain.append(other)
                frontier.append(other.id)
    return sorted(chain, key=lambda it: it.source_ordinal)


def _confirmed(item: MemoryItem, user_turns: Sequence[Turn]) -> bool:
    for turn in user_turns:
        if item.source_ordinal < turn.ordinal <= item.source_ordinal + _CONFIRM_WINDOW:
            text = turn.text.strip()
            return len(text) <= _CONFIRM_CHARS and bool(CONFIRM.match(text))
    return False


@dataclass(frozen=True, slots=True)
class _Said:
    """What one user turn mentions: its values and its words (computed once per job)."""

    ordinal: int
    sigs: frozenset[str]
    bag: Mapping[str, float]


def _repeated(item: MemoryItem, said: Sequence[_Said]) -> bool:
    """Does a user turn other than its source repeat this fact (a value or most words)?"""
    sigs = {value_signature(v) for v in extract_values(item.value) if v.kind != "number"}
    terms = content_terms(item.value)
    flat = Idf(())
    for turn in said:
        if turn.ordinal == item.source_ordinal:
            continue
        if sigs & turn.sigs:
            return True
        if terms and covered(turn.bag, terms, flat) >= _MENTION_MIN:
            return True
    return False


def consolidation_candidates(items: Sequence[MemoryItem], turns: Sequence[Turn]) -> list[Pick]:
    """The session's items worth keeping beyond it (see the module docstring)."""
    replaced: dict[str, list[MemoryItem]] = {}
    for it in items:
        if it.superseded_by:
            replaced.setdefault(it.superseded_by, []).append(it)
    user_turns = [t for t in turns if t.role == "user"]
    said: list[_Said] | None = None
    picks: list[Pick] = []
    for item in items:
        if item.status not in _KEPT_STATUSES or item.type in _SKIPPED_TYPES:
            continue
        earlier = tuple(p.value for p in _predecessors(item, replaced))
        kind: LongTermKind | None = None
        if item.source == "user":
            if item.type in RULE_TYPES:
                kind = "preference" if item.type == "preference" else "rule"
            elif item.type == "inferred":
                kind = None
            elif earlier or item.replaces:
                kind = "decision"
            elif item.type in FACT_TYPES:
                if said is None:
                    said = [
                        _Said(
                            t.ordinal,
                            frozenset(value_signature(v) for v in extract_values(t.text)),
                            weighted_terms(t.text),
                        )
                        for t in user_turns
                    ]
                kind = "entity" if _repeated(item, said) else None
        elif item.source == "assistant" and _confirmed(item, user_turns):
            kind = "confirmed"
        if kind is not None:
            picks.append(Pick(item, kind, earlier))
    return picks
