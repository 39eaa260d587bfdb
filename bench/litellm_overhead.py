"""litellm's own CPU per call: `litellm.acompletion` against a plain httpx post.

    python bench/litellm_overhead.py [--rounds 5 --rounds 40 --rounds 240] [-n 200]

Both send the same request (a conversation of `--rounds` prior rounds, see
`bench/vs_litellm.py`) to the local stub upstream, which runs in its own
process, so what is measured is this process's CPU: litellm quieted as
memproxy runs it (`proxy.upstream.Upstream.load`: no success logging, an
unpriced model priced once) and the response dumped to a dict as
`proxy.upstream_calls` does, against httpx posting the JSON and reading it
back. The difference is what a call costs in litellm: its request building and
message passes, the OpenAI SDK and transport layers, the `ModelResponse`. A
benchmark, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.vs_litellm import conversation, start_stub  # noqa: E402
from proxy.settings import Settings  # noqa: E402
from proxy.upstream import Upstream  # noqa: E402


async def cpu_per_call(call: Any, n: int) -> float:
    for _ in range(20):  # connections, caches, lazy imports
        await call()
    start = time.process_time()
    for _ in range(n):
        await call()
    return (time.process_time() - start) / n * 1000


async def measure(stub_url: str, rounds: int, n: int) -> tuple[float, float]:
    upstream = Upstream(Settings())
    upstream.load()
    litellm = upstream.litellm
    messages = conversation(0, rounds)
    kwargs = {
        "model": "openai/stub-model",
        "api_base": stub_url,
        "api_key": "bench",
        "messages": messages,
        "num_retries": 0,
        "max_retries": 0,
        "timeout": httpx.Timeout(60, connect=5),
    }

    async def via_litellm() -> None:
        (await litellm.acompletion(**kwargs)).model_dump()

    async with httpx.AsyncClient(timeout=60) as client:

        async def via_httpx() -> None:
            body = {"model": "stub-model", "messages": messages}
            resp = await client.post(f"{stub_url}/chat/completions", json=body)
            resp.json()

        return await cpu_per_call(via_litellm, n), await cpu_per_call(via_httpx, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, action="append")
    parser.add_argument("-n", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stub, stub_url = start_stub(Path(tmp) / "stub.log")
        try:
            print("| rounds | litellm ms CPU per call | httpx ms | litellm's own ms |")
            print("|---|---|---|---|")
            for rounds in args.rounds or [5, 40, 240]:
                via_litellm, via_httpx = asyncio.run(measure(stub_url, rounds, args.n))
                print(
                    f"| {rounds} | {via_litellm:.2f} | {via_httpx:.2f} "
                    f"| {via_litellm - via_httpx:.2f} |"
                )
        finally:
            stub.terminate()
            stub.wait(timeout=20)


if __name__ == "__main__":
    main()
