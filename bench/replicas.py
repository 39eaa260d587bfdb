"""Throughput with 1 and 2 replicas on PostgreSQL against 1 on SQLite (same machine).

    python bench/replicas.py [--sessions 64] [--rounds 8] [--concurrency 32]
                             [--pg-url postgresql+asyncpg://postgres@127.0.0.1:5432/test]

Starts the local stub upstream (a thread of this process) and `memproxy serve`
subprocesses, then drives distinct conversations (managed mode, each one
sequential, `--concurrency` of them in flight) through:

- sqlite x1: one replica on a SQLite file;
- postgres x1: one replica on PostgreSQL;
- postgres x2 round-robin: two replicas, each request to the other replica
  than its predecessor (a load balancer without affinity: every request finds
  its replica's copy of the session stale and reloads it);
- postgres x2 sticky: two replicas, each conversation pinned to one (affinity
  by session, e.g. a hash of X-Memory-Session or of the client).

Each replica is warmed up first (litellm's import). Every PostgreSQL run gets
a new database, dropped afterwards. A benchmark, not a test: it asserts only
that every request succeeded, and prints requests/s, latency and the ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sqlalchemy import text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from sqlalchemy.ext.asyncio import create_async_engine  # noqa: E402

from bench.harness import free_port, spawn_memproxy, stub_model, wait_http  # noqa: E402
from proxy.stub.server import StubUpstream  # noqa: E402

DEFAULT_PG = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"


async def _admin(base: str, statement: str) -> None:
    engine = create_async_engine(base, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as conn:
            await conn.execute(text(statement))
    finally:
        await engine.dispose()


def _user(n: int, r: int) -> str:
    return (
        f"session {n} round {r}: my budget is {100 + n + r} euros, the deadline is day {r + 1}, "
        f"please keep reference R{n}-{r} in mind and summarise what we agreed so far."
    )


async def _drive(
    bases: list[str], sessions: int, rounds: int, concurrency: int, sticky: bool, tag: str
) -> tuple[float, list[float]]:
    latencies: list[float] = []
    errors: list[str] = []
    limit = httpx.Limits(max_connections=concurrency * 2, max_keepalive_connections=concurrency)
    clients = [httpx.AsyncClient(base_url=b, timeout=120, limits=limit) for b in bases]
    gate = asyncio.Semaphore(concurrency)

    async def conversation(n: int) -> None:
        history: list[dict[str, Any]] = [{"role": "system", "content": f"Assistant {tag}."}]
        async with gate:
            for r in range(rounds):
                history.append({"role": "user", "content": _user(n, r)})
                pick = n if sticky else n + r
                client = clients[pick % len(clients)]
                start = time.perf_counter()
                resp = await client.post(
                    "/v1/chat/completions", json={"model": "stub", "messages": history}
                )
                if resp.status_code != 200:
                    # Reported, not retried: the conversation stops here.
                    errors.append(f"{resp.status_code} {resp.text[:200]}")
                    return
                latencies.append((time.perf_counter() - start) * 1000)
                answer = resp.json()["choices"][0]["message"]["content"]
                history.append({"role": "assistant", "content": answer})

    try:
        for client in clients:  # warm-up: litellm's import, pools, first session
            await client.post(
                "/v1/chat/completions",
                json={"model": "stub", "messages": [{"role": "user", "content": "warm up"}]},
            )
        start = time.perf_counter()
        await asyncio.gather(*[conversation(n) for n in range(sessions)])
        elapsed = time.perf_counter() - start
    finally:
        for client in clients:
            await client.aclose()
    if errors:
        print(f"{len(errors)} failed requests, e.g. {errors[0]}", file=sys.stderr)
    return elapsed, latencies


def _measure(
    stub_url: str, tmp: Path, url: str, replicas: int, sticky: bool, args: argparse.Namespace
) -> tuple[float, list[float]]:
    config = {
        "model_list": [stub_model(stub_url)],
        "memory": {"database_url": url},
    }
    path = tmp / f"config-{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(yaml.safe_dump(config))
    ports = [free_port() for _ in range(replicas)]
    procs = [spawn_memproxy(path, port) for port in ports]
    try:
        for port, proc in zip(ports, procs, strict=True):
            wait_http(f"http://127.0.0.1:{port}/health", proc, "memproxy serve", timeout_s=120)
        bases = [f"http://127.0.0.1:{p}" for p in ports]
        return asyncio.run(
            _drive(bases, args.sessions, args.rounds, args.concurrency, sticky, uuid.uuid4().hex)
        )
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=64, help="distinct conversations")
    parser.add_argument("--rounds", type=int, default=8, help="requests per conversation")
    parser.add_argument("--concurrency", type=int, default=32, help="conversations in flight")
    parser.add_argument("--pg-url", default=os.environ.get("MEMPROXY_TEST_PG_URL") or DEFAULT_PG)
    parser.add_argument(
        "--repeat", type=int, default=1, help="run the whole set N times (noisy machines)"
    )
    parser.add_argument(
        "--order",
        default="sqlite,pg1,pg2rr,pg2sticky",
        help="runs, in this order (sqlite, pg1 and one of the others are needed for ratios)",
    )
    args = parser.parse_args()

    choices = {
        "sqlite": ("sqlite x1", None, 1, False),
        "pg1": ("postgres x1", args.pg_url, 1, False),
        "pg2rr": ("postgres x2 round-robin", args.pg_url, 2, False),
        "pg2sticky": ("postgres x2 sticky", args.pg_url, 2, True),
    }
    runs = [choices[name] for name in args.order.split(",")] * args.repeat
    results: list[tuple[str, float, list[float]]] = []
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as stub:
        for name, pg, replicas, sticky in runs:
            if pg is None:
                url = f"sqlite+aiosqlite:///{tmp}/bench.db"
                elapsed, lat = _measure(stub.url, Path(tmp), url, replicas, sticky, args)
            else:
                db = f"memproxy_bench_{uuid.uuid4().hex[:10]}"
                asyncio.run(_admin(pg, f'CREATE DATABASE "{db}"'))
                url = make_url(pg).set(database=db).render_as_string(hide_password=False)
                try:
                    elapsed, lat = _measure(stub.url, Path(tmp), url, replicas, sticky, args)
                finally:
                    asyncio.run(_admin(pg, f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
            results.append((name, elapsed, lat))
            print(f"{name}: {len(lat) / elapsed:.1f} req/s", file=sys.stderr, flush=True)

    requests = args.sessions * args.rounds
    load = os.getloadavg()
    print(
        f"memproxy replicas: {args.sessions} sessions x {args.rounds} rounds = {requests} "
        f"requests per run, {args.concurrency} in flight, managed mode, stub upstream; "
        f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the end; "
        f"median of {args.repeat} run(s)"
    )
    rates: dict[str, list[float]] = {}
    latencies: dict[str, list[float]] = {}
    for name, elapsed, lat in results:
        rates.setdefault(name, []).append(len(lat) / elapsed)
        latencies.setdefault(name, []).extend(lat)
    median = {name: statistics.median(r) for name, r in rates.items()}
    print("| run | req/s | each run | vs sqlite x1 | vs postgres x1 | p50 ms | p95 ms |")
    print("|---|---|---|---|---|---|---|")
    for name, rate in median.items():
        lat = sorted(latencies[name])
        each = " / ".join(f"{r:.1f}" for r in rates[name])
        print(
            f"| {name} | {rate:.1f} | {each} | {rate / median['sqlite x1']:.2f} "
            f"| {rate / median['postgres x1']:.2f} | {statistics.median(lat):.0f} "
            f"| {lat[int(0.95 * (len(lat) - 1))]:.0f} |"
        )


if __name__ == "__main__":
    main()
