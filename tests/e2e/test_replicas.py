"""Two `memproxy serve` replicas on one PostgreSQL database, and `--workers`.

The same workload (32 conversations at once, each turn sent to the other
replica than the previous one) runs against one replica and then against
two: no turn may be lost or stored twice, each conversation must stay one
session, and what the upstream received must be the same, request for
request, as with one replica. Skipped without MEMPROXY_TEST_PG_URL (except
the SQLite refusal, which needs no server).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from sqlalchemy import text

from proxy.store.repo import Store
from tests.conftest import make_config
from tests.databases import create_pg_database, drop_pg_database, pg_base_url
from tests.e2e.serving import free_port, serve

pytestmark = pytest.mark.e2e

CONVERSATIONS = 32
ROUNDS = int(os.environ.get("MEMPROXY_TEST_REPLICA_ROUNDS", "8"))
# Small enough that the later rounds compact into a summary and recall from it:
# the whole managed context (memory, summary, recall, layout) is compared.
BUDGET = "260"


def _user(n: int, r: int) -> str:
    return (
        f"conv {n} round {r}: my budget is {100 + 10 * n + r} euros, "
        f"the deadline is day {r + 1}, reference K{n}-{r}."
    )


async def _conversation(
    clients: list[openai.AsyncOpenAI], n: int
) -> tuple[set[str], list[dict[str, Any]]]:
    history: list[dict[str, Any]] = [{"role": "system", "content": f"Assistant for team {n}."}]
    sessions: set[str] = set()
    for r in range(ROUNDS):
        history.append({"role": "user", "content": _user(n, r)})
        client = clients[(n + r) % len(clients)]
        raw = await client.chat.completions.with_raw_response.create(
            model="stub",
            messages=history,  # type: ignore[arg-type]
            extra_headers={"X-Memory-Budget": BUDGET},
        )
        sessions.add(raw.headers["X-Memory-Session"])
        history.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
    return sessions, history


async def _workload(ports: list[int]) -> list[tuple[set[str], list[dict[str, Any]]]]:
    clients = [
        openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{p}/v1", api_key="unused", timeout=60)
        for p in ports
    ]
    try:
        return await asyncio.gather(*[_conversation(clients, n) for n in range(CONVERSATIONS)])
    finally:
        for client in clients:
            await client.close()


async def _stored(url: str) -> tuple[int, dict[str, list[Any]], int, int]:
    """Sessions, each one's stored turns, and how many memory items and summary chunks."""
    store = await Store.open(url)
    try:
        sessions = await store.list_sessions(None, limit=1000)
        turns = {}
        items = chunks = 0
        for s in sessions:
            turns[s.id] = [m.message["content"] for m in await store.load_messages(s.id)]
            items += len(await store.load_items(s.id))
            chunks += len(await store.load_summary_chunks(s.id))
    finally:
        await store.close()
    return len(sessions), turns, items, chunks


async def _backends(url: str) -> int:
    """Connections other processes hold to the database at `url`."""
    store = await Store.open(url)
    try:
        async with store.engine.connect() as conn:
            count = await conn.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            )
    finally:
        await store.close()
    return int(count or 0)


def _run(
    stub: Any, tmp_path: Path, url: str, replicas: int, args: Sequence[str] = ()
) -> tuple[list[tuple[set[str], list[dict[str, Any]]]], dict[str, Any]]:
    """The workload through `replicas` processes; returns results and upstream bodies."""
    stub.reset()
    config = make_config(stub.url, tmp_path / "unused.db", memory={"database_url": url})
    path = tmp_path / f"replicas-{replicas}.yaml"
    path.write_text(yaml.safe_dump(config))
    ports = [free_port() for _ in range(replicas)]
    procs = [serve(path, port, args=args) for port in ports]
    try:
        if args:
            # Every worker migrates at start-up and keeps its pool's connection.
            deadline = time.monotonic() + 60
            while asyncio.run(_backends(url)) < 2 and time.monotonic() < deadline:
                time.sleep(0.5)
            assert asyncio.run(_backends(url)) >= 2, "the second worker never connected"
        results = asyncio.run(_workload(ports))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)
    upstream: dict[str, Any] = {}
    for request in stub.received:
        last = request.body["messages"][-1]["content"]
        assert last not in upstream, f"upstream asked twice for {last!r}"
        upstream[last] = request.body["messages"]
    return results, upstream


def _check_stored(results: list[tuple[set[str], list[dict[str, Any]]]], url: str) -> None:
    count, stored, items, chunks = asyncio.run(_stored(url))
    assert count == CONVERSATIONS, "one session per conversation"
    # The contexts compared below hold extracted memory and a rolling summary.
    assert items >= CONVERSATIONS
    assert chunks >= CONVERSATIONS
    for sessions, history in results:
        assert len(sessions) == 1, f"a conversation answered from sessions {sessions}"
        session = next(iter(sessions))
        assert stored[session] == [m["content"] for m in history[1:]], "lost or repeated turns"


def test_two_replicas_alternating_match_one_replica(stub: Any, tmp_path: Path) -> None:
    base = pg_base_url()
    single_url, shared_url = (asyncio.run(create_pg_database(base)) for _ in range(2))
    try:
        single, single_upstream = _run(stub, tmp_path, single_url, 1)
        _check_stored(single, single_url)
        double, double_upstream = _run(stub, tmp_path, shared_url, 2)
        _check_stored(double, shared_url)
    finally:
        for url in (single_url, shared_url):
            asyncio.run(drop_pg_database(base, url))
    assert len(double_upstream) == CONVERSATIONS * ROUNDS
    assert [h for _, h in double] == [h for _, h in single], "the same answers"
    differing = [key for key in single_upstream if double_upstream.get(key) != single_upstream[key]]
    assert not differing, (
        f"{len(differing)} contexts differ from one replica's, e.g. {differing[0]!r}:\n"
        + json.dumps(single_upstream[differing[0]], indent=1, ensure_ascii=False)[:3000]
        + "\n--- two replicas ---\n"
        + json.dumps(double_upstream.get(differing[0]), indent=1, ensure_ascii=False)[:3000]
    )


def test_workers_share_one_postgres_database(stub: Any, tmp_path: Path) -> None:
    """`serve --workers 2`: the kernel spreads the connections over two processes."""
    base = pg_base_url()
    url = asyncio.run(create_pg_database(base))
    try:
        results, upstream = _run(stub, tmp_path, url, 1, args=("--workers", "2"))
        _check_stored(results, url)
    finally:
        asyncio.run(drop_pg_database(base, url))
    assert len(upstream) == CONVERSATIONS * ROUNDS


def test_workers_refuse_sqlite_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(make_config("http://127.0.0.1:9/v1", tmp_path / "m.db")))
    done = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "serve", "--config", str(path), "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "PostgreSQL" in done.stderr
    assert "--workers" in done.stderr
