"""Where memproxy's CPU goes on one request path: cProfile of `memproxy serve`.

    python bench/profile_path.py [--path continue|resend] [--mode managed|raw]
                                 [-n 200] [--rounds 40] [--stream] [--top 40]

Starts the stub upstream (a subprocess) and `memproxy serve` under cProfile,
warms a conversation of `--rounds` prior rounds up, then sends `-n` requests
one at a time on the chosen path (see `bench/vs_litellm.py`), stops the server
(SIGINT: the profile is written on exit) and prints the functions with the
most own and cumulative time, plus the proxy's CPU time per request from
/proc, which moves far less with the machine's load than latency does, in all
and by thread (the event loop; the default executor, where litellm builds each
request; aiosqlite's threads).
A benchmark tool, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pstats
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import SERVE_ENV, free_port, stub_model, wait_http  # noqa: E402
from bench.vs_litellm import Target, conversation, run_load, start_stub  # noqa: E402


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Run in `memproxy serve` first: each thread named (Linux) by what runs in it, so
# that /proc shows where the CPU goes: SQLite (aiosqlite's threads, the GIL
# released while a statement runs), the default executor (litellm's synchronous
# request building runs there) and the event loop (the main thread).
THREAD_NAMES = """
import ctypes, threading
try:
    _prctl = ctypes.CDLL(None).prctl
except (OSError, AttributeError):
    _prctl = None
_bootstrap = threading.Thread._bootstrap_inner
def _named(self):
    target = getattr(self, "_target", None)
    module = getattr(target, "__module__", None) or type(self).__module__
    role = "sqlite" if "aiosqlite" in module else "executor" if "concurrent" in module else "other"
    if _prctl is not None:
        _prctl(15, role.encode(), 0, 0, 0)
    _bootstrap(self)
threading.Thread._bootstrap_inner = _named
"""


def thread_seconds(pid: int) -> dict[str, float]:
    """CPU seconds so far per thread role (the main thread: "event loop")."""
    out: dict[str, float] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            comm = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended
            continue
        role = "event loop" if tid == str(pid) else comm
        ticks = int(fields[11]) + int(fields[12])
        out[role] = out.get(role, 0.0) + ticks / os.sysconf("SC_CLK_TCK")
    return out


_LINE = re.compile(r":\d+\)$")


def report_samples(path: Path, requests: int, top: int) -> None:
    """py-spy's raw stacks: own and inclusive samples per function, per request."""
    own: dict[str, int] = {}
    inclusive: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        # The thread's name first; a function's lines are folded into one entry.
        frames = [_LINE.sub(")", f.strip()) for f in stack.split(";")][1:]
        total += count
        if frames:
            own[frames[-1]] = own.get(frames[-1], 0) + count
        for frame in set(frames):
            inclusive[frame] = inclusive.get(frame, 0) + count
    print(f"{total} samples (whichever thread holds the GIL), {total / requests:.1f} per request")
    for title, table in (("own", own), ("inclusive", inclusive)):
        print(f"\n{title} samples, share of all")
        for frame, count in sorted(table.items(), key=lambda kv: -kv[1])[:top]:
            print(f"{count / total:6.1%}  {frame[:150]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--path", default="continue", choices=["continue", "resend"])
    parser.add_argument("--mode", default="managed", choices=["managed", "raw"])
    parser.add_argument("-n", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument(
        "--out", type=Path, default=None, help="keep the .prof file (py-spy: the raw stacks) here"
    )
    parser.add_argument("--no-profile", action="store_true", help="CPU per request only")
    parser.add_argument(
        "--py-spy",
        action="store_true",
        help="sample every thread with py-spy instead of cProfile (little overhead)",
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        stub, stub_url = start_stub(tmp / "stub.log")
        prof = args.out or tmp / "serve.prof"
        config = {
            "model_list": [stub_model(stub_url)],
            "memory": {"database_url": f"sqlite+aiosqlite:///{tmp}/memproxy.db"},
        }
        (tmp / "memproxy.yaml").write_text(yaml.safe_dump(config))
        port = free_port()
        # The event loop's thread only, on CPU time, between the two signals: start-up,
        # warm-up and time spent waiting (or preempted on a busy machine) stay out.
        code = THREAD_NAMES + (
            "import cProfile, signal, sys, time\n"
            "from proxy.cli import main\n"
            "prof = cProfile.Profile(time.thread_time)\n"
            "signal.signal(signal.SIGUSR1, lambda *_: prof.enable())\n"
            "def stop(*_):\n"
            "    prof.disable()\n"
            f"    prof.dump_stats({str(prof)!r})\n"
            "signal.signal(signal.SIGUSR2, stop)\n"
            "sys.exit(main(sys.argv[1:]))\n"
        )
        cmd = [sys.executable, "-c", code, "serve"]
        if args.py_spy or args.no_profile:
            run = "import sys\nfrom proxy.cli import main\nsys.exit(main(sys.argv[1:]))\n"
            cmd = [sys.executable, "-c", THREAD_NAMES + run, "serve"]
        cmd += [
            "--config",
            str(tmp / "memproxy.yaml"),
            "--port",
            str(port),
            "--log-level",
            "warning",
        ]
        proc = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, **SERVE_ENV})
        base = f"http://127.0.0.1:{port}"
        try:
            wait_http(f"{base}/health", proc, "memproxy serve")
            headers = {"X-Memory-Mode": args.mode, "X-Memory-Budget": str(args.budget)}
            target = Target(args.mode, f"{base}/v1/chat/completions", "stub", headers)

            def history(w: int) -> list[dict[str, Any]]:
                return conversation(w, args.rounds)

            asyncio.run(run_load(target, 1, 20, history, path=args.path, stream=args.stream))
            before = cpu_seconds(proc.pid)
            threads_before = thread_seconds(proc.pid)
            spy = None
            if args.py_spy:
                spy_cmd = [
                    "py-spy",
                    "record",
                    "-r",
                    "250",
                    "--format",
                    "raw",
                    "--gil",
                    "--nonblocking",
                ]
                spy = subprocess.Popen(
                    [*spy_cmd, "-o", str(tmp / "spy.txt"), "--pid", str(proc.pid)],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                time.sleep(1)
            elif not args.no_profile:
                proc.send_signal(signal.SIGUSR1)
            # The same conversation again: no new session's ingest in the measurement.
            _, total, _ = asyncio.run(
                run_load(target, 1, args.n, history, path=args.path, stream=args.stream, warmup=1)
            )
            time.sleep(0.3)  # the last request's work after its response
            cpu = (cpu_seconds(proc.pid) - before) / (args.n + 1) * 1000
            threads = {
                role: (seconds - threads_before.get(role, 0.0)) / (args.n + 1) * 1000
                for role, seconds in thread_seconds(proc.pid).items()
            }
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(timeout=60)
            elif not args.no_profile:
                proc.send_signal(signal.SIGUSR2)
                time.sleep(1)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)
            stub.terminate()
            stub.wait(timeout=20)
        total.sort()
        print(
            f"{args.mode}, {args.path}, {args.rounds} rounds, stream={args.stream}: "
            f"p50 {total[len(total) // 2]:.2f} ms; proxy CPU {cpu:.2f} ms per request"
            + ("" if args.no_profile or args.py_spy else " (under cProfile)")
        )
        print(
            "  by thread: "
            + ", ".join(f"{role} {ms:.2f}" for role, ms in sorted(threads.items()) if ms >= 0.005)
        )
        if args.py_spy:
            report_samples(tmp / "spy.txt", args.n + 1, args.top)
            if args.out:
                args.out.write_bytes((tmp / "spy.txt").read_bytes())
        elif not args.no_profile:
            stats = pstats.Stats(str(prof))
            total_s = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]
            print(f"profiled event-loop CPU: {total_s / (args.n + 1) * 1000:.2f} ms per request")
            stats.sort_stats("tottime").print_stats(args.top)
            stats.sort_stats("cumulative").print_stats(args.top)


if __name__ == "__main__":
    main()
