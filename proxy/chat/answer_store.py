"""The client's turns and the answer in the store, before the session's next request.

`store_answer` runs before the client gets the end of the answer, so its next
request finds it; when the store fails, the answer goes out unstored
(`memory.on_store_error: open`) or the request fails with a 503 (`closed`).
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from proxy.chat.plan import RequestPlan, clean_answer, store_unavailable
from proxy.chat_request import chain_hashes, message_hash
from proxy.conversation import make_turn, stored_from_turn
from proxy.store.faults import store_fault

if TYPE_CHECKING:
    from proxy.chat.pipeline import Pipeline

log = logging.getLogger("memproxy.pipeline")


async def turns_stored(p: Pipeline, plan: RequestPlan) -> str | None:
    """Until the client's new turns are stored (they were written beside the upstream
    call); if the store failed, degrade (open: returns why) or raise a 503 (closed).

    Either way the failed write left nothing behind (one transaction), and the
    answer is not stored after turns that are not.
    """
    try:
        await plan.turns_stored()
    except Exception as exc:
        if store_fault(exc) is not None:
            p.store.note_fault()  # connections opened while it failed are suspect too
        return _not_stored(p, plan, exc, "turns")
    return None


async def abandon(plan: RequestPlan) -> None:
    """A request that ends without an answer (the client went away): release the
    session once its turns are stored, so its next request finds them."""
    try:
        with contextlib.suppress(Exception):
            await plan.turns_stored()
    finally:
        plan.release()


async def store_answer(p: Pipeline, plan: RequestPlan, message: dict[str, Any]) -> str | None:
    """`record_answer`; if the store fails, degrade (open: returns why) or raise a 503
    (closed)."""
    try:
        await record_answer(p, plan, message)
    except Exception as exc:
        return _not_stored(p, plan, exc, "answer")
    return None


def _not_stored(p: Pipeline, plan: RequestPlan, exc: Exception, what: str) -> str:
    """A failed write of `what`: a store fault degrades (open: returns why) or
    raises a 503 (closed), the session's cached state forgotten; anything else
    is raised as it is."""
    reason = store_fault(exc)
    if reason is None:
        raise exc
    log.warning("%s of request %s not stored: %s", what, plan.ctx.request_id, reason)
    if plan.session_id:
        p.forget_cached(plan.session_id)
    if p.settings.memory.on_store_error == "closed":
        raise store_unavailable(reason, answered=True) from None
    return reason


async def record_answer(p: Pipeline, plan: RequestPlan, message: dict[str, Any]) -> None:
    """Store the assistant turn before the client can send the next request."""
    if plan.resolution is None:
        return
    session = plan.resolution.session
    ordinal = len(plan.turns)
    answer = clean_answer(message)
    turn = make_turn(plan.counter, answer, ordinal)
    content_hash = message_hash(answer)
    chain = chain_hashes([content_hash], plan.chain[-1] if plan.chain else "")[0]
    # Turns already stored past this point came from a request this one replaces
    # (a regenerate that raced it): their memory goes with them.
    replacing = session.message_count > ordinal
    await p.store.write_turns(
        session,
        ordinal,
        [stored_from_turn(turn, content_hash, chain)],
        drop_items_from=ordinal if replacing else None,
    )
    if replacing:
        p.memory.invalidate(session.id)
        p.lifecycle.rewind(session.id, ordinal)
        if p.store.shared:
            await p.store.save_layout(session.id, None)
    cached = p.cache.get(session.id)
    if cached is not None and len(cached.turns) == ordinal:
        cached.raws.append(answer)
        cached.turns.append(turn)
        cached.hashes.append(content_hash)
        cached.chain.append(chain)
    else:
        p.cache.drop(session.id)


async def unstored(p: Pipeline, plan: RequestPlan) -> str | None:
    """Why the client's new turns are not stored (None: they are)."""
    try:
        await plan.turns_stored()
    except Exception as exc:
        if plan.session_id:
            p.forget_cached(plan.session_id)
        reason = store_fault(exc)
        if reason is not None:
            p.store.note_fault()  # connections opened while it failed are suspect too
        return reason or f"turns not stored: {type(exc).__name__}"
    return None
