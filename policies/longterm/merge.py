"""How what a conversation kept is merged into the user's long-term items (`merge_items`).

Per user: the same working-memory item updates its row; otherwise a
restatement confirms the row it duplicates, and a new value on the same slot
(or one the revision rules say replaces a row: `policies.longterm.matching`)
takes the row over, the old value hung under it as history. What is kept comes
from `policies.longterm.candidates`; what takes a value back, from
`policies.longterm.retire`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from policies.longterm.candidates import Pick
from policies.longterm.items import LongTermItem, LongTermVersion, copy_item
from policies.longterm.matching import target_row
from policies.types import MemoryItem


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
    rows = [copy_item(r) for r in existing]
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
        found = target_row(pick, active)
        if found is not None and taken(found[0], pick):
            if found[1]:
                continue  # a restatement of another item of this conversation
            # Another live item of this conversation holds that row: never take it over
            # (the two would swap it on every run), look elsewhere.
            found = target_row(pick, [r for r in active if not taken(r, pick)])
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
