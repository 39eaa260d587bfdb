"""Replica coherence: which cached sessions another process changed.

With PostgreSQL several replicas share the store. Every write bumps its
session's version first in its transaction; a version that moved by more
than this process's own writes means another one wrote, and the listeners
(the pipeline's caches) drop their copies of that session.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from sqlalchemy import Update, bindparam, select, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from proxy.store import schema as t
from proxy.store.engine import StoreEngine
from proxy.store.locks import AdvisoryLocks

# Sessions whose version this process remembers; one forgotten is simply
# treated as changed elsewhere (its caches are dropped: safe, one reload).
_SEEN_SESSIONS = 20_000


class ReplicaCoherence(StoreEngine):
    """Session versions: every write counts itself, every read of a cache checks."""

    def __init__(
        self, engine: AsyncEngine, locks: AdvisoryLocks | None = None, timeout_s: float = 5.0
    ) -> None:
        super().__init__(engine, locks, timeout_s)
        self._seen: OrderedDict[str, int] = OrderedDict()
        self._stale_listeners: list[Callable[[str], None]] = []

    def on_stale(self, listener: Callable[[str], None]) -> None:
        """Call `listener(session_id)` when another process wrote to that session."""
        self._stale_listeners.append(listener)

    def _saw(self, session_id: str, version: int | None, *, expected: int | None) -> None:
        """Record `version` as seen; tell the listeners if it is not `expected`."""
        if version is None:
            self._seen.pop(session_id, None)
        else:
            self._seen[session_id] = version
            self._seen.move_to_end(session_id)
            while len(self._seen) > _SEEN_SESSIONS:
                self._seen.popitem(last=False)
        if expected is None or version != expected:
            for listener in self._stale_listeners:
                listener(session_id)

    async def sync(self, session_id: str) -> None:
        """Drop this process's copies of the session if another process wrote to it.

        Called with the session's (or its conversation's) lock held, before any
        cached turn, item or summary of it is used. A no-op on SQLite (one process).
        """
        if not self.shared:
            return
        async with self._connect() as conn:
            version = await conn.scalar(
                select(t.sessions.c.version).where(t.sessions.c.id == session_id)
            )
        seen = self._seen.get(session_id)
        if version is None or version != seen:
            self._saw(session_id, version, expected=None)

    async def _bump(self, conn: AsyncConnection, session_id: str, **values: Any) -> None:
        """Count a write to the session, first in its transaction.

        The row lock this takes orders the session's writers on PostgreSQL
        (SQLite already has one writer). A version that moved by more than our
        own write means another process wrote since we last looked.
        """
        params = {"bump_session": session_id, **{f"bump_{k}": v for k, v in values.items()}}
        if not self.shared:
            # One process: nobody else to notice (and no RETURNING before SQLite 3.35).
            await conn.execute(_bump_statement(tuple(sorted(values)), False), params)
            return
        version = await conn.scalar(_bump_statement(tuple(sorted(values)), True), params)
        if version is not None:
            seen = self._seen.get(session_id)
            self._saw(session_id, version, expected=None if seen is None else seen + 1)


@lru_cache(maxsize=64)
def _bump_statement(columns: tuple[str, ...], returning: bool) -> Update:
    """The version bump setting `columns` too, built once per set of columns: a
    statement built per write cost SQLAlchemy ~0.14 ms more to construct and key
    for its compiled cache than executing a built one with new parameters."""
    sessions = t.sessions
    bump = (
        update(sessions)
        .where(sessions.c.id == bindparam("bump_session", type_=sessions.c.id.type))
        .values(
            version=sessions.c.version + 1,
            **{c: bindparam(f"bump_{c}", type_=sessions.c[c].type) for c in columns},
        )
    )
    return bump.returning(sessions.c.version) if returning else bump
