"""A long-term item: one thing a user told an earlier conversation, its earlier
values as history, and the conversations that stated it."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from policies.types import ItemType

LongTermKind = Literal["rule", "preference", "decision", "entity", "confirmed"]
LongTermStatus = Literal["active", "revoked"]


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


def copy_item(row: LongTermItem) -> LongTermItem:
    """A copy whose history and stating conversations can change without touching `row`."""
    return dataclasses.replace(
        row, history=list(row.history), value_sessions=list(row.value_sessions)
    )
