"""Long-term memory across conversations: what is kept, and how it is merged.

The seeds' third layer (003, section 5): what a user told one conversation
("always book non-smoking rooms", a recurring address) should help the next
one. Consolidation runs off the request path, after a request's extraction,
over the session's working memory; these pure functions decide what it does.

Kept (`consolidation_candidates`):
- the user's standing rules and preferences (directive, constraint, preference);
- resolved conflicts and final decisions: a user item that replaced an earlier
  value (its predecessors become its history);
- entities and facts the user repeated across rounds (two user turns or more);
- what the assistant concluded, only when the user confirmed it right after.
Never kept: revoked, superseded or pending items, goals and task state, tool data.

Merged (`merge_items`) per user: the same working-memory item updates its row;
otherwise a restatement confirms the row it duplicates, and a new value on the
same slot (or one the revision rules say replaces a row) takes the row over,
the old value hung under it as history. Revocations retire rows
(`retire_revoked`): a revoked item that was consolidated, or a user turn that
revokes a long-term rule directly ("stop booking non-smoking rooms").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from policies.extract.linking import link_statements
from policies.extract.statements import read_statements
from policies.language.matching import Idf, content_terms, covered, key_terms, weighted_terms
from policies.language.social import CONFIRM
from policies.language.text import normalize
from policies.language.values import extract_values, value_signature
from policies.memory.slots import NAMED_SLOTS
from policies.types import (
    RULE_TYPES,
    Confirm,
    Conflict,
    ItemType,
    MemoryItem,
    Revoke,
    Supersede,
    Turn,
)

LongTermKind = Literal["rule", "preference", "decision", "entity", "confirmed"]
LongTermStatus = Literal["active", "revoked"]

_FACT_TYPES: frozenset[ItemType] = frozenset({"fact", "entity"})
# What a user asks for: a rule, or (in the conversation at hand) the request itself.
_RULE_LIKE: frozenset[ItemType] = RULE_TYPES | {"goal"}
# Task-local: a goal or the task's state is about that conversation only.
_SKIPPED_TYPES: frozenset[ItemType] = frozenset({"goal", "state"})
_KEPT_STATUSES = frozenset({"active", "archived"})  # archived: faded, still valid
# A short yes right after the assistant said something confirms it (as the
# extractor reads a confirmation: `policies.extract.extraction._reply_only`).
_CONFIRM_CHARS, _CONFIRM_WINDOW = 60, 2
_MENTION_MIN = 0.6  # share of a fact's terms another user turn repeats
DUPLICATE_MIN = 0.8


class LongTermParams(BaseModel):
    """Backfill of long-term items into a new conversation (`memory.long_term`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # At most this many items are inserted per request, best first.
    max_items: int = Field(default=3, ge=0, le=20)
    # Relevance an item needs: the IDF-weighted share of its terms that the
    # current input (or, at 0.75 weight, this conversation's memory and
    # system prompt) mentions. One shared key noun of a 3-term rule is ~0.33.
    min_score: float = Field(default=0.25, ge=0, le=1)
    # Share of the history budget (budget minus system prompt and current input);
    # the seeds give retrieval ~1/8 of the window. One line is ~25 tokens.
    share: float = Field(default=0.15, ge=0, le=0.5)
    # Rules on these slots (how to answer, not what about) apply to every
    # conversation: they clear the threshold whatever the input.
    global_slots: tuple[str, ...] = ("language", "format")
    # Share of a long-term rule's subject terms that a rule or request of this
    # conversation must mention to be shown as overriding it ("usually X; this
    # conversation: Y"): two of three, not one shared verb.
    conflict_min: float = Field(default=0.5, gt=0, le=1)
    # Users with more items than this are pre-filtered by BM25 before reranking.
    prefilter: int = Field(default=200, ge=10)
    # With an embedding model: the cosine similarity (input vs item) from which an
    # item is related by meaning; it then clears `min_score`, and ranks higher the
    # closer it is. Each model has its own scale: OpenAI's text-embedding-3 models
    # put unrelated sentences around 0.1-0.2; the stub's n-gram vectors around 0.
    embedding_min_similarity: float = Field(default=0.35, gt=0, lt=1)


@dataclass(slots=True)
class LongTermVersion:
    """An earlier value of a long-term item (newest value wins; the old stay as history)."""

    value: str
    session_id: str
    at: float  # when that value was last confirmed
    note: str = ""


@dataclass(slots=True)
class LongTermItem:
    """One thing a user told an earlier conversation, kept for the next ones."""

    id: str
    kind: LongTermKind
    type: ItemType
    slot: str
    value: str  # verbatim user text, never paraphrased
    source_session_id: str  # the conversation that last stated or confirmed it
    source_item_id: str  # its working-memory item there
    first_session_id: str
    first_seen: float
    last_confirmed: float
    status: LongTermStatus = "active"
    confirmations: int = 1  # conversations that stated it
    history: list[LongTermVersion] = field(default_factory=list)
    # Conversations that stated the current value (empty: an operator wrote it).
    # Deleting a conversation takes back what it alone said (`forget_session`).
    value_sessions: list[str] = field(default_factory=list)
    # The value's vector and the model that made it (None: lexical retrieval only).
    embedding: Sequence[float] | None = None
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True)
class Pick:
    """A working-memory item chosen for consolidation, and why."""

    item: MemoryItem
    kind: LongTermKind
    earlier: tuple[str, ...] = ()  # values it replaced in its own conversation


# --- what is kept ---------------------------------------------------------------------


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
            elif item.type in _FACT_TYPES:
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


# --- how it is merged -----------------------------------------------------------------


def as_memory_item(row: LongTermItem) -> MemoryItem:
    """A long-term row seen by the revision rules as if it were a live user item."""
    return MemoryItem(row.id, row.type, row.slot, row.value, "user", 0)


def semantic_slot(slot: str) -> bool:
    """A slot that names a subject ("diet", "directive:ship-standard") or an entity
    ("id:HK-55817"), not just a kind of value ("date", "money:元"), which would merge
    unrelated things."""
    head = slot.split(":", 1)[0]
    return slot in NAMED_SLOTS or (":" in slot and head in RULE_TYPES | _FACT_TYPES | {"id"})


def same_family(a: ItemType, b: ItemType) -> bool:
    """Rules with rules, facts with facts: "I'm learning Japanese" shares the slot
    "language" with "reply in French" without replacing it."""
    return (a in _RULE_LIKE) == (b in _RULE_LIKE)


def _statement_ops(
    text: str, live: Sequence[MemoryItem], new_id: Callable[[], str]
) -> list[object]:
    statements = read_statements(text, key_terms(text), opening=True)
    if not statements or not live:
        return []
    return list(link_statements(statements, live, text, 1, new_id))


def _target(pick: Pick, rows: Sequence[LongTermItem]) -> tuple[LongTermItem, bool] | None:
    """The active row `pick` restates (True) or revises (False), if any."""
    value = normalize(pick.item.value)
    for row in rows:
        if normalize(row.value) == value:
            return row, True
    # Only rows sharing a word can be its target: the revision rules see just those.
    terms = content_terms(pick.item.value).keys()
    live = [as_memory_item(r) for r in rows if not terms.isdisjoint(content_terms(r.value))]
    by_id = {r.id: r for r in rows}
    for op in _statement_ops(pick.item.value, live, lambda: "new"):
        if isinstance(op, Confirm) and op.item_id in by_id:
            return by_id[op.item_id], True
        if isinstance(op, Supersede | Conflict) and op.old_id in by_id:
            return by_id[op.old_id], False
    if semantic_slot(pick.item.slot):
        for row in rows:
            if row.slot == pick.item.slot and same_family(row.type, pick.item.type):
                # The same ID is the same entity: mentioned again, not changed.
                return row, pick.item.slot.startswith("id:")
    return None


def _copy(row: LongTermItem) -> LongTermItem:
    return dataclasses.replace(
        row, history=list(row.history), value_sessions=list(row.value_sessions)
    )


def _take_over(row: LongTermItem, pick: Pick, note: str) -> None:
    row.history.append(LongTermVersion(row.value, row.source_session_id, row.last_confirmed, note))
    row.value = pick.item.value
    row.type, row.slot, row.kind = pick.item.type, pick.item.slot, pick.kind
    row.value_sessions = []  # `_restate` (always next) names the conversation
    row.embedding = row.embedding_model = None  # the vector was of the old value


def _restate(row: LongTermItem, pick: Pick, session_id: str, now: float) -> None:
    if row.source_session_id != session_id:
        row.confirmations += 1
    row.source_session_id, row.source_item_id = session_id, pick.item.id
    row.last_confirmed = now
    if session_id not in row.value_sessions:
        row.value_sessions.append(session_id)


def merge_items(
    existing: Sequence[LongTermItem],
    picks: Sequence[Pick],
    *,
    session_id: str,
    items: Sequence[MemoryItem],
    now: float,
    new_id: Callable[[], str],
) -> list[LongTermItem]:
    """Rows to write after consolidating `picks` of session `session_id` (changed or new).

    `existing` is left untouched; `items` (the session's working memory, all
    statuses) lets a row follow its item when the user revised it later.
    """
    rows = [_copy(r) for r in existing]
    changed: dict[str, LongTermItem] = {}
    successor = {it.id: it.superseded_by for it in items if it.superseded_by}

    def latest(item_id: str) -> str:
        seen = set()
        while item_id in successor and item_id not in seen:
            seen.add(item_id)
            item_id = successor[item_id] or item_id
        return item_id

    picked = {p.item.id for p in picks}

    def taken(row: LongTermItem, pick: Pick) -> bool:
        owner = latest(row.source_item_id)
        return row.source_session_id == session_id and owner in picked and owner != pick.item.id

    for pick in sorted(picks, key=lambda p: p.item.source_ordinal):
        active = [r for r in rows if r.status == "active"]
        own = next(
            (
                r
                for r in active
                if r.source_session_id == session_id and latest(r.source_item_id) == pick.item.id
            ),
            None,
        )
        if own is not None:
            if own.source_item_id != pick.item.id:
                _follow_revision(own, pick, session_id, now)
                changed[own.id] = own
            continue
        found = _target(pick, active)
        if found is not None and taken(found[0], pick):
            if found[1]:
                continue  # a restatement of another item of this conversation
            # Another live item of this conversation holds that row: never take it over
            # (the two would swap it on every run), look elsewhere.
            found = _target(pick, [r for r in active if not taken(r, pick)])
        if found is not None:
            row, same = found
            if same and row.source_session_id == session_id:
                continue  # said again in the conversation that already gave it: nothing new
            if not same:
                _take_over(row, pick, f"replaced in conversation {session_id}")
            _restate(row, pick, session_id, now)
            changed[row.id] = row
            continue
        row = _new_row(pick, session_id, now, new_id())
        rows.append(row)
        changed[row.id] = row
    return list(changed.values())


def _follow_revision(own: LongTermItem, pick: Pick, session_id: str, now: float) -> None:
    """A row whose item was revised since (a newer item of the same conversation
    replaced it) follows the newer item. The same item with another wording is a
    restatement kept as first said, or an operator's edit: only a new value
    takes the row over."""
    if own.value != pick.item.value:
        _take_over(own, pick, "revised in the same conversation")
        own.value_sessions = [session_id]
    own.source_item_id = pick.item.id
    own.last_confirmed = now


def _new_row(pick: Pick, session_id: str, now: float, row_id: str) -> LongTermItem:
    """A row for a pick no row holds yet; its earlier values in the same
    conversation are its history."""
    return LongTermItem(
        id=row_id,
        kind=pick.kind,
        type=pick.item.type,
        slot=pick.item.slot,
        value=pick.item.value,
        source_session_id=session_id,
        source_item_id=pick.item.id,
        first_session_id=session_id,
        first_seen=now,
        last_confirmed=now,
        history=[
            LongTermVersion(v, session_id, now, "earlier in the same conversation")
            for v in pick.earlier
        ],
        value_sessions=[session_id],
    )


def retire_revoked(
    existing: Sequence[LongTermItem],
    *,
    session_id: str,
    items: Sequence[MemoryItem],
    new_user_turns: Sequence[Turn],
    since: int,
    now: float,
) -> list[LongTermItem]:
    """Rows a revocation retires: their own item was revoked in this conversation (or
    rolled back with its turn), or a new user turn revokes them directly. Items revoked
    by this request's turns take part as decoys, so a revocation meant for them does
    not retire a similar long-term rule."""
    rows = [_copy(r) for r in existing]
    active = {r.id: r for r in rows if r.status == "active"}
    revoked_here = {it.id: it for it in items if it.status == "revoked"}
    present = {it.id for it in items}
    retired: dict[str, str] = {}
    for row in active.values():
        if row.source_session_id != session_id:
            continue
        if row.source_item_id in revoked_here:
            retired[row.id] = "revoked in its conversation"
        elif row.source_item_id not in present and row.confirmations == 1:
            # A rewind discarded the turn it came from: its memory goes with it (unless
            # another conversation said it too).
            retired[row.id] = "its turn was discarded in its conversation"
    decoys = [
        dataclasses.replace(it, status="active")
        for it in revoked_here.values()
        if it.versions and it.versions[-1].ordinal >= since
    ]
    live = [as_memory_item(r) for r in active.values() if r.id not in retired]
    for turn in new_user_turns:
        if not live:
            break
        statements = [
            s for s in read_statements(turn.text, key_terms(turn.text), False) if s.revoke
        ]
        if not statements:
            continue
        ops = link_statements(statements, [*live, *decoys], turn.text, turn.ordinal, lambda: "new")
        for op in ops:
            if isinstance(op, Revoke) and op.old_id in active:
                retired[op.old_id] = f"revoked in conversation {session_id}: {turn.text[:120]}"
        live = [it for it in live if it.id not in retired]
    out = []
    for row_id, note in retired.items():
        row = active[row_id]
        row.history.append(LongTermVersion(row.value, row.source_session_id, now, note))
        row.status = "revoked"
        out.append(row)
    return out


def forget_session(
    rows: Sequence[LongTermItem], session_id: str
) -> tuple[list[LongTermItem], list[str]]:
    """What deleting conversation `session_id` takes back: (rows changed, row ids deleted).

    A value only that conversation stated goes: the row falls back to its latest
    earlier value from another conversation, or is deleted when there is none.
    A value other conversations stated too stays, without this one among its
    sources; earlier values it gave leave the history. A row an operator wrote
    (no stating conversation) keeps its value.
    """
    changed: list[LongTermItem] = []
    deleted: list[str] = []
    for original in rows:
        row = _copy(original)
        sessions = {row.first_session_id, row.source_session_id, *row.value_sessions}
        sessions |= {v.session_id for v in row.history}
        if session_id not in sessions:
            continue
        row.history = [v for v in row.history if v.session_id != session_id]
        if session_id in row.value_sessions:
            row.value_sessions.remove(session_id)
            row.confirmations = max(1, row.confirmations - 1)
            if not row.value_sessions:
                if not row.history:
                    deleted.append(row.id)
                    continue
                earlier = row.history.pop()
                row.value, row.last_confirmed = earlier.value, earlier.at
                row.value_sessions = [earlier.session_id]
                row.embedding = row.embedding_model = None
        stated = row.value_sessions or [v.session_id for v in row.history]
        if row.source_session_id == session_id:
            # Its working-memory item is gone with the conversation: no item to follow.
            row.source_session_id = stated[-1] if stated else ""
            row.source_item_id = ""
        if row.first_session_id == session_id:
            row.first_session_id = ([v.session_id for v in row.history] or stated or [""])[0]
        changed.append(row)
    return changed, deleted
