"""The store's row types, and how policy objects become rows and back.

Plain functions and dataclasses, so every concern of the store (sessions,
working memory, the inspector) converts the same way.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from policies.types import ItemVersion, MemoryItem, MemoryLayout, SummaryChunk, SummaryLine


@dataclass(frozen=True, slots=True)
class StoredMessage:
    ordinal: int
    role: str
    message: dict[str, Any]
    text: str
    tool_call_id: str | None
    tool_call_ids: tuple[str, ...]
    content_hash: str
    chain_hash: str
    tokens: int
    created_at: float


@dataclass(slots=True)
class SessionRow:
    id: str
    tenant_id: str
    external_id: str | None
    parent_id: str | None
    fork_ordinal: int | None
    system: list[dict[str, Any]] | None
    message_count: int
    arm: str | None
    created_at: float
    updated_at: float


@dataclass(frozen=True, slots=True)
class ChainMatch:
    session_id: str
    length: int  # number of leading turns shared with the incoming history


def without_nul(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """PostgreSQL text cannot hold NUL characters (SQLite can); drop them."""
    return [
        {
            k: v.replace("\x00", "") if isinstance(v, str) and "\x00" in v else v
            for k, v in r.items()
        }
        for r in rows
    ]


def session_from_row(row: Any) -> SessionRow:
    return SessionRow(
        id=row.id,
        tenant_id=row.tenant_id,
        external_id=row.external_id,
        parent_id=row.parent_id,
        fork_ordinal=row.fork_ordinal,
        system=json.loads(row.system_json) if row.system_json else None,
        message_count=row.message_count,
        arm=row.arm,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def message_from_row(row: Any) -> StoredMessage:
    return StoredMessage(
        ordinal=row.ordinal,
        role=row.role,
        message=json.loads(row.message_json),
        text=row.text,
        tool_call_id=row.tool_call_id,
        tool_call_ids=tuple(json.loads(row.tool_call_ids)) if row.tool_call_ids else (),
        content_hash=row.content_hash,
        chain_hash=row.chain_hash,
        tokens=row.tokens,
        created_at=row.created_at,
    )


def item_to_row(session_id: str, item: MemoryItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "session_id": session_id,
        "type": item.type,
        "slot": item.slot,
        "value": item.value,
        "source": item.source,
        "source_ordinal": item.source_ordinal,
        "importance": item.importance,
        "status": item.status,
        "superseded_by": item.superseded_by,
        "replaces": item.replaces,
        "pinned": int(item.pinned),
        "exposure": item.exposure,
        "last_used_ordinal": item.last_used_ordinal,
        "versions_json": json.dumps(
            [[v.ordinal, v.status, v.value, v.note] for v in item.versions], ensure_ascii=False
        ),
        "updated_at": time.time(),
    }


def item_from_row(row: Any) -> MemoryItem:
    return MemoryItem(
        id=row.id,
        type=row.type,
        slot=row.slot,
        value=row.value,
        source=row.source,
        source_ordinal=row.source_ordinal,
        importance=row.importance,
        status=row.status,
        superseded_by=row.superseded_by,
        replaces=row.replaces,
        pinned=bool(row.pinned),
        exposure=row.exposure,
        last_used_ordinal=row.last_used_ordinal,
        versions=[ItemVersion(o, s, v, n) for o, s, v, n in json.loads(row.versions_json)],
    )


def layout_to_json(layout: MemoryLayout) -> str:
    return json.dumps(
        {
            "stable_ids": list(layout.stable_ids),
            "anchor_count": layout.anchor_count,
            "known_ids": sorted(layout.known_ids),
            "tiers": dict(layout.tiers),
            "entity_line": layout.entity_line,
            "ordinal": layout.ordinal,
            "short_ids": sorted(layout.short_ids),
        },
        ensure_ascii=False,
    )


def layout_from_json(text: str) -> MemoryLayout:
    data = json.loads(text)
    return MemoryLayout(
        stable_ids=tuple(data["stable_ids"]),
        anchor_count=int(data["anchor_count"]),
        known_ids=frozenset(data["known_ids"]),
        tiers=dict(data["tiers"]),
        entity_line=str(data["entity_line"]),
        ordinal=int(data["ordinal"]),
        short_ids=frozenset(data.get("short_ids", ())),
    )


def chunk_to_row(
    session_id: str, chunk: SummaryChunk, text: str, tokens: int, now: float
) -> dict[str, Any]:
    lines = [
        [ln.ordinal, ln.role, ln.date, ln.score, int(ln.protected), list(ln.sentences)]
        for ln in chunk.lines
    ]
    return {
        "session_id": session_id,
        "upto_ordinal": chunk.upto,
        "text": text,
        "tokens": tokens,
        "created_at": now,
        "start_ordinal": chunk.start,
        "lines_json": json.dumps(lines, ensure_ascii=False),
        "method": chunk.method,
    }


def chunk_from_row(row: Any) -> SummaryChunk:
    lines = tuple(
        SummaryLine(
            ordinal=int(o),
            role=str(role),
            date=str(date),
            sentences=tuple(sentences),
            score=float(score),
            protected=bool(prot),
        )
        for o, role, date, score, prot, sentences in json.loads(row.lines_json)
    )
    return SummaryChunk(row.start_ordinal, row.upto_ordinal, lines, row.method)
