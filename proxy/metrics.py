"""Prometheus metrics at `/metrics`, in the text exposition format.

A handful of counters and one histogram, kept in process memory and updated
once per finished request (off the response path); no client library needed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

# Request latency buckets in seconds (proxy work + upstream).
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def _labels(**labels: str) -> str:
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}" if inner else ""


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@dataclass
class _Histogram:
    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    total: float = 0.0
    n: int = 0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(BUCKETS, seconds)] += 1
        self.total += seconds
        self.n += 1


class Metrics:
    def __init__(self) -> None:
        self.requests: defaultdict[tuple[str, str], int] = defaultdict(int)
        self.raw_tokens: defaultdict[str, int] = defaultdict(int)
        self.forwarded_tokens: defaultdict[str, int] = defaultdict(int)
        self.cost: defaultdict[str, float] = defaultdict(float)
        self.upstream_errors: defaultdict[str, int] = defaultdict(int)
        self.latency: defaultdict[str, _Histogram] = defaultdict(_Histogram)
        # Prompt caching, as the provider reported it (memory.cache).
        self.cached_tokens: defaultdict[str, int] = defaultdict(int)
        self.cache_write_tokens: defaultdict[str, int] = defaultdict(int)
        self.input_cost: defaultdict[str, float] = defaultdict(float)
        self.cache_saved: defaultdict[str, float] = defaultdict(float)

    def observe_cache(self, mode: str, bill: Mapping[str, object]) -> None:
        """One request's cache usage and its price (the record's `cache` block)."""
        cached, written = bill.get("cached_tokens"), bill.get("written_tokens")
        self.cached_tokens[mode] += cached if isinstance(cached, int) else 0
        self.cache_write_tokens[mode] += written if isinstance(written, int) else 0
        cost, saved = bill.get("input_cost"), bill.get("saved")
        if isinstance(cost, int | float):
            self.input_cost[mode] += cost
        if isinstance(saved, int | float):
            self.cache_saved[mode] += saved

    def observe(
        self,
        *,
        mode: str,
        status: int,
        raw_tokens: int,
        forwarded_tokens: int,
        cost: float | None,
        seconds: float,
        upstream_error: bool,
    ) -> None:
        self.requests[(mode, str(status))] += 1
        self.raw_tokens[mode] += raw_tokens
        self.forwarded_tokens[mode] += forwarded_tokens
        if cost:
            self.cost[mode] += cost
        if upstream_error:
            self.upstream_errors[str(status)] += 1
        self.latency[mode].observe(seconds)

    def render(self) -> str:
        out: list[str] = []

        def family(name: str, kind: str, help_text: str) -> None:
            out.append(f"# HELP {name} {help_text}")
            out.append(f"# TYPE {name} {kind}")

        family("memproxy_requests_total", "counter", "Chat completion requests by mode and status.")
        for (mode, status), n in sorted(self.requests.items()):
            out.append(f"memproxy_requests_total{_labels(mode=mode, status=status)} {n}")
        family("memproxy_raw_tokens_total", "counter", "Tokens of the messages clients sent.")
        for mode, n in sorted(self.raw_tokens.items()):
            out.append(f"memproxy_raw_tokens_total{_labels(mode=mode)} {n}")
        family("memproxy_forwarded_tokens_total", "counter", "Tokens forwarded upstream.")
        for mode, n in sorted(self.forwarded_tokens.items()):
            out.append(f"memproxy_forwarded_tokens_total{_labels(mode=mode)} {n}")
        family("memproxy_saved_tokens_total", "counter", "Raw minus forwarded tokens.")
        for mode in sorted(self.raw_tokens):
            saved = self.raw_tokens[mode] - self.forwarded_tokens[mode]
            out.append(f"memproxy_saved_tokens_total{_labels(mode=mode)} {saved}")
        family("memproxy_cost_usd_total", "counter", "Provider cost reported by litellm.")
        for mode, usd in sorted(self.cost.items()):
            out.append(f"memproxy_cost_usd_total{_labels(mode=mode)} {usd:.6f}")
        for name, values, help_text in (
            ("memproxy_cached_tokens_total", self.cached_tokens,
             "Input tokens the provider read from its prompt cache."),
            ("memproxy_cache_write_tokens_total", self.cache_write_tokens,
             "Input tokens the provider wrote to its prompt cache."),
        ):  # fmt: skip
            family(name, "counter", help_text)
            for mode, n in sorted(values.items()):
                out.append(f"{name}{_labels(mode=mode)} {n}")
        for name, costs, help_text in (
            ("memproxy_input_cost_usd_total", self.input_cost,
             "Input cost with the provider's cache prices."),
            ("memproxy_cache_saved_usd_total", self.cache_saved,
             "Input cost the prompt cache saved (uncached minus billed)."),
        ):  # fmt: skip
            family(name, "counter", help_text)
            for mode, usd in sorted(costs.items()):
                out.append(f"{name}{_labels(mode=mode)} {usd:.6f}")
        family("memproxy_upstream_errors_total", "counter", "Upstream failures by status.")
        for status, n in sorted(self.upstream_errors.items()):
            out.append(f"memproxy_upstream_errors_total{_labels(status=status)} {n}")
        family("memproxy_request_seconds", "histogram", "Request latency (proxy + upstream).")
        for mode, hist in sorted(self.latency.items()):
            cumulative = 0
            for bound, count in zip((*BUCKETS, float("inf")), hist.counts, strict=True):
                cumulative += count
                le = "+Inf" if bound == float("inf") else repr(bound)
                out.append(
                    f"memproxy_request_seconds_bucket{_labels(mode=mode, le=le)} {cumulative}"
                )
            out.append(f"memproxy_request_seconds_sum{_labels(mode=mode)} {hist.total:.6f}")
            out.append(f"memproxy_request_seconds_count{_labels(mode=mode)} {hist.n}")
        return "\n".join(out) + "\n"


# `LongTermMemory.stats()` key -> (metric, type, help).
_LONG_TERM = {
    "queue_depth": (
        "memproxy_long_term_queue_depth", "gauge", "Consolidation jobs waiting in the queue."
    ),
    "processed": (
        "memproxy_long_term_consolidated_total", "counter", "Consolidation jobs merged."
    ),
    "failed": (
        "memproxy_long_term_failed_total", "counter",
        "Consolidation jobs that failed (logged; chat unaffected).",
    ),
    "dropped": (
        "memproxy_long_term_dropped_total", "counter", "Consolidation jobs a full queue refused."
    ),
    "embedding_failures": (
        "memproxy_long_term_embedding_failures_total", "counter",
        "Embedding calls that failed or timed out (retrieval stayed lexical).",
    ),
}  # fmt: skip


def render_long_term(stats: Mapping[str, int]) -> str:
    """The long-term memory queue's figures, in the exposition format."""
    out: list[str] = []
    for key, (name, kind, help_text) in _LONG_TERM.items():
        out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", f"{name} {stats[key]}"]
    return "\n".join(out) + "\n"
