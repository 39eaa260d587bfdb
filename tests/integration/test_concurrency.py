"""Concurrent sessions: no lost or duplicated turns, no leakage between sessions.

Scale with MEMPROXY_TEST_SESSIONS / MEMPROXY_TEST_ROUNDS (defaults: 50 × 40).
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

SESSIONS = int(os.environ.get("MEMPROXY_TEST_SESSIONS", "50"))
ROUNDS = int(os.environ.get("MEMPROXY_TEST_ROUNDS", "40"))
CANARY = re.compile(r"CANARY-(\d+)-\d+")


async def _run_session(
    proxy: Any, n: int, sent: dict[str, int]
) -> tuple[str, list[dict[str, Any]]]:
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a test assistant."},
    ]
    session = ""
    for r in range(ROUNDS):
        canary = f"CANARY-{n}-{r}"
        history.append(
            {
                "role": "user",
                "content": f"Round {r}: remember the code {canary}; budget is {100 + r} euros.",
            }
        )
        resp = await proxy.chat(history, headers={"X-Memory-Budget": "300"})
        assert resp.status_code == 200, resp.text
        sent[resp.headers["X-Memory-Request-Id"]] = n
        session = session or resp.headers["X-Memory-Session"]
        assert resp.headers["X-Memory-Session"] == session
        history.append(
            {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]}
        )
    return session, history


async def test_concurrent_sessions_lose_nothing_and_never_leak(
    proxy: Any, stub_upstream: Any
) -> None:
    sent: dict[str, int] = {}
    results = await asyncio.gather(*[_run_session(proxy, n, sent) for n in range(SESSIONS)])
    await proxy.settle()
    # Every forwarded context holds only its own session's canaries.
    for request in stub_upstream.received:
        owners = {
            int(m.group(1))
            for msg in request.body["messages"]
            for m in CANARY.finditer(str(msg.get("content")))
        }
        assert len(owners) <= 1, f"context mixes sessions {owners}"
    # Every session stored exactly its turns, in order, once.
    sessions = {session for session, _ in results}
    assert len(sessions) == SESSIONS
    for session, history in results:
        stored = await proxy.services.store.load_messages(session)
        assert [m.message.get("content") for m in stored] == [m["content"] for m in history[1:]]
        items = await proxy.services.store.load_items(session)
        owners = {int(m.group(1)) for i in items for m in CANARY.finditer(i.value)}
        assert len(owners) <= 1


async def test_burst_on_one_transparent_conversation(proxy: Any) -> None:
    """Parallel identical requests: one session, each turn stored once."""
    base = [{"role": "system", "content": "s"}, {"role": "user", "content": "hello burst"}]
    first = await proxy.chat(base)
    session = first.headers["X-Memory-Session"]
    history = [*base, first.json()["choices"][0]["message"]]
    history = [*history[:-1], {"role": "assistant", "content": history[-1]["content"]}]
    follow = [*history, {"role": "user", "content": "again"}]
    responses = await asyncio.gather(*[proxy.chat(follow) for _ in range(8)])
    assert all(r.status_code == 200 for r in responses)
    assert {r.headers["X-Memory-Session"] for r in responses} == {session}
    await proxy.settle()
    stored = await proxy.services.store.load_messages(session)
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]


async def test_burst_of_distinct_messages_on_one_named_session(
    proxy: Any, stub_upstream: Any
) -> None:
    """Parallel stateful requests on one `X-Memory-Session`, each with its own message.

    They are served one after another: every message is stored once, directly
    followed by its own answer, and each request's context already holds the
    exchanges served before it (none lost, none doubled, none interleaved).
    """
    burst = 12
    headers = {"X-Memory-Session": "shared-burst"}
    texts = [f"note {n}: the locker code is {1000 + n}" for n in range(burst)]
    responses = await asyncio.gather(
        *[proxy.chat([{"role": "user", "content": t}], headers=headers) for t in texts]
    )
    assert [r.status_code for r in responses] == [200] * burst
    assert len({r.headers["X-Memory-Session"] for r in responses}) == 1
    await proxy.settle()
    stored = await proxy.services.store.load_messages(responses[0].headers["X-Memory-Session-Id"])
    assert [m.role for m in stored] == ["user", "assistant"] * burst
    users = [m.text for m in stored[0::2]]
    assert sorted(users) == sorted(texts)
    for user, answer in zip(stored[0::2], stored[1::2], strict=True):
        assert answer.text == f"echo: {user.text}"
    # The k-th request served saw the k-1 exchanges before it, in the stored order.
    by_last = {}
    for request in stub_upstream.received:
        sent = [m for m in request.body["messages"] if m["role"] in ("user", "assistant")]
        by_last[sent[-1]["content"]] = [m["content"] for m in sent]
    for k, user in enumerate(users):
        assert by_last[user] == [m.text for m in stored[: 2 * k]] + [user]
