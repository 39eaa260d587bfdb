"""memproxy against LiteLLM's own proxy, side by side, on the same local stub.

    python bench/vs_litellm.py [-n 400] [--rounds 40] [--leak 10000] [--skip-litellm]

One process tree, one run, ratios measured in that run:

- the stub upstream runs in its own process (so its work does not share a GIL
  with the load generator); memproxy (`memproxy serve`) and LiteLLM's proxy
  (`litellm --config`, installed in a separate venv under ~/.cache if missing:
  it is not a dependency of memproxy) both point at it;
- added latency p50 / p99 against calling the stub directly, at concurrency 1
  and 16: LiteLLM proxy pass-through, memproxy `raw`, memproxy `managed` on a
  conversation of `--rounds` prior rounds with a budget well below its size
  (each request continues its own conversation, as a chat app does);
- streaming: added time to the first and to the last chunk (concurrency 1);
- throughput (requests/s) of managed mode at concurrency 16 and 64 on distinct
  sessions; peak RSS; RSS after `--leak` requests against after a tenth of them.

The load generator is httpx in this process; on a 2-core machine it competes
with the servers for CPU, so absolute figures are upper bounds and the ratios
(measured under the same conditions) are what to compare. A benchmark, not a
test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, serve_memproxy, stub_model, wait_http  # noqa: E402

LITELLM_VENV = Path.home() / ".cache" / "memproxy-bench" / "litellm-proxy-venv"
# The newest litellm releases pin a `litellm-proxy` package that some mirrors
# lack; try our own version first, then the newest whose proxy extra resolves
# everywhere we have tried.
LITELLM_VERSIONS = ("", "==1.100.5")

TOPICS = (
    "the deployment checklist",
    "the budget for the offsite",
    "the invoice numbering scheme",
    "the migration to PostgreSQL 16",
    "the on-call rotation for December",
    "the vendor contract renewal",
)


def start_stub(log: Path) -> tuple[subprocess.Popen[bytes], str]:
    code = (
        "import sys\n"
        "from proxy.stub_upstream import StubUpstream\n"
        "stub = StubUpstream().start()\n"
        "print(stub.url, flush=True)\n"
        "sys.stdin.read()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log.open("ab"),
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().decode().strip()
    if not url:
        raise SystemExit("stub upstream did not start")
    return proc, url


def start_memproxy(
    stub_url: str, tmp: Path, cache_sessions: int | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    memory: dict[str, Any] = {"database_url": f"sqlite+aiosqlite:///{tmp}/memproxy.db"}
    if cache_sessions is not None:
        memory["cache_sessions"] = cache_sessions
    config = {"model_list": [stub_model(stub_url)], "memory": memory}
    return serve_memproxy(config, tmp, log=tmp / "memproxy.log")


def litellm_binary() -> Path | None:
    binary = LITELLM_VENV / "bin" / "litellm"
    if binary.exists():
        return binary
    from importlib.metadata import version

    ours = version("litellm")
    subprocess.run([sys.executable, "-m", "venv", str(LITELLM_VENV)], check=True)
    pip = [str(LITELLM_VENV / "bin" / "python"), "-m", "pip", "install", "-q"]
    for pin in LITELLM_VERSIONS:
        spec = f"litellm[proxy]{pin or '==' + ours}"
        print(f"installing {spec} into {LITELLM_VENV} ...", flush=True)
        if subprocess.run([*pip, spec], check=False).returncode == 0 and binary.exists():
            return binary
    return None


def start_litellm(binary: Path, stub_url: str, tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    config = {"model_list": [stub_model(stub_url)]}
    path = tmp / "litellm.yaml"
    path.write_text(yaml.safe_dump(config))
    port = free_port()
    proc = subprocess.Popen(
        [str(binary), "--config", str(path), "--port", str(port), "--host", "127.0.0.1"],
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"},
        stdout=(tmp / "litellm.log").open("ab"),
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    wait_http(f"{base}/health/liveliness", proc, "litellm proxy")
    return proc, base


def conversation(worker: int, rounds: int) -> list[dict[str, Any]]:
    """A realistic-looking chat of `rounds` prior rounds, with a few requirements."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a careful project assistant."},
        {
            "role": "user",
            "content": f"I'm worker {worker}. Always answer in bullet points, and never "
            f"schedule anything on Fridays. Our budget cap is ${1000 + worker * 37}.",
        },
        {"role": "assistant", "content": "Understood: bullets, no Fridays, budget cap noted."},
    ]
    for i in range(rounds - 1):
        topic = TOPICS[(i + worker) % len(TOPICS)]
        messages.append(
            {
                "role": "user",
                "content": f"Round {i}: let's talk about {topic}. What should we check first, "
                f"given what we decided on {2 + i % 27} November? Keep the ticket OPS-{4000 + i} "
                "in mind and list the open questions.",
            }
        )
        messages.append(
            {
                "role": "assistant",
                "content": f"- For {topic}, start with owners and deadlines.\n- Ticket "
                f"OPS-{4000 + i} stays open until the review.\n- Open questions: scope, cost, "
                "and who signs off.",
            }
        )
    return messages


class Target:
    """Where requests go: a base URL, a path, a model name and extra headers."""

    def __init__(self, name: str, url: str, model: str, headers: dict[str, str]) -> None:
        self.name, self.url, self.model, self.headers = name, url, model, headers


async def run_load(
    target: Target,
    concurrency: int,
    per_worker: int,
    make_history: Callable[[int], list[dict[str, Any]]],
    *,
    stream: bool = False,
    warmup: int = 3,
) -> tuple[list[float], list[float], float]:
    """Each worker continues its own conversation; returns (first, total) ms and wall s.

    The first `warmup` requests of each worker (the first one ingests the whole
    history: a new session) are not measured; measuring starts when every
    worker is done warming up.
    """
    first: list[float] = []
    total: list[float] = []
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    barrier = asyncio.Barrier(concurrency)
    started: list[float] = []

    async def worker(client: httpx.AsyncClient, index: int) -> None:
        history = make_history(index)
        for i in range(warmup + per_worker):
            if i == warmup and await barrier.wait() == 0:
                started.append(time.perf_counter())
            history.append({"role": "user", "content": f"Next step {i} for worker {index}?"})
            body: dict[str, Any] = {"model": target.model, "messages": history}
            start = time.perf_counter()
            if stream:
                t_first = None
                pieces: list[str] = []
                body["stream"] = True
                async with client.stream(
                    "POST", target.url, json=body, headers=target.headers
                ) as resp:
                    resp.raise_for_status()
                    async for line in resp.aiter_lines():
                        if line.startswith("data: ") and line != "data: [DONE]":
                            t_first = t_first or time.perf_counter()
                            for choice in json.loads(line[6:]).get("choices") or ():
                                pieces.append((choice.get("delta") or {}).get("content") or "")
                if i >= warmup:
                    first.append(((t_first or time.perf_counter()) - start) * 1000)
                # The next round resends the answer exactly as streamed, as a chat app does.
                answer = "".join(pieces)
            else:
                resp = await client.post(target.url, json=body, headers=target.headers)
                resp.raise_for_status()
                answer = resp.json()["choices"][0]["message"].get("content") or ""
            if i >= warmup:
                total.append((time.perf_counter() - start) * 1000)
            history.append({"role": "assistant", "content": answer})

    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(worker(client, w) for w in range(concurrency)))
        wall = time.perf_counter() - started[0]
    return first, total, wall


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rss_kib(pid: int) -> tuple[int, int]:
    """(current RSS, peak RSS) in KiB, from /proc (Linux)."""
    fields = dict(
        line.split(":", 1)
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if ":" in line
    )
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-n", type=int, default=400, help="requests per latency measurement")
    parser.add_argument("--rounds", type=int, default=40, help="prior rounds in managed mode")
    parser.add_argument("--budget", type=int, default=1500, help="managed-mode budget (tokens)")
    parser.add_argument("--leak", type=int, default=10_000, help="requests for the RSS check")
    parser.add_argument("--skip-litellm", action="store_true")
    parser.add_argument(
        "--cache-sessions",
        type=int,
        default=None,
        help="memory.cache_sessions of the proxy (default: the proxy's own)",
    )
    args = parser.parse_args()

    short: Callable[[int], list[dict[str, Any]]] = lambda w: [  # noqa: E731
        {"role": "system", "content": "You are terse."}
    ]
    long_history: Callable[[int], list[dict[str, Any]]] = lambda w: conversation(  # noqa: E731
        w, args.rounds
    )
    managed = {"X-Memory-Mode": "managed", "X-Memory-Budget": str(args.budget)}
    rows: list[tuple[str, int, list[float], list[float]]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        stub, stub_url = start_stub(tmp / "stub.log")
        procs: list[subprocess.Popen[bytes]] = [stub]
        try:
            mp, mp_base = start_memproxy(stub_url, tmp, args.cache_sessions)
            procs.append(mp)
            targets = [
                ("direct", Target("direct", f"{stub_url}/chat/completions", "stub-model", {})),
                (
                    "memproxy raw",
                    Target(
                        "raw", f"{mp_base}/v1/chat/completions", "stub", {"X-Memory-Mode": "raw"}
                    ),
                ),
            ]
            binary = None if args.skip_litellm else litellm_binary()
            if binary is not None:
                lp, lp_base = start_litellm(binary, stub_url, tmp)
                procs.append(lp)
                targets.append(
                    (
                        "litellm proxy",
                        Target(
                            "litellm",
                            f"{lp_base}/v1/chat/completions",
                            "stub",
                            {"Authorization": "Bearer none"},
                        ),
                    )
                )
            elif not args.skip_litellm:
                print("LiteLLM proxy could not be installed: its rows are missing")
            managed_target = Target("managed", f"{mp_base}/v1/chat/completions", "stub", managed)
            for concurrency in (1, 16):
                per_worker = max(5, args.n // concurrency)
                for name, target in targets:
                    _, total, _ = asyncio.run(run_load(target, concurrency, per_worker, short))
                    rows.append((name, concurrency, total, []))
                    _, total, _ = asyncio.run(
                        run_load(target, concurrency, per_worker, long_history)
                    )
                    rows.append((f"{name}, {args.rounds}-round chat", concurrency, total, []))
                _, total, _ = asyncio.run(
                    run_load(managed_target, concurrency, per_worker, long_history)
                )
                rows.append((f"memproxy managed, {args.rounds}-round chat", concurrency, total, []))
            report_latency(rows, args.rounds)

            stream_rows = []
            for name, target in [*targets, ("memproxy managed", managed_target)]:
                first, total, _ = asyncio.run(
                    run_load(target, 1, max(20, args.n // 4), long_history, stream=True)
                )
                stream_rows.append((name, first, total))
            report_stream(stream_rows)

            print(
                "\nThroughput, memproxy managed mode, distinct sessions, "
                f"{args.rounds}-round chats, budget {args.budget}:"
            )
            for concurrency in (16, 64):
                _, total, wall = asyncio.run(
                    run_load(managed_target, concurrency, max(3, 640 // concurrency), long_history)
                )
                print(
                    f"  concurrency {concurrency}: {len(total) / wall:.0f} requests/s "
                    f"(p50 {statistics.median(total):.1f} ms)"
                )
            report_rss(mp.pid, managed_target, args.leak)
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()


def report_latency(rows: list[tuple[str, int, list[float], list[float]]], rounds: int) -> None:
    print(
        f"\nAdded latency against the stub called directly ({os.cpu_count()} CPUs, "
        "non-streaming; each request continues its worker's conversation)"
    )
    print("| target | concurrency | p50 ms | p99 ms | added p50 ms | added p99 ms |")
    print("|---|---|---|---|---|---|")
    direct: dict[tuple[bool, int], tuple[float, float]] = {}
    added: dict[tuple[str, int], float] = {}
    for name, concurrency, total, _ in rows:
        is_long = "round chat" in name
        p50, p99 = statistics.median(total), pct(total, 0.99)
        if name.startswith("direct"):
            direct[(is_long, concurrency)] = (p50, p99)
        d50, d99 = direct.get((is_long, concurrency), (0.0, 0.0))
        added[(name, concurrency)] = p50 - d50
        print(
            f"| {name} | {concurrency} | {p50:.2f} | {p99:.2f} | {p50 - d50:.2f} "
            f"| {p99 - d99:.2f} |"
        )
    for concurrency in (1, 16):
        litellm = added.get((f"litellm proxy, {rounds}-round chat", concurrency))
        ours = added.get((f"memproxy managed, {rounds}-round chat", concurrency))
        raw = added.get((f"memproxy raw, {rounds}-round chat", concurrency))
        if litellm and ours is not None and raw is not None:
            print(
                f"concurrency {concurrency}: added p50 managed / litellm = {ours / litellm:.2f}, "
                f"raw / litellm = {raw / litellm:.2f}"
            )


def report_stream(rows: list[tuple[str, list[float], list[float]]]) -> None:
    print("\nStreaming (concurrency 1): time to the first and last chunk")
    print("| target | first p50 ms | last p50 ms | added first p50 ms | added last p50 ms |")
    print("|---|---|---|---|---|")
    d_first = d_last = 0.0
    for name, first, total in rows:
        f50, l50 = statistics.median(first), statistics.median(total)
        if name == "direct":
            d_first, d_last = f50, l50
        print(f"| {name} | {f50:.2f} | {l50:.2f} | {f50 - d_first:.2f} | {l50 - d_last:.2f} |")


def report_rss(pid: int, target: Target, total_requests: int) -> None:
    workers = 16
    tenth = max(workers, total_requests // 10)
    asyncio.run(run_load(target, workers, tenth // workers, lambda w: conversation(w + 1000, 10)))
    after_tenth, _ = rss_kib(pid)
    rest = total_requests - tenth
    # New conversations in batches, so sessions and stored turns keep growing
    # the way a busy deployment's do.
    done = 0
    batch = 0

    def fresh(worker: int) -> list[dict[str, Any]]:
        return conversation(worker + 2000 + batch * workers, 10)

    while done < rest:
        per_worker = min(50, max(1, (rest - done) // workers))
        asyncio.run(run_load(target, workers, per_worker, fresh))
        done += per_worker * workers
        batch += 1
    after_all, peak = rss_kib(pid)
    print(
        f"\nRSS of memproxy: after {tenth} requests {after_tenth / 1024:.0f} MiB, after "
        f"{tenth + done} {after_all / 1024:.0f} MiB (ratio {after_all / after_tenth:.2f}); "
        f"peak {peak / 1024:.0f} MiB"
    )


if __name__ == "__main__":
    main()
