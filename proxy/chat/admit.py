"""The session a request belongs to: the conversation recognised and its
session resolved under the conversation lock (`admit`), its place in the
session's queue, a named session resolved once its turn has come
(`resolve_named`), and the plan given the session's turns (`session_turns`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from policies.types import Turn
from proxy.chat.plan import RequestContext, RequestPlan, TurnWrite
from proxy.chat_request import ChatRequest, chain_hashes, message_hash
from proxy.conversation import (
    Conversation,
    SessionTurns,
    build_conversation,
    make_turn,
    shared_prefix,
    split_system,
    stored_from_turn,
    system_turns,
    turn_from_stored,
)
from proxy.longterm import user_scope
from proxy.sessions import Resolution, Ticket, match_scope
from proxy.store.repo import SessionRow, StoredMessage
from proxy.tokens import TokenCounter

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline


@dataclass(frozen=True, slots=True)
class Admitted:
    """A request past the conversation lock (`admit`): its conversation, its
    session and its place in the session's queue."""

    conv: Conversation
    sys_turns: list[Turn]
    raw_tokens: int  # the client's messages as sent
    session: SessionRow
    resolution: Resolution | None  # None: a named session, resolved in its turn
    ticket: Ticket
    turn_write: TurnWrite | None  # the new turns' write, when it was started


async def admit(
    p: Pipeline, req: ChatRequest, ctx: RequestContext, counter: TokenCounter, split: int
) -> Admitted:
    """Recognise the conversation and resolve its session under the conversation
    lock, then queue for the session.

    Conversations with different first turns can never match each other, so the
    lock is per (scope, first turn) or per named session. The cache is read under
    it too: a request that waited must see what the previous wrote. A transparent
    match whose new turns are written keeps the lock until they are stored.
    """
    named = ctx.session_header
    # Transparent matching stays within the end user, when the request names one.
    scope = (
        ctx.tenant_id
        if named is not None
        else match_scope(ctx.tenant_id, user_scope(ctx.user_header, req.params))
    )
    first_hash = message_hash(req.messages[split])
    held = await p.conversation_locks(f"{scope}:{named or first_hash}")
    unlock: Callable[[], None] | None = held.release
    turn_write: TurnWrite | None = None
    try:
        if named is None and p.store.shared:
            for entry in p.cache.candidates(scope, first_hash):
                await p.store.sync(entry.session.id)
        conv, known = _recognise(p, counter, req.messages, ctx, scope)
        sys_turns = system_turns(counter, conv.system)
        raw_tokens = sum(t.tokens for t in sys_turns) + sum(t.tokens for t in conv.turns)
        resolution: Resolution | None = None
        if named is not None:
            session = await p.resolver.named_session(ctx.tenant_id, named, conv)
        else:
            resolution = await p.resolver.resolve(scope, conv, known)
            session = resolution.session
            if resolution.pending is not None:
                # The lock is held until the turns are stored: another request of
                # this conversation resolves against them.
                turn_write = TurnWrite(resolution.pending(), then=held.release)
                unlock = None
        ticket = p.queue.enter(session.id)
    finally:
        if unlock is not None:
            unlock()
    return Admitted(conv, sys_turns, raw_tokens, session, resolution, ticket, turn_write)


async def resolve_named(
    p: Pipeline, session: SessionRow, conv: Conversation
) -> tuple[Resolution, TurnWrite | None]:
    """A named session's resolution, once its turn in the queue has come, and
    the write of its new turns (None: nothing new to write)."""
    # Earlier requests of this session may have written since the lookup.
    cached = p.cache.get(session.id)
    if cached is not None:
        session = cached.session
    else:
        session = await p.store.get_session(session.id) or session
    prefix = None
    if cached is not None and len(cached.turns) == session.message_count:
        prefix = partial(_stored_turns, cached)
    resolution = await p.resolver.resolve_named(session, conv, prefix)
    if resolution.pending is not None:
        return resolution, TurnWrite(resolution.pending())
    return resolution, None


def _recognise(
    p: Pipeline,
    counter: TokenCounter,
    messages: list[dict[str, Any]],
    ctx: RequestContext,
    scope: str,
) -> tuple[Conversation, tuple[SessionRow, int] | None]:
    """Build the conversation, reusing a cached session's turns when it continues one.

    A named session (`X-Memory-Session`) reuses them too (hashing and counting
    a long history again costs more than the rest of the request), but which
    session it is stays the name's: equal messages make equal turns whichever
    cached session they come from.
    """
    split = split_system(messages)
    raws = messages[split:]
    if not raws:
        return build_conversation(counter, messages), None
    first = message_hash(raws[0])
    for cached in p.cache.candidates(scope, first):
        if cached.session.message_count != len(cached.raws):
            continue  # written since it was cached: let the store decide
        shared = shared_prefix(cached, raws, first, p.cache.proven(messages, cached))
        if shared:
            conv = build_conversation(counter, messages, cached, shared)
            known = None if ctx.session_header is not None else (cached.session, shared)
            return conv, known
    return build_conversation(counter, messages), None


def _stored_turns(cached: SessionTurns) -> list[StoredMessage]:
    """A cached session's turns as stored rows (only a stateful append needs them)."""
    return [
        stored_from_turn(t, h, c)
        for t, h, c in zip(cached.turns, cached.hashes, cached.chain, strict=True)
    ]


def session_turns(
    plan: RequestPlan, conv: Conversation, sys_turns: list[Turn]
) -> tuple[RequestPlan, list[str]]:
    """The plan with the session's turns (the store's prefix first, in stateful mode),
    and their content hashes."""
    resolution = plan.resolution
    assert resolution is not None
    if resolution.kind != "stateful":
        plan = replace(plan, turns=conv.turns, system=sys_turns, chain=conv.chain)
        return plan, conv.hashes
    # The client sent only the new turns; the rest comes from the store.
    prefix = [turn_from_stored(s) for s in resolution.prefix]
    base = len(prefix)
    new = [make_turn(plan.counter, t.raw, base + i) for i, t in enumerate(conv.turns)]
    turns = [*prefix, *new]
    previous = resolution.prefix[-1].chain_hash if resolution.prefix else ""
    chain = [*(s.chain_hash for s in resolution.prefix), *chain_hashes(conv.hashes, previous)]
    hashes = [*(s.content_hash for s in resolution.prefix), *conv.hashes]
    if not conv.system and resolution.session.system:
        sys_turns = system_turns(plan.counter, resolution.session.system)
    raw_tokens = sum(t.tokens for t in (*sys_turns, *turns))
    plan = replace(
        plan,
        turns=turns,
        system=sys_turns,
        chain=chain,
        raw_tokens=raw_tokens,
        context_tokens=raw_tokens,
        forwarded=[t.raw for t in (*sys_turns, *turns)],
    )
    return plan, hashes
