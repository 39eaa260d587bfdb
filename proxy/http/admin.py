"""Admin API under `/memory/…`: inspect sessions and request records, correct memory.

Every route needs `Authorization: Bearer <server.admin_key>`. The routes are
thin: parse, call the store, return JSON. Changes to a session (item edits,
deletion) wait for the session's turn in the pipeline's per-session queue, so
they never interleave with a request of that session that is still extracting
memory or writing its record, and the next request sees them.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field

from policies.longterm.items import LongTermItem, LongTermVersion
from policies.types import ItemVersion, MemoryItem
from proxy.errors import ProxyError
from proxy.http.services import Services
from proxy.store.repo import SessionRow

PREVIEW_CHARS = 160
# How long a read of a request record waits for one this process is still writing.
RECORD_WAIT_S = 2.0


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def require_admin(request: Request) -> None:
    _services(request).auth.admin(request.headers.get("authorization"))


router = APIRouter(prefix="/memory", dependencies=[Depends(require_admin)])


class ItemPatch(BaseModel):
    """What an operator may change on a memory item."""

    model_config = ConfigDict(extra="forbid")

    pinned: bool | None = None
    value: str | None = Field(default=None, min_length=1, max_length=4000)
    status: Literal["revoked", "active"] | None = None


@asynccontextmanager
async def _session_turn(services: Services, session_id: str) -> AsyncIterator[None]:
    """Hold the session's place in the request queue (requests run in order)."""
    ticket = services.pipeline.queue.enter(session_id)
    try:
        await ticket.wait()
        # The request ahead of us submits its record right after releasing the
        # session; wait until it is written so nothing lands after our change.
        await services.request_log.flush()
        yield
    finally:
        ticket.release()


def _forget(services: Services, session_id: str) -> None:
    """Drop the pipeline's in-process copies of a session so the next request reads the store.

    The conversation cache would otherwise keep resolving requests to an erased
    session, and the lifecycle cache would keep showing an edited item's old text.
    """
    services.pipeline.forget_cached(session_id)


async def _session_or_404(services: Services, session_id: str) -> SessionRow:
    session = await services.store.get_session(session_id)
    if session is None:
        raise ProxyError(404, f"no session {session_id!r}", code="session_not_found")
    return session


async def _session_ref(services: Services, ref: str) -> str:
    """A session's id from its id or from the name a client gave it (`X-Memory-Session`).

    A name used under several API keys names several sessions: 409, with their ids.
    An unknown reference is returned as is (the route's own lookup answers 404).
    """
    if await services.store.get_session(ref) is not None:
        return ref
    named = await services.store.sessions_named(ref)
    if len(named) > 1:
        ids = ", ".join(s.id for s in named)
        raise ProxyError(
            409,
            f"{len(named)} sessions are named {ref!r} (one per API key): use an id ({ids})",
            code="ambiguous_session_name",
        )
    return named[0].id if named else ref


def _preview(record: dict[str, Any]) -> str:
    """The last user message a request forwarded, shortened: what was asked."""
    forwarded = record.get("forwarded")
    if not isinstance(forwarded, list):
        return ""
    for message in reversed(forwarded):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            return _shorten(text)
    return ""


def _shorten(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def _request_summary(row: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in row.items() if k != "record_json"}
    out["preview"] = _preview(json.loads(row["record_json"]))
    return out


# --- sessions -----------------------------------------------------------------------


@router.get("/sessions")
async def list_sessions(
    request: Request, limit: int = Query(default=100, ge=1, le=1000)
) -> dict[str, Any]:
    store = _services(request).store
    sessions = await store.list_sessions(None, limit=limit)
    openings = await store.session_openings([s.id for s in sessions])
    data = [
        {**dataclasses.asdict(s), "opening": _shorten(openings.get(s.id, ""))} for s in sessions
    ]
    return {"object": "list", "data": data}


@router.get("/sessions/{session_id}")
async def get_session(request: Request, session_id: str) -> dict[str, Any]:
    store = _services(request).store
    session_id = await _session_ref(_services(request), session_id)
    session = await _session_or_404(_services(request), session_id)
    items = await store.load_items(session_id)
    turns = await store.load_messages(session_id)
    return {
        "session": dataclasses.asdict(session),
        "items": [dataclasses.asdict(i) for i in items],
        "summary": await store.load_summary(session_id),
        "turns": [dataclasses.asdict(m) for m in turns],
        "forks": [dataclasses.asdict(s) for s in await store.child_sessions(session_id)],
    }


@router.patch("/sessions/{session_id}/items/{item_id}")
async def patch_item(
    request: Request, session_id: str, item_id: str, patch: ItemPatch
) -> dict[str, Any]:
    if patch.pinned is None and patch.value is None and patch.status is None:
        raise ProxyError(400, "nothing to change: send pinned, value or status", code="empty_patch")
    services = _services(request)
    session_id = await _session_ref(services, session_id)
    await _session_or_404(services, session_id)
    async with _session_turn(services, session_id):
        # Re-read under the ticket: the session may have grown while we waited.
        session = await _session_or_404(services, session_id)
        # Exposure counters live in the cache until the next write: save them first,
        # so the row we rewrite (and the cache we drop) loses nothing.
        await services.pipeline.memory.flush(session_id)
        item = next(
            (i for i in await services.store.load_items(session_id) if i.id == item_id), None
        )
        if item is None:
            raise ProxyError(404, f"no item {item_id!r} in this session", code="item_not_found")
        _apply_patch(item, patch, session.message_count)
        await services.store.update_item(session_id, item)
        services.pipeline.memory.invalidate(session_id)
    return dataclasses.asdict(item)


def _apply_patch(item: MemoryItem, patch: ItemPatch, ordinal: int) -> None:
    """Change `item` in place, recording each change as a version (history convention:
    a version holds the state *before* the change, at the ordinal it took effect)."""

    def record(note: str) -> None:
        item.versions.append(ItemVersion(ordinal, item.status, item.value, note))

    if patch.value is not None and patch.value != item.value:
        record("edited by operator")
        item.value = patch.value
    if patch.status is not None and patch.status != item.status:
        record("revoked by operator" if patch.status == "revoked" else "restored by operator")
        item.status = patch.status
        if patch.status == "active":
            item.superseded_by = None
    if patch.pinned is not None and patch.pinned != item.pinned:
        record("pinned by operator" if patch.pinned else "unpinned by operator")
        item.pinned = patch.pinned


@router.delete("/sessions/{session_id}")
async def delete_session(request: Request, session_id: str) -> dict[str, Any]:
    services = _services(request)
    session_id = await _session_ref(services, session_id)
    await _session_or_404(services, session_id)
    longterm = services.pipeline.longterm
    async with _session_turn(services, session_id), longterm.operator_change():
        # What this conversation alone told the user's long-term memory goes with it
        # (the store does that in the same transaction); its queued jobs are skipped.
        longterm.forget_session(session_id)
        deleted = await services.store.delete_session(session_id)
        _forget(services, session_id)
    if not deleted:
        raise ProxyError(404, f"no session {session_id!r}", code="session_not_found")
    return {"id": session_id, "object": "session.deleted", "deleted": True}


# --- long-term memory (a user's items across conversations) -----------------------------


class LongTermPatch(BaseModel):
    """What an operator may change on a long-term item (each change is kept as history)."""

    model_config = ConfigDict(extra="forbid")

    value: str | None = Field(default=None, min_length=1, max_length=4000)
    status: Literal["revoked", "active"] | None = None


def _long_term_json(tenant_id: str, item: LongTermItem) -> dict[str, Any]:
    data = {"tenant_id": tenant_id, **dataclasses.asdict(item)}
    # The vector itself is of no use to a reader: say whether there is one, and whose.
    data["embedding"] = item.embedding is not None
    return data


@router.get("/users/{user}/items")
async def list_long_term(request: Request, user: str, tenant: str | None = None) -> dict[str, Any]:
    """A user's long-term items (all statuses, with history), in one tenant or all."""
    store = _services(request).store
    tenants = [tenant] if tenant is not None else await store.long_term_tenants(user)
    data = [
        _long_term_json(t, item) for t in tenants for item in await store.load_long_term(t, user)
    ]
    return {"object": "list", "data": data}


async def _long_term_tenant_or_404(services: Services, user: str, item_id: str) -> str:
    tenant = await services.store.long_term_tenant(user, item_id)
    if tenant is None:
        raise ProxyError(404, f"no long-term item {item_id!r} of this user", code="item_not_found")
    return tenant


@router.patch("/users/{user}/items/{item_id}")
async def patch_long_term(
    request: Request, user: str, item_id: str, patch: LongTermPatch
) -> dict[str, Any]:
    if patch.value is None and patch.status is None:
        raise ProxyError(400, "nothing to change: send value or status", code="empty_patch")
    services = _services(request)
    tenant = await _long_term_tenant_or_404(services, user, item_id)
    async with services.pipeline.longterm.operator_change():
        items = await services.store.load_long_term(tenant, user)
        item = next((i for i in items if i.id == item_id), None)
        if item is None:
            raise ProxyError(404, f"no long-term item {item_id!r}", code="item_not_found")
        now = time.time()

        def record(note: str) -> None:
            item.history.append(LongTermVersion(item.value, item.source_session_id, now, note))

        if patch.value is not None and patch.value != item.value:
            record("edited by operator")
            item.value = patch.value
            item.value_sessions = []  # no conversation stated this value
            item.embedding = item.embedding_model = None  # re-embedded by the next job
        if patch.status is not None and patch.status != item.status:
            record("revoked by operator" if patch.status == "revoked" else "restored by operator")
            item.status = patch.status
        await services.store.save_long_term(tenant, user, [item])
    return _long_term_json(tenant, item)


@router.delete("/users/{user}/items/{item_id}")
async def delete_long_term_item(request: Request, user: str, item_id: str) -> dict[str, Any]:
    services = _services(request)
    tenant = await _long_term_tenant_or_404(services, user, item_id)
    async with services.pipeline.longterm.operator_change():
        await services.store.delete_long_term(user, tenant_id=tenant, item_id=item_id)
    return {"id": item_id, "object": "long_term_item.deleted", "deleted": True}


@router.delete("/users/{user}")
async def erase_user(request: Request, user: str, tenant: str | None = None) -> dict[str, Any]:
    """Erase all of a user's long-term items (in one tenant, or in all), queued work included."""
    deleted = await _services(request).pipeline.longterm.erase(user, tenant)
    return {"id": user, "object": "user.erased", "deleted": deleted}


# --- request records ------------------------------------------------------------------


@router.get("/requests")
async def list_requests(
    request: Request,
    session: str | None = None,
    limit: int = Query(default=20, ge=1, le=500),
    cursor: str | None = None,
) -> dict[str, Any]:
    if session is not None:
        session = await _session_ref(_services(request), session)
    rows = await _services(request).store.list_requests(
        session_id=session, limit=limit, before=cursor
    )
    # Ids are ULIDs (time-ordered): the next page is everything older than the last id.
    next_cursor = rows[-1]["id"] if len(rows) == limit else None
    return {
        "object": "list",
        "data": [_request_summary(r) for r in rows],
        "next_cursor": next_cursor,
    }


@router.get("/requests/{request_id}")
async def get_request(request: Request, request_id: str) -> dict[str, Any]:
    services = _services(request)
    row = await services.store.get_request(request_id)
    if row is None:
        # Answered, but its record is still being written (off the response path).
        await services.request_log.wait_for(request_id, RECORD_WAIT_S)
        row = await services.store.get_request(request_id)
    if row is None:
        raise ProxyError(404, f"no request record {request_id!r}", code="request_not_found")
    out = {k: v for k, v in row.items() if k != "record_json"}
    out["record"] = json.loads(row["record_json"])
    return out


# --- A/B ---------------------------------------------------------------------------------


@router.get("/ab")
async def ab_report(request: Request) -> dict[str, Any]:
    return {"object": "list", "data": await _services(request).store.ab_stats()}
