"""memproxy against LiteLLM's own proxy, side by side, on the same local stub.

    python bench/vs_litellm.py [-n 300] [--rounds 40] [--reps 3] [--leak 10000]
                               [--litellm-venv DIR] [--skip-litellm]
    python bench/vs_litellm.py --rss-only [--leak 10000]   # the RSS check alone

One process tree, one run, ratios measured in that run:

- the stub upstream runs in its own process (so its work does not share a GIL
  with the load generator); memproxy (`memproxy serve`) and LiteLLM's proxy
  (`litellm --config`) both point at it. LiteLLM is not a dependency of
  memproxy: it lives in its own venv (`--litellm-venv`), installed there if
  missing with the newest `litellm[proxy]` on the index whose extra installs
  (a loud note says when an older release had to be taken). The version
  measured is printed;
- added latency p50 / p99 against calling the stub directly, at concurrency 1,
  16 and 64, on two paths of a conversation of `--rounds` prior rounds:
  *continue* (each request continues its worker's conversation with our
  answer and a new user turn, as a chat app does) and *resend* (the same
  request sent again and again, as a "regenerate" button does). Targets:
  the stub directly, LiteLLM's proxy (pass-through), memproxy `raw`, memproxy
  `managed` with a budget well below the conversation's size;
- the targets are interleaved: each (concurrency, path) is measured in
  `--reps` rounds, every round running each target once, on fresh
  conversations, so a burst of load from elsewhere hits all targets alike;
- streaming, concurrency 1, both paths: added time to the first and to the
  last chunk;
- RSS of a separate memproxy process (`--rss-cache-sessions`): once its caches
  are full, before and after `--leak` more requests on ever new sessions, each
  of the same shape (`--rss-per-session` requests on a 10-round history), with
  its parts from /proc (anonymous, file-backed, glibc's `[heap]`, other
  anonymous maps). `--rss-only` runs this check alone.

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
# Written into the venv when an older release had to be taken: reused runs say so too.
FALLBACK_NOTE = "memproxy-bench-fallback.txt"
MAX_INSTALL_TRIES = 20
CONCURRENCY = (1, 16, 64)
PATHS = ("continue", "resend")

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
        "from proxy.stub.server import StubUpstream\n"
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
    tmp.mkdir(parents=True, exist_ok=True)
    memory: dict[str, Any] = {"database_url": f"sqlite+aiosqlite:///{tmp}/memproxy.db"}
    if cache_sessions:
        memory["cache_sessions"] = cache_sessions
    config = {"model_list": [stub_model(stub_url)], "memory": memory}
    return serve_memproxy(config, tmp, log=tmp / "memproxy.log")


def loud(message: str) -> None:
    bar = "!" * 78
    print(f"{bar}\n!! {message}\n{bar}", flush=True)


def index_versions(python: Path) -> list[str]:
    """Final litellm releases on the package index, newest first (empty if unreachable)."""
    out = subprocess.run(
        [str(python), "-m", "pip", "index", "versions", "litellm"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    for line in out.splitlines():
        if line.strip().startswith("Available versions:"):
            names = [v.strip() for v in line.split(":", 1)[1].split(",")]
            return [v for v in names if v.replace(".", "").isdigit()]
    return []


def installed_version(venv: Path) -> str:
    code = "from importlib.metadata import version; print(version('litellm'))"
    python = venv / "bin" / "python"
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def litellm_binary(venv: Path, reinstall: bool) -> tuple[Path, str] | None:
    """LiteLLM's proxy in `venv`: (binary, version), installing the newest that installs."""
    binary = venv / "bin" / "litellm"
    if not binary.exists() or reinstall:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        python = venv / "bin" / "python"
        versions = index_versions(python)
        if not versions:
            loud("the package index lists no litellm release: LiteLLM's rows are missing")
            return None
        for tries, version in enumerate(versions[:MAX_INSTALL_TRIES]):
            print(f"installing litellm[proxy]=={version} into {venv} ...", flush=True)
            pip = [str(python), "-m", "pip", "install", "-q", f"litellm[proxy]=={version}"]
            if subprocess.run(pip, check=False).returncode == 0 and binary.exists():
                if tries:
                    note = (
                        f"litellm {versions[0]} is the newest on the index, but the [proxy] "
                        f"extra of the {tries} newest releases does not install here; "
                        f"measuring {version}, the newest whose extra does"
                    )
                    (venv / FALLBACK_NOTE).write_text(note)
                break
            loud(f"litellm[proxy]=={version} does not install here: trying the next older")
        else:
            loud("no litellm[proxy] release installs here: LiteLLM's rows are missing")
            return None
    version = installed_version(venv)
    note = venv / FALLBACK_NOTE
    if note.exists():
        loud(note.read_text())
    else:
        newest = index_versions(venv / "bin" / "python")
        if newest and newest[0] != version:
            loud(
                f"measuring litellm {version} from {venv}; the index has {newest[0]} "
                "(run with --reinstall-litellm to try it)"
            )
    return binary, version


def start_litellm(binary: Path, stub_url: str, tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    # No key on either side (memproxy runs without `server.api_keys` here): recent
    # releases refuse to start keyless unless told this is local development.
    config = {
        "model_list": [stub_model(stub_url)],
        "general_settings": {"dangerously_permit_weak_or_unset_master_key": True},
    }
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
    path: str = "continue",
    stream: bool = False,
    warmup: int = 3,
) -> tuple[list[float], list[float], float]:
    """`concurrency` workers, each on its own conversation; returns (first, total) ms, wall s.

    `continue`: each request adds our answer and a new user turn to the
    worker's conversation. `resend`: each worker sends one request again and
    again (a regenerate). The first `warmup` requests of each worker (the
    first one ingests the whole history: a new session) are not measured;
    measuring starts when every worker is done warming up.
    """
    first: list[float] = []
    total: list[float] = []
    # Servers drop a connection idle for 5 s (uvicorn's default), as long as a slow
    # warm-up can keep a worker at the barrier: let the client drop it first.
    limits = httpx.Limits(
        max_connections=concurrency, max_keepalive_connections=concurrency, keepalive_expiry=2.0
    )
    barrier = asyncio.Barrier(concurrency)
    started: list[float] = []

    async def worker(client: httpx.AsyncClient, index: int) -> None:
        history = make_history(index)
        if path == "resend":
            history.append({"role": "user", "content": f"Draft that again, worker {index}."})
        for i in range(warmup + per_worker):
            if i == warmup and await barrier.wait() == 0:
                started.append(time.perf_counter())
            if path == "continue":
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
            if path == "continue":
                history.append({"role": "assistant", "content": answer})

    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(worker(client, w) for w in range(concurrency)))
        wall = time.perf_counter() - started[0]
    return first, total, wall


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


class Conversations:
    """Fresh conversations for every measurement block (no block finds another's session)."""

    def __init__(self, rounds: int) -> None:
        self.rounds, self.block = rounds, 0

    def next(self) -> Callable[[int], list[dict[str, Any]]]:
        self.block += 1
        offset = self.block * 1000
        return lambda w: conversation(offset + w, self.rounds)


Cell = dict[str, list[float]]


def measure_latency(
    targets: list[Target], convs: Conversations, n: int, reps: int, levels: list[int]
) -> dict[tuple[str, str, int], tuple[list[float], float]]:
    """(path, target, concurrency) -> (totals ms, requests/s), targets interleaved."""
    out: dict[tuple[str, str, int], tuple[list[float], float]] = {}
    for concurrency in levels:
        per_worker = max(2, n // (concurrency * reps))
        for path in PATHS:
            for _ in range(reps):
                for target in targets:
                    _, total, wall = asyncio.run(
                        run_load(target, concurrency, per_worker, convs.next(), path=path)
                    )
                    key = (path, target.name, concurrency)
                    done, spent = out.get(key, ([], 0.0))
                    out[key] = ([*done, *total], spent + wall)
    return {k: (v, len(v) / wall) for k, (v, wall) in out.items()}


def report_latency(
    cells: dict[tuple[str, str, int], tuple[list[float], float]],
    targets: list[Target],
    rounds: int,
    levels: list[int],
) -> None:
    print(
        f"\nAdded latency against the stub called directly ({os.cpu_count()} CPUs, "
        f"non-streaming, {rounds}-round conversations; continue: each request continues "
        "its worker's conversation; resend: the same request again, as a regenerate)"
    )
    print("| path | target | concurrency | p50 ms | p99 ms | added p50 ms | added p99 ms | req/s |")
    print("|---|---|---|---|---|---|---|---|")
    added: dict[tuple[str, str, int], float] = {}
    for path in PATHS:
        for concurrency in levels:
            direct = cells[(path, "direct", concurrency)][0]
            d50, d99 = statistics.median(direct), pct(direct, 0.99)
            for target in targets:
                if (path, target.name, concurrency) not in cells:
                    continue
                total, rate = cells[(path, target.name, concurrency)]
                p50, p99 = statistics.median(total), pct(total, 0.99)
                added[(path, target.name, concurrency)] = p50 - d50
                print(
                    f"| {path} | {target.name} | {concurrency} | {p50:.2f} | {p99:.2f} "
                    f"| {p50 - d50:.2f} | {p99 - d99:.2f} | {rate:.0f} |"
                )
    print("\nadded p50, memproxy / LiteLLM proxy (target: managed <= 0.8 at c=1 and c=16)")
    print("| path | concurrency | managed / litellm | raw / litellm |")
    print("|---|---|---|---|")
    for path in PATHS:
        for concurrency in levels:
            litellm = added.get((path, "litellm proxy", concurrency))
            managed = added.get((path, "memproxy managed", concurrency))
            raw = added.get((path, "memproxy raw", concurrency))
            if litellm and litellm > 0 and managed is not None and raw is not None:
                print(f"| {path} | {concurrency} | {managed / litellm:.2f} | {raw / litellm:.2f} |")


def measure_stream(
    targets: list[Target], convs: Conversations, n: int, reps: int
) -> dict[tuple[str, str], tuple[list[float], list[float]]]:
    out: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    per_block = max(10, n // reps)
    for path in PATHS:
        for _ in range(reps):
            for target in targets:
                first, total, _ = asyncio.run(
                    run_load(target, 1, per_block, convs.next(), path=path, stream=True)
                )
                f, t = out.get((path, target.name), ([], []))
                out[(path, target.name)] = ([*f, *first], [*t, *total])
    return out


def report_stream(
    cells: dict[tuple[str, str], tuple[list[float], list[float]]], targets: list[Target]
) -> None:
    print("\nStreaming (concurrency 1): time to the first and last chunk (target: first <= 5 ms)")
    print("| path | target | first p50 ms | last p50 ms | added first p50 ms | added last p50 ms |")
    print("|---|---|---|---|---|---|")
    for path in PATHS:
        d_first, d_last = (statistics.median(v) for v in cells[(path, "direct")])
        for target in targets:
            if (path, target.name) not in cells:
                continue
            first, total = cells[(path, target.name)]
            f50, l50 = statistics.median(first), statistics.median(total)
            print(
                f"| {path} | {target.name} | {f50:.2f} | {l50:.2f} | {f50 - d_first:.2f} "
                f"| {l50 - d_last:.2f} |"
            )


def proc_memory(pid: int) -> dict[str, int]:
    """Memory figures of `pid` in KiB, from /proc (Linux): RSS and its parts.

    rss, peak: VmRSS, VmHWM; anon, file: RssAnon, RssFile; heap: the RSS of the
    `[heap]` mapping (glibc's main arena, grown by brk); anon_maps: the RSS of
    the other anonymous mappings (glibc's thread arenas, CPython's obmalloc
    arenas, large blocks); threads: the thread count.
    """
    status = dict(
        line.split(":", 1)
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if ":" in line
    )
    out = {
        "rss": int(status["VmRSS"].split()[0]),
        "peak": int(status["VmHWM"].split()[0]),
        "anon": int(status["RssAnon"].split()[0]),
        "file": int(status["RssFile"].split()[0]),
        "threads": int(status["Threads"]),
        "heap": 0,
        "anon_maps": 0,
    }
    kind = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and ":" not in head[0]:  # a mapping's first line
            name = head[5] if len(head) > 5 else ""
            kind = "heap" if name == "[heap]" else "anon_maps" if not name else ""
        elif kind and line.startswith("Rss:"):
            out[kind] += int(head[1])
    return out


def memory_line(label: str, figures: dict[str, int]) -> str:
    mib = {k: v / 1024 for k, v in figures.items() if k != "threads"}
    return (
        f"{label}: RSS {mib['rss']:.1f} MiB (anon {mib['anon']:.1f}, file {mib['file']:.1f}; "
        f"[heap] {mib['heap']:.1f}, other anon maps {mib['anon_maps']:.1f}), "
        f"threads {figures['threads']}"
    )


def report_rss(
    stub_url: str,
    tmp: Path,
    cache_sessions: int,
    total_requests: int,
    budget: int,
    per_session: int = 5,
    samples: int = 5,
) -> None:
    """RSS of a fresh memproxy, once its caches are full and after `total_requests` more.

    Steady state: every session, in the fill and after it, is new and of the same
    shape (a 10-round history, then `per_session` requests continuing it), so the
    work per request does not grow and a growth of RSS is memory kept, not bigger
    requests. The fill runs more sessions than `cache_sessions`, so the per-session
    caches are full (and evicting) before the first figure.
    """
    proc, base = start_memproxy(stub_url, tmp / "rss", cache_sessions)
    try:
        headers = {"X-Memory-Mode": "managed", "X-Memory-Budget": str(budget)}
        target = Target("managed", f"{base}/v1/chat/completions", "stub", headers)
        workers = 16
        batch = 0

        def fresh(worker: int) -> list[dict[str, Any]]:
            return conversation(worker + 100_000 + batch * workers, 10)

        def sessions(count: int) -> None:
            nonlocal batch
            for _ in range(count):
                asyncio.run(run_load(target, workers, per_session - 1, fresh, warmup=1))
                batch += 1

        start = time.perf_counter()
        sessions(-(-int(cache_sessions * 1.2) // workers))
        filled = proc_memory(proc.pid)
        fill_batches = batch
        print(
            f"\nRSS of memproxy (managed, cache_sessions {cache_sessions}, {per_session} "
            f"requests per session, {workers} sessions at a time)",
            flush=True,
        )
        print(
            memory_line(
                f"filled ({fill_batches * workers} sessions, "
                f"{fill_batches * workers * per_session} requests, "
                f"{time.perf_counter() - start:.0f} s)",
                filled,
            ),
            flush=True,
        )
        per_batch = workers * per_session
        batches = max(1, -(-total_requests // per_batch))
        marks = {batches * k // samples for k in range(1, samples + 1)}
        for done in range(1, batches + 1):
            sessions(1)
            if done in marks:
                print(
                    memory_line(f"+{done * per_batch} requests", proc_memory(proc.pid)), flush=True
                )
        after = proc_memory(proc.pid)
        done_requests = batches * per_batch
        print(
            f"RSS filled {filled['rss'] / 1024:.1f} MiB, after {done_requests} more requests "
            f"{after['rss'] / 1024:.1f} MiB: ratio {after['rss'] / filled['rss']:.3f} "
            f"(target <= 1.1); peak {after['peak'] / 1024:.1f} MiB; anonymous (heaps) "
            f"{filled['anon'] / 1024:.1f} -> {after['anon'] / 1024:.1f} MiB "
            f"(ratio {after['anon'] / filled['anon']:.3f}); "
            f"{time.perf_counter() - start:.0f} s in all",
            flush=True,
        )
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def rss_only(args: argparse.Namespace) -> None:
    """`--rss-only`: the stub and the RSS check, nothing else (no LiteLLM, no latency)."""
    load = os.getloadavg()
    print(f"load average at start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}", flush=True)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        stub, stub_url = start_stub(tmp / "stub.log")
        try:
            report_rss(
                stub_url,
                tmp,
                args.rss_cache_sessions,
                args.leak,
                args.budget,
                per_session=args.rss_per_session,
            )
        finally:
            stub.terminate()
            stub.wait(timeout=20)
    end = os.getloadavg()
    print(f"load average at the end {end[0]:.2f} / {end[1]:.2f} / {end[2]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("-n", type=int, default=300, help="requests per (target, path, c)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved rounds per cell")
    parser.add_argument("--rounds", type=int, default=40, help="prior rounds of each chat")
    parser.add_argument("--budget", type=int, default=1500, help="managed-mode budget (tokens)")
    parser.add_argument("--leak", type=int, default=10_000, help="requests for the RSS check")
    parser.add_argument("--rss-cache-sessions", type=int, default=500)
    parser.add_argument(
        "--rss-per-session", type=int, default=5, help="requests per session in the RSS check"
    )
    parser.add_argument(
        "--rss-only", action="store_true", help="only the RSS check (no latency, no LiteLLM)"
    )
    parser.add_argument("--litellm-venv", type=Path, default=LITELLM_VENV)
    parser.add_argument("--reinstall-litellm", action="store_true")
    parser.add_argument("--skip-litellm", action="store_true")
    parser.add_argument("--skip-stream", action="store_true")
    parser.add_argument(
        "--concurrency",
        type=int,
        action="append",
        help=f"concurrency levels to measure (repeatable; default {CONCURRENCY})",
    )
    parser.add_argument(
        "--cache-sessions",
        type=int,
        default=None,
        help="memory.cache_sessions of the proxy (default: the proxy's own)",
    )
    args = parser.parse_args()
    if args.rss_only:
        rss_only(args)
        return

    managed = {"X-Memory-Mode": "managed", "X-Memory-Budget": str(args.budget)}
    convs = Conversations(args.rounds)
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        stub, stub_url = start_stub(tmp / "stub.log")
        procs: list[subprocess.Popen[bytes]] = [stub]
        try:
            mp, mp_base = start_memproxy(stub_url, tmp / "latency", args.cache_sessions)
            procs.append(mp)
            chat = f"{mp_base}/v1/chat/completions"
            targets = [Target("direct", f"{stub_url}/chat/completions", "stub-model", {})]
            found = (
                None
                if args.skip_litellm
                else litellm_binary(args.litellm_venv, args.reinstall_litellm)
            )
            if found is not None:
                binary, version = found
                lp, lp_base = start_litellm(binary, stub_url, tmp)
                procs.append(lp)
                targets.append(
                    Target(
                        "litellm proxy",
                        f"{lp_base}/v1/chat/completions",
                        "stub",
                        {"Authorization": "Bearer none"},
                    )
                )
                print(f"LiteLLM proxy measured: litellm {version} ({binary})")
            targets += [
                Target("memproxy raw", chat, "stub", {"X-Memory-Mode": "raw"}),
                Target("memproxy managed", chat, "stub", managed),
            ]
            print(
                f"load average at start {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}, "
                f"{os.cpu_count()} CPUs; budget {args.budget}, n {args.n}, reps {args.reps}",
                flush=True,
            )
            levels = args.concurrency or list(CONCURRENCY)
            cells = measure_latency(targets, convs, args.n, args.reps, levels)
            report_latency(cells, targets, args.rounds, levels)
            if not args.skip_stream:
                streams = measure_stream(targets, convs, max(20, args.n // 3), args.reps)
                report_stream(streams, targets)
            if args.leak:
                report_rss(stub_url, tmp, args.rss_cache_sessions, args.leak, args.budget)
            end = os.getloadavg()
            print(f"\nload average at the end {end[0]:.2f} / {end[1]:.2f} / {end[2]:.2f}")
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()


if __name__ == "__main__":
    main()
