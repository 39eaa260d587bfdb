"""Added latency of memproxy against calling the upstream directly (same run).

    python bench/overhead.py [-n 300] [--mode managed|raw]

Starts the local stub upstream (a thread of this process) and `memproxy serve`
(a subprocess), then sends the same requests to both, one at a time, and
prints p50 / p99 of the added latency: plain requests, and streamed ones (time
to first chunk and to the last chunk). A benchmark, not a test: it asserts
nothing and prints figures measured side by side.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import serve_memproxy, stub_model  # noqa: E402
from proxy.stub.server import StubUpstream  # noqa: E402


def start_proxy(stub_url: str, tmp: Path, extra: dict[str, Any] | None = None) -> tuple[Any, str]:
    memory = {"database_url": f"sqlite+aiosqlite:///{tmp}/bench.db", **(extra or {})}
    return serve_memproxy({"model_list": [stub_model(stub_url)], "memory": memory}, tmp)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def time_plain(
    client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str], n: int
) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        resp = client.post(url, json=body, headers=headers)
        resp.raise_for_status()
        out.append((time.perf_counter() - start) * 1000)
    return out


def time_stream(
    client: httpx.Client, url: str, body: dict[str, Any], headers: dict[str, str], n: int
) -> tuple[list[float], list[float]]:
    first, last = [], []
    for _ in range(n):
        start = time.perf_counter()
        t_first = None
        with client.stream("POST", url, json={**body, "stream": True}, headers=headers) as resp:
            for line in resp.iter_lines():
                if t_first is None and line.startswith("data: "):
                    t_first = time.perf_counter()
        first.append(((t_first or time.perf_counter()) - start) * 1000)
        last.append((time.perf_counter() - start) * 1000)
    return first, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=300, help="requests per measurement")
    parser.add_argument("--mode", default="managed", choices=["managed", "raw"])
    args = parser.parse_args()

    body = {
        "model": "stub-model",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "Give me one sentence about latency budgets."},
        ],
    }
    with tempfile.TemporaryDirectory() as tmp, StubUpstream() as stub:
        stub.state.chunk_delay_s = 0.0
        proc, base = start_proxy(stub.url, Path(tmp))
        try:
            direct_url = f"{stub.url}/chat/completions"
            proxy_url = f"{base}/v1/chat/completions"
            proxy_body = {**body, "model": "stub"}
            headers = {"X-Memory-Mode": args.mode}
            with httpx.Client(timeout=30) as client:
                warm = max(20, args.n // 10)
                time_plain(client, direct_url, body, {}, warm)
                time_plain(client, proxy_url, proxy_body, headers, warm)
                d_plain = time_plain(client, direct_url, body, {}, args.n)
                cpu_start = cpu_seconds(proc.pid)
                p_plain = time_plain(client, proxy_url, proxy_body, headers, args.n)
                # Records are written after the response: let the last ones land.
                time.sleep(0.5)
                cpu_plain = (cpu_seconds(proc.pid) - cpu_start) / args.n * 1000
                d_first, d_last = time_stream(client, direct_url, body, {}, args.n)
                cpu_start = cpu_seconds(proc.pid)
                p_first, p_last = time_stream(client, proxy_url, proxy_body, headers, args.n)
                time.sleep(0.5)
                cpu_stream = (cpu_seconds(proc.pid) - cpu_start) / args.n * 1000
        finally:
            proc.terminate()
            proc.wait(timeout=10)

    print(
        f"memproxy added latency, mode={args.mode}, n={args.n} sequential requests, "
        f"{os.cpu_count()} CPUs"
    )
    print(
        "| measurement | direct p50 ms | proxy p50 ms | added p50 ms | direct p99 ms "
        "| proxy p99 ms | added p99 ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, direct, proxied in (
        ("plain request", d_plain, p_plain),
        ("stream: first chunk", d_first, p_first),
        ("stream: last chunk", d_last, p_last),
    ):
        d50, p50 = statistics.median(direct), statistics.median(proxied)
        d99, p99 = pct(direct, 0.99), pct(proxied, 0.99)
        print(
            f"| {name} | {d50:.2f} | {p50:.2f} | {p50 - d50:.2f} | {d99:.2f} | {p99:.2f} "
            f"| {p99 - d99:.2f} |"
        )
    # CPU time barely depends on what else the machine runs, unlike latency.
    print(
        f"proxy CPU per request (user + system, whole process): plain {cpu_plain:.2f} ms, "
        f"streamed {cpu_stream:.2f} ms"
    )


if __name__ == "__main__":
    main()
