"""What takes a long-term value back: a revocation (`retire_revoked`), or deleting
the conversation that stated it (`forget_session`).

A revoked item that was consolidated retires its row, and so does a user turn
that revokes a long-term rule directly ("stop booking non-smoking rooms"),
read by the linking chain (`link_statements`) against the user's rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from policies.extract.linking import link_statements
from policies.extract.statements import read_statements
from policies.language.matching import key_terms
from policies.longterm.items import LongTermItem, LongTermVersion, copy_item
from policies.longterm.matching import as_memory_item
from policies.types import MemoryItem, Revoke, Turn


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
    rows = [copy_item(r) for r in existing]
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
        row = copy_item(original)
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
