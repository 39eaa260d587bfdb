"""Which stored conversation a request continues, and what it adds to it.

Transparent by default: each stored session keeps the chain hash of its turns;
an incoming history is matched with the longest common prefix (same tenant):
continuation, retry (nothing new), regenerate (incoming is a strict prefix:
roll back), edit (divergence: fork from the common prefix), or a new session.
With `X-Memory-Session` the session is named; a client may then send only the
new message (stateful mode) and the proxy supplies the rest from its store.

Ordering: requests of one session run one at a time, in arrival order, and a
conversation is resolved by one request at a time. In one process that is an
asyncio queue and lock; with PostgreSQL each also takes the same-named
advisory lock, so several replicas exclude each other, and the session is
synced (`Store.sync`) once held: another replica's writes drop our copies.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Literal

from policies.memory.reducer import rollback
from policies.types import MemoryItem
from proxy.conversation import Conversation
from proxy.ids import new_id
from proxy.store.repo import SessionRow, Store, StoredMessage


def match_scope(tenant_id: str, user: str | None) -> str:
    """Where transparent matching looks for a conversation: the caller's key, and
    within it the end user (`X-Memory-User`, else the body's `user`) when one is sent.

    Two end users of one key whose conversations open alike (same system prompt,
    "Hi") would otherwise share a stored prefix and be matched as one conversation.
    Sessions found this way are stored under this scope (`sessions.tenant_id`:
    the key's tenant id, then `~` and a hash of the user); named sessions
    (`X-Memory-Session`) stay the key's.
    """
    if not user:
        return tenant_id
    digest = hashlib.blake2b(user.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f"{tenant_id}~{digest}"


ResolutionKind = Literal["new", "continuation", "retry", "regenerate", "fork", "stateful", "rewind"]


@dataclass(slots=True)
class Resolution:
    session: SessionRow
    kind: ResolutionKind
    start: int  # first ordinal written by this request
    # Stored turns that precede the client's messages (stateful mode), else empty.
    prefix: list[StoredMessage] = field(default_factory=list)
    items_changed: bool = False  # memory was rolled back or copied: reload it
    # The write of the client's new turns, not started yet: the pipeline runs it
    # beside the upstream call and awaits it before the first byte of the answer.
    # None: whatever this resolution wrote is already stored.
    pending: Callable[[], Awaitable[None]] | None = None


class Ticket:
    """A place in a session's FIFO queue: requests of one session run in order."""

    def __init__(self, queue: SessionQueue, key: str, future: asyncio.Future[None]) -> None:
        self._queue, self._key, self._future = queue, key, future
        self._released = False
        self._shared = False  # holds the session's advisory lock

    async def wait(self) -> None:
        await asyncio.shield(self._future)
        store = self._queue.store
        if store is None or store.locks is None or self._released:
            return
        await store.locks.acquire(f"session:{self._key}")
        self._shared = True
        await store.sync(self._key)

    def release(self) -> None:
        if not self._released:
            self._released = True
            store = self._queue.store
            if self._shared and store is not None and store.locks is not None:
                store.locks.release(f"session:{self._key}")
            self._queue._advance(self._key)


class SessionQueue:
    """Per-session FIFO. `enter` is synchronous so it keeps the caller's order."""

    def __init__(self, store: Store | None = None) -> None:
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        self.store = store  # with PostgreSQL: the order holds across replicas too

    def enter(self, key: str) -> Ticket:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        queue = self._waiting.setdefault(key, deque())
        queue.append(future)
        if len(queue) == 1:
            future.set_result(None)
        return Ticket(self, key, future)

    def _advance(self, key: str) -> None:
        queue = self._waiting.get(key)
        if not queue:
            return
        queue.popleft()
        if queue:
            queue[0].set_result(None)
        else:
            del self._waiting[key]


class KeyedLocks:
    """asyncio locks by key, dropped when unused (bounded memory).

    With a store on PostgreSQL, each also holds the advisory lock `conversation:<key>`.
    """

    def __init__(self, store: Store | None = None) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}
        self._shared = store.locks if store is not None else None

    async def __call__(self, key: str) -> _Held:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            await lock.acquire()
        except BaseException:
            self._forget(key, lock)
            raise
        if self._shared is not None:
            try:
                await self._shared.acquire(f"conversation:{key}")
            except BaseException:
                lock.release()
                self._forget(key, lock)
                raise
        return _Held(self, key, lock)

    def _done(self, key: str, lock: asyncio.Lock) -> None:
        if self._shared is not None:
            self._shared.release(f"conversation:{key}")
        lock.release()
        self._forget(key, lock)

    def _forget(self, key: str, lock: asyncio.Lock) -> None:
        _, users = self._locks[key]
        if users <= 1:
            del self._locks[key]
        else:
            self._locks[key] = (lock, users - 1)


class _Held:
    def __init__(self, owner: KeyedLocks, key: str, lock: asyncio.Lock) -> None:
        self._owner, self._key, self._lock = owner, key, lock

    def release(self) -> None:
        self._owner._done(self._key, self._lock)


def _fork_items(items: list[MemoryItem], upto: int) -> list[MemoryItem]:
    """Copy memory derived from the shared prefix into a fork, with fresh ids."""
    kept = rollback(items, upto)
    ids = {item.id: new_id() for item in kept}
    return [
        replace(
            item,
            id=ids[item.id],
            superseded_by=ids.get(item.superseded_by or ""),
            versions=list(item.versions),
        )
        for item in kept
    ]


def _derived_from(items: list[MemoryItem], ordinal: int) -> bool:
    """Whether any item or item change came from message `ordinal` or later."""
    return any(
        item.source_ordinal >= ordinal or any(v.ordinal >= ordinal for v in item.versions)
        for item in items
    )


class SessionResolver:
    def __init__(
        self,
        store: Store,
        cached_items: Callable[[str], list[MemoryItem] | None] | None = None,
    ) -> None:
        self.store = store
        # The session's items as this process holds them, when it does (they equal
        # the stored ones: each request saves its changes before the next starts).
        self.cached_items = cached_items

    async def resolve(
        self, tenant_id: str, conv: Conversation, known: tuple[SessionRow, int] | None = None
    ) -> Resolution:
        """Transparent mode: find the session by the longest shared prefix.

        `known` is (session, shared prefix length) when the in-process cache has
        already recognised the conversation; it saves the prefix query.
        """
        if known is not None:
            session, shared = known
            return await self._continue(session, shared, conv, fork=True)
        match = await self.store.match_chain(tenant_id, conv.chain)
        if match is None:
            session = await self.store.create_session(
                tenant_id, system=conv.system or None, session_id=new_id()
            )
            await self.store.write_turns(session, 0, conv.stored(0))
            return Resolution(session, "new", 0)
        found = await self.store.get_session(match.session_id)
        assert found is not None  # the match came from its messages
        return await self._continue(found, match.length, conv, fork=True)

    async def named_session(
        self, tenant_id: str, external_id: str, conv: Conversation
    ) -> SessionRow:
        """The session the client named (created on first use); no turns written yet.

        A name that is the id of one of this key's sessions continues that session:
        a client that echoes back the `X-Memory-Session` of a response it got
        (transparent sessions answer with their id) continues the conversation.
        """
        session = await self.store.find_external_session(tenant_id, external_id)
        if session is None:
            found = await self.store.get_session(external_id)
            if found is not None and found.tenant_id.split("~")[0] == tenant_id:
                return found
        if session is None:
            session = await self.store.create_session(
                tenant_id,
                external_id=external_id,
                system=conv.system or None,
                session_id=new_id(),
            )
        return session

    async def resolve_named(
        self,
        session: SessionRow,
        conv: Conversation,
        stored_prefix: Callable[[], list[StoredMessage]] | None = None,
    ) -> Resolution:
        """Runs under the session's ticket: appends see every earlier request's turns.

        `stored_prefix` may supply the session's stored turns (from the cache);
        built only when needed, since most requests resend their history.
        """
        stored = session.message_count
        if stored == 0:
            await self.store.write_turns(session, 0, conv.stored(0), system=conv.system or None)
            return Resolution(session, "new", 0)
        match = await self.store.match_chain(session.tenant_id, conv.chain, session_id=session.id)
        shared = match.length if match else 0
        if shared == 0 and not any(t.role == "assistant" for t in conv.turns):
            # Stateful mode: the client sent only what is new.
            prefix = (
                stored_prefix()
                if stored_prefix is not None
                else (await self.store.load_messages(session.id))
            )
            previous = prefix[-1].chain_hash if prefix else ""
            turns = conv.stored(0, base=stored, previous=previous)
            write = partial(
                self.store.write_turns, session, stored, turns, system=conv.system or None
            )
            return Resolution(session, "stateful", stored, prefix=prefix, pending=write)
        return await self._continue(session, shared, conv, fork=False)

    async def _continue(
        self, session: SessionRow, shared: int, conv: Conversation, *, fork: bool
    ) -> Resolution:
        incoming, stored = len(conv.turns), session.message_count
        system = conv.system or None
        if shared == stored:
            if incoming == stored:
                return Resolution(session, "retry", incoming)
            write = partial(
                self.store.write_turns, session, stored, conv.stored(stored), system=system
            )
            return Resolution(session, "continuation", stored, pending=write)
        if shared == incoming or not fork:
            # Regenerate: the client resent an earlier state; discard what followed.
            # (Named sessions rewind to where an edited history diverges.)
            kind: ResolutionKind = "regenerate" if shared == incoming else "rewind"
            cached = self.cached_items(session.id) if self.cached_items is not None else None
            if cached is not None and not _derived_from(cached, shared):
                # The common regenerate (the same request again) discards only our
                # answer, which usually made no memory: with the items in hand that
                # is seen without reading, rolling back and rewriting them all.
                write = partial(
                    self.store.write_turns, session, shared, conv.stored(shared), system=system
                )
                return Resolution(session, kind, shared, pending=write)
            await self._rewind(session, shared, conv)
            return Resolution(session, kind, shared, items_changed=True)
        child = await self.store.create_session(
            session.tenant_id,
            parent_id=session.id,
            fork_ordinal=shared,
            system=system,
            arm=session.arm,
            session_id=new_id(),
        )
        parent_items = await self.store.load_items(session.id)
        await self.store.write_turns(
            child, 0, conv.stored(0), items=_fork_items(parent_items, shared)
        )
        return Resolution(child, "fork", shared, items_changed=True)

    async def _rewind(self, session: SessionRow, shared: int, conv: Conversation) -> None:
        """Discard the turns from `shared` on and the memory they made."""
        items = rollback(await self.store.load_items(session.id), shared)
        await self.store.write_turns(
            session, shared, conv.stored(shared), system=conv.system or None
        )
        await self.store.replace_items(session.id, items)
