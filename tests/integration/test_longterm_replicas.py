"""Two replicas consolidating one user at once, on the real local PostgreSQL.

Each replica reads the user's items, merges a job into them and writes the
result. Without serialising those steps per user across processes, both read
the same (stale) rows and both add the item: a duplicate, or one replica's
change lost. Each replica here has its own engine and its own advisory-lock
connections, as separate processes would. Skipped without MEMPROXY_TEST_PG_URL.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from policies.longterm.params import LongTermParams
from policies.types import MemoryItem, Turn
from proxy.longterm import ConsolidationJob, LongTermMemory
from proxy.store.repo import Store
from tests.databases import pg_base_url, temp_pg_database

TENANT, USER = "tenant-pg", "mia"


@pytest.fixture
async def replicas() -> AsyncIterator[tuple[LongTermMemory, LongTermMemory]]:
    async with temp_pg_database(pg_base_url()) as url:
        first = await Store.open(url)
        second = await Store.open(url)
        try:
            yield (
                LongTermMemory(first, LongTermParams()),
                LongTermMemory(second, LongTermParams()),
            )
        finally:
            await first.close()
            await second.close()


def job(session: str, *rules: str) -> ConsolidationJob:
    items = tuple(
        MemoryItem(f"{session}-i{n}", "directive", f"directive:r{n}", text, "user", n)
        for n, text in enumerate(rules)
    )
    turns = tuple(
        Turn(it.source_ordinal, "user", it.value, {"role": "user", "content": it.value}, 8)
        for it in items
    )
    return ConsolidationJob(TENANT, USER, session, items, turns, 0)


RULE = "From now on, always print boarding passes on paper."


async def test_the_same_job_on_two_replicas_at_once_is_merged_once(
    replicas: tuple[LongTermMemory, LongTermMemory],
) -> None:
    a, b = replicas
    for _ in range(5):
        await asyncio.gather(a.consolidate(job("s1", RULE)), b.consolidate(job("s1", RULE)))
    rows = await a.store.load_long_term(TENANT, USER)
    assert [(r.value, r.confirmations) for r in rows] == [(RULE, 1)]


async def test_two_conversations_stating_one_rule_at_once_confirm_one_row(
    replicas: tuple[LongTermMemory, LongTermMemory],
) -> None:
    a, b = replicas
    other = "From now on, pack a spare phone charger."
    await asyncio.gather(
        a.consolidate(job("s1", RULE, other)), b.consolidate(job("s2", RULE, other))
    )
    rows = await b.store.load_long_term(TENANT, USER)
    assert sorted((r.value, r.confirmations, sorted(r.value_sessions)) for r in rows) == [
        (RULE, 2, ["s1", "s2"]),
        (other, 2, ["s1", "s2"]),
    ]
