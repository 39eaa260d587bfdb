"""What a request record holds: built from a finished request, JSON-ready."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.types import AssembledContext


@dataclass(slots=True)
class Outcome:
    """How the upstream call ended."""

    status: int
    answer: dict[str, Any] | None = None
    response: dict[str, Any] | None = None
    error: str | None = None
    usage: dict[str, Any] | None = None
    cost: float | None = None
    upstream_ms: float | None = None
    cost_source: Any = None  # the provider response, priced off the response path
    cost_usage: tuple[str, dict[str, Any]] | None = None  # (model name, usage) of a stream
    extra: dict[str, Any] = field(default_factory=dict)
    degraded: str | None = None  # the answer was not stored: why (memory.on_store_error: open)


def context_record(ctx: AssembledContext | None) -> dict[str, Any] | None:
    if ctx is None:
        return None
    return {
        "tokens": ctx.tokens,
        "budget": ctx.budget,
        "over_budget": ctx.over_budget,
        "passthrough": ctx.passthrough,
        "sections": [{"name": s.name, "tokens": s.tokens, "count": s.count} for s in ctx.sections],
        # Plain tuples-to-dicts: dataclasses.asdict deep-copies and is ~10x slower.
        "candidates": [
            {
                "kind": c.kind,
                "ref": c.ref,
                "tokens": c.tokens,
                "score": round(c.score, 4),
                "decision": c.decision,
                "reason": c.reason,
                "section": c.section,
            }
            for c in ctx.candidates
        ],
        "messages": ctx.messages,
    }


def serialised(message: dict[str, Any]) -> str:
    """A message as a provider lays it out in the prompt: role, then content, then
    tool calls (the exact chat template differs by provider; what matters for a
    prefix is that the same message always gives the same text, in order)."""
    content = message.get("content")
    text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
    calls = message.get("tool_calls")
    if calls:
        text += json.dumps(calls, ensure_ascii=False, sort_keys=True)
    return f"<{message.get('role', '')}>{text}</>"


def common_chars(a: str, b: str) -> int:
    """Length of the longest common prefix of two texts (binary search, C compares)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def shared_prefix_tokens(
    previous: Iterable[str], texts: Sequence[str], sizes: Sequence[int], count: Callable[[str], int]
) -> int:
    """Tokens at the start of a prompt (its serialised messages `texts`, of `sizes`
    tokens) that repeat the prompt `previous`: whole equal messages, then the
    common leading text of the first that differs."""
    same = 0
    for i, (prior, text) in enumerate(zip(previous, texts, strict=False)):
        if prior == text:
            same += sizes[i]
            continue
        same += count(text[: common_chars(prior, text)])
        break
    return same


def prefix_share(
    previous: list[dict[str, Any]] | None,
    current: list[dict[str, Any]],
    count: Callable[[str], int],
) -> float:
    """Share of `current`'s tokens that are a byte-identical prefix of `previous`.

    Providers discount a repeated prompt prefix, counted in tokens of the
    serialised prompt (OpenAI: the longest matching prefix); this measures how
    much of each request could be served from that cache. Whole matching
    messages are counted with `count` (cached per text); in the first message
    that differs, the common leading text is counted too.
    """
    if not previous or not current:
        return 0.0
    texts = [serialised(m) for m in current]
    sizes = [count(t) for t in texts]
    total = sum(sizes)
    if not total:
        return 0.0
    same = shared_prefix_tokens((serialised(m) for m in previous), texts, sizes, count)
    return min(1.0, same / total)
