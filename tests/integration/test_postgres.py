"""PostgreSQL shared by several replicas: migrations, advisory locks, stale caches.

Two stores (or two apps in this process) on one throwaway database stand for
two replicas: each has its own engine, connections, locks and caches, exactly
as two `memproxy serve` processes would (tests/e2e/test_replicas.py runs those).
Skipped without MEMPROXY_TEST_PG_URL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import text

from proxy.store.migrations import MIGRATIONS
from proxy.store.repo import Store, StoredMessage
from tests.databases import pg_base_url, temp_pg_database


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    async with temp_pg_database(pg_base_url()) as url:
        yield url


def _turn(ordinal: int, content: str) -> StoredMessage:
    return StoredMessage(
        ordinal=ordinal,
        role="user" if ordinal % 2 == 0 else "assistant",
        message={"role": "user" if ordinal % 2 == 0 else "assistant", "content": content},
        text=content,
        tool_call_id=None,
        tool_call_ids=(),
        content_hash=f"h-{content}",
        chain_hash=f"c-{ordinal}-{content}",
        tokens=3,
        created_at=0.0,
    )


async def test_replicas_starting_together_migrate_a_blank_database_once(pg_url: str) -> None:
    stores = await asyncio.gather(*[Store.open(pg_url) for _ in range(3)])
    try:
        async with stores[0].engine.connect() as conn:
            names = [r[0] for r in await conn.execute(text("SELECT name FROM schema_migrations"))]
    finally:
        for store in stores:
            await store.close()
    assert sorted(names) == sorted(m.name for m in MIGRATIONS)


async def test_text_with_nul_characters_is_stored(pg_url: str) -> None:
    """PostgreSQL rejects NUL in text; SQLite accepts it. A client may send one."""
    store = await Store.open(pg_url)
    try:
        session = await store.create_session("t", session_id="S-nul")
        await store.write_turns(session, 0, [_turn(0, "a\x00b")])
        stored = await store.load_messages("S-nul")
    finally:
        await store.close()
    assert stored[0].text == "ab"
    assert stored[0].message["content"] == "a\x00b"  # JSON keeps it escaped


async def test_replicas_meeting_a_new_tenant_at_once_store_it_once(pg_url: str) -> None:
    a, b = await Store.open(pg_url), await Store.open(pg_url)
    try:
        await asyncio.gather(*[s.ensure_tenant("tenant-new") for s in (a, b, a, b)])
        async with a.engine.connect() as conn:
            count = await conn.scalar(text("SELECT count(*) FROM tenants"))
    finally:
        await a.close()
        await b.close()
    assert count == 1


async def _taken_within(task: asyncio.Task[None], seconds: float) -> bool:
    done, _ = await asyncio.wait({task}, timeout=seconds)
    return bool(done)


async def test_advisory_lock_excludes_another_replica_until_released(pg_url: str) -> None:
    a, b = await Store.open(pg_url), await Store.open(pg_url)
    try:
        assert a.locks is not None
        assert b.locks is not None
        await a.locks.acquire("session:S1")
        # The holder may take it again (its next queued request): PostgreSQL counts.
        await a.locks.acquire("session:S1")
        waiting = asyncio.create_task(b.locks.acquire("session:S1"))
        other = asyncio.create_task(b.locks.acquire("session:S2"))
        assert await _taken_within(other, 2.0), "an unrelated key must not wait"
        assert not await _taken_within(waiting, 0.3)
        a.locks.release("session:S1")
        assert not await _taken_within(waiting, 0.3), "still held once by A"
        a.locks.release("session:S1")
        assert await _taken_within(waiting, 2.0)
        b.locks.release("session:S1")
        b.locks.release("session:S2")
    finally:
        await a.close()
        await b.close()


async def test_a_write_by_another_replica_marks_our_copies_stale(pg_url: str) -> None:
    a, b = await Store.open(pg_url), await Store.open(pg_url)
    stale: list[str] = []
    a.on_stale(stale.append)
    try:
        session = await a.create_session("t", session_id="S1")
        await a.write_turns(session, 0, [_turn(0, "hello")])
        stale.clear()  # first contact counts as stale: nothing was cached yet
        await a.write_turns(session, 1, [_turn(1, "hi")])
        await a.sync("S1")
        assert stale == [], "our own writes keep our copies current"
        copy = await b.get_session("S1")
        assert copy is not None
        await b.write_turns(copy, 2, [_turn(2, "more")])
        await a.sync("S1")
        assert stale == ["S1"]
        await a.sync("S1")
        assert stale == ["S1"], "reported once per change"
        # A write of ours that lands after one of theirs is noticed too.
        await b.save_items("S1", [])
        await b.replace_items("S1", [])
        await a.write_turns(session, 3, [_turn(3, "again")])
        assert stale == ["S1", "S1"]
    finally:
        await a.close()
        await b.close()


def _text(resp: Any) -> str:
    return str(resp.json()["choices"][0]["message"]["content"])


async def test_two_replicas_alternating_keep_one_session_and_every_turn(
    proxy_factory: Any, pg_url: str, stub_upstream: Any
) -> None:
    replicas = [await proxy_factory(memory={"database_url": pg_url}) for _ in range(2)]

    async def conversation(n: int) -> tuple[set[str], list[dict[str, Any]]]:
        history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
        sessions = set()
        for r in range(6):
            history.append({"role": "user", "content": f"conv {n} round {r}: my code is K{n}{r}"})
            resp = await replicas[(n + r) % 2].chat(history)
            assert resp.status_code == 200, resp.text
            sessions.add(resp.headers["X-Memory-Session"])
            history.append({"role": "assistant", "content": _text(resp)})
        return sessions, history

    results = await asyncio.gather(*[conversation(n) for n in range(8)])
    for replica in replicas:
        await replica.settle()
    store = replicas[0].services.store
    for sessions, history in results:
        assert len(sessions) == 1
        stored = await store.load_messages(sessions.pop())
        assert [m.message["content"] for m in stored] == [m["content"] for m in history[1:]]
    assert len(await store.list_sessions(None)) == 8


async def test_a_regenerate_on_one_replica_is_seen_by_the_other(
    proxy_factory: Any, pg_url: str, stub_upstream: Any
) -> None:
    """Same turn count, different answer: only the version tells A its copy is stale."""
    a, b = [await proxy_factory(memory={"database_url": pg_url}) for _ in range(2)]
    base = [{"role": "system", "content": "s"}, {"role": "user", "content": "pick a city"}]
    first = await a.chat(base)
    session = first.headers["X-Memory-Session"]
    await a.settle()
    # The client regenerates on B: B replaces the answer (turn count back to 2).
    stub_upstream.state.script["pick a city"] = {"content": "Lyon"}
    again = await b.chat(base)
    assert again.headers["X-Memory-Session"] == session
    assert _text(again) == "Lyon"
    await b.settle()
    # The client continues from B's answer on A, whose cache still holds the old one.
    follow = [*base, {"role": "assistant", "content": "Lyon"}, {"role": "user", "content": "why?"}]
    resp = await a.chat(follow)
    assert resp.status_code == 200, resp.text
    assert resp.headers["X-Memory-Session"] == session, "a continuation, not a fork"
    await a.settle()
    stored = await a.services.store.load_messages(session)
    assert [m.message["content"] for m in stored] == ["pick a city", "Lyon", "why?", _text(resp)]
    assert len(await a.services.store.list_sessions(None)) == 1


async def test_burst_of_one_conversation_across_replicas(proxy_factory: Any, pg_url: str) -> None:
    """Parallel identical requests on both replicas: one session, each turn once."""
    replicas = [await proxy_factory(memory={"database_url": pg_url}) for _ in range(2)]
    base = [{"role": "system", "content": "s"}, {"role": "user", "content": "hello burst"}]
    responses = await asyncio.gather(*[replicas[i % 2].chat(base) for i in range(8)])
    assert all(r.status_code == 200 for r in responses)
    sessions = {r.headers["X-Memory-Session"] for r in responses}
    assert len(sessions) == 1
    follow = [
        *base,
        {"role": "assistant", "content": _text(responses[0])},
        {"role": "user", "content": "again"},
    ]
    responses = await asyncio.gather(*[replicas[i % 2].chat(follow) for i in range(8)])
    assert {r.headers["X-Memory-Session"] for r in responses} == sessions
    for replica in replicas:
        await replica.settle()
    stored = await replicas[0].services.store.load_messages(sessions.pop())
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]


FACTS = [
    "my name is Dana and I work at Orbital Labs",
    "we are planning a team offsite in Porto",
    "the offsite has 14 participants",
    "one participant is vegetarian and two are vegan",
    "we need a room with a projector",
    "the hotel must be walkable from the old town",
    "never book anything before 9 am",
    "my colleague Ruben handles the invoices",
    "please keep the agenda under 6 hours per day",
    "remember that Friday is a public holiday there",
]


# Long turns: the history overflows the budget, so the context is assembled
# (working memory, its delta, summary, recall) from the second round on.
FILLER = " Background: " + " ".join(f"note{i}" for i in range(80))


async def _facts_workload(replicas: list[Any], stub: Any, conversations: int) -> dict[str, Any]:
    """Conversations that only add memory (nothing superseded): the block is kept."""

    async def conversation(n: int) -> None:
        history: list[dict[str, Any]] = [{"role": "system", "content": "Plan trips."}]
        for r, fact in enumerate(FACTS):
            history.append({"role": "user", "content": f"[c{n} r{r}] {fact}.{FILLER}"})
            resp = await replicas[(n + r) % len(replicas)].chat(
                history, headers={"X-Memory-Budget": "600"}
            )
            assert resp.status_code == 200, resp.text
            history.append({"role": "assistant", "content": _text(resp)})

    await asyncio.gather(*[conversation(n) for n in range(conversations)])
    for replica in replicas:
        await replica.settle()
    return {r.body["messages"][-1]["content"]: r.body["messages"] for r in stub.received}


async def test_alternating_replicas_forward_what_one_replica_forwards(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    """The working-memory block's layout (a prompt-cache hint) travels with the session."""
    async with (
        temp_pg_database(pg_base_url()) as one_url,
        temp_pg_database(pg_base_url()) as two_url,
    ):
        single = await _facts_workload(
            [await proxy_factory(memory={"database_url": one_url})], stub_upstream, 4
        )
        stub_upstream.reset()
        pair = [await proxy_factory(memory={"database_url": two_url}) for _ in range(2)]
        double = await _facts_workload(pair, stub_upstream, 4)
    assert len(single) == len(double) == 4 * len(FACTS)
    differing = sorted(k for k in single if single[k] != double.get(k))
    assert not differing, (differing[0], single[differing[0]], double.get(differing[0]))
