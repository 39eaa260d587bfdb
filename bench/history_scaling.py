"""Proxy-side time per request with 10, 100 and 1,000 prior turns in the session.

    python bench/history_scaling.py [-n 40] [--budget 2000]

The app runs in-process against the local stub upstream (real HTTP through
litellm); a client that keeps its full history sends one more round at a time.
Proxy-side time = wall time of the request minus the upstream call (as
recorded by the proxy), i.e. parsing, session matching, ingest, extraction,
assembly and the store writes. Prints the medians and the 1,000 : 10 ratio.

The client's own work stays outside the clock: each request body is encoded
to JSON before the timer starts (at 1,000 turns `json.dumps` of the history
takes ~0.8 ms, which a real client spends in its own process). The three
sessions take turns, one request each per round, so a change in the machine's
load affects every size alike instead of whichever size was being measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import httpx  # noqa: E402

from proxy.config import settings_from_dict  # noqa: E402
from proxy.http.app import create_app  # noqa: E402
from proxy.stub.server import StubUpstream  # noqa: E402

USER_LINES = [
    "Can you look at the quarterly numbers for the north region again?",
    "We agreed the report goes to Maria Chen by Friday, don't forget that.",
    "How does the churn compare with last year, roughly?",
    "Thanks, that helps. What about the new stores opened in March?",
    "Please keep amounts in thousands of euros with one decimal.",
]


def history(turns: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = [{"role": "system", "content": "You are a data analyst."}]
    for i in range(turns // 2):
        msgs.append({"role": "user", "content": f"{USER_LINES[i % 5]} (round {i})"})
        msgs.append({"role": "assistant", "content": f"Here is the analysis for round {i}. " * 6})
    return msgs


async def post(client: httpx.AsyncClient, body: bytes, budget: int) -> httpx.Response:
    headers = {"X-Memory-Budget": str(budget), "Content-Type": "application/json"}
    return await client.post("/v1/chat/completions", content=body, headers=headers)


def encode(msgs: list[dict[str, Any]]) -> bytes:
    return json.dumps({"model": "stub", "messages": msgs}).encode()


async def measure(
    client: httpx.AsyncClient, app: Any, sizes: tuple[int, ...], rounds: int, budget: int
) -> dict[int, list[float]]:
    histories = {}
    for prior in sizes:
        # First sight: the whole history is ingested once (not measured).
        msgs = [*history(prior), {"role": "user", "content": "Let's continue."}]
        resp = await post(client, encode(msgs), budget)
        histories[prior] = [*msgs, resp.json()["choices"][0]["message"]]
    store = app.state.services.store
    pipeline = app.state.services.pipeline
    samples: dict[int, list[float]] = {prior: [] for prior in sizes}
    for i in range(rounds):
        for prior in sizes[i % len(sizes) :] + sizes[: i % len(sizes)]:
            new = {"role": "user", "content": f"{USER_LINES[i % 5]} (new {i})"}
            msgs = [*histories[prior], new]
            body = encode(msgs)  # the client's work, before the clock starts
            await pipeline.drain()
            start = time.perf_counter()
            resp = await post(client, body, budget)
            wall = (time.perf_counter() - start) * 1000
            resp.raise_for_status()
            await pipeline.drain()
            record = await store.get_request(resp.headers["X-Memory-Request-Id"])
            samples[prior].append(wall - (record["upstream_ms"] or 0.0))
            answer = resp.json()["choices"][0]["message"]["content"]
            histories[prior] = [*msgs, {"role": "assistant", "content": answer}]
    return samples


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=40, help="measured requests per size")
    parser.add_argument("--budget", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as stub:
        settings = settings_from_dict(
            {
                "model_list": [
                    {
                        "model_name": "stub",
                        "litellm_params": {
                            "model": "openai/stub-model",
                            "api_base": stub.url,
                            "api_key": "bench",
                        },
                    }
                ],
                "memory": {"database_url": f"sqlite+aiosqlite:///{tmp}/bench.db"},
            },
            env={},
        )
        app = create_app(settings)
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://bench", timeout=60
            ) as client,
        ):
            await measure(client, app, (10,), 10, args.budget)  # warm-up
            results = await measure(client, app, (10, 100, 1000), args.n, args.budget)
    print(f"proxy-side ms per request (median of {args.n}), budget {args.budget} tokens")
    print("| prior turns | median ms | p90 ms |")
    print("|---|---|---|")
    for prior, samples in results.items():
        p90 = sorted(samples)[int(0.9 * len(samples))]
        print(f"| {prior} | {statistics.median(samples):.2f} | {p90:.2f} |")
    ratio = statistics.median(results[1000]) / statistics.median(results[10])
    print(f"1000 : 10 ratio = {ratio:.2f} (target <= 1.5)")


if __name__ == "__main__":
    asyncio.run(main())
