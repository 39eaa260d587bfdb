"""What a model answered, scored against a scenario's checks, and what it cost.

The context scores (`proxy.eval_scoring.score_final`) ask whether the final value
reached the model; these ask whether the model gave it back. Same normal form
(NFKC, case-folded, whitespace folded), same line rule for stale values:

- **present**: one of the check's `expect_any` phrases occurs in the answer;
- **stale**: a `stale_any` phrase occurs on a line of the answer that holds none
  of the check's `expect_any` phrases (an old value stated as current; "moved
  from Wednesday to Friday" names both on one line and is not stale).

Pure functions over plain data: no provider, no store.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


def fold(text: str) -> str:
    """NFKC, case-folded, whitespace folded (the scoring's normal form)."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


@dataclass
class AnswerScore:
    present: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)


def score_answer(checks: Sequence[Mapping[str, Any]], answer: str) -> AnswerScore:
    """Which checks' final values the answer gives, and which stale ones it asserts."""
    whole = fold(answer)
    lines = [fold(line) for line in answer.splitlines()]
    score = AnswerScore()
    for check in checks:
        expect = [fold(p) for p in check["expect_any"]]
        (score.present if any(p and p in whole for p in expect) else score.missed).append(
            check["id"]
        )
        stale_any = [fold(p) for p in check.get("stale_any") or () if fold(p)]
        for line in lines:
            if any(s in line for s in stale_any) and not any(p and p in line for p in expect):
                score.stale.append(check["id"])
                break
    return score


# --- usage and money ----------------------------------------------------------------


@dataclass
class Tokens:
    """A provider's usage, cache included when it reports it. `prompt` counts
    every input token (cached and cache-written ones too), as OpenAI reports it."""

    prompt: int = 0
    completion: int = 0
    cached: int = 0  # read from the provider's prompt cache
    cache_write: int = 0  # written to it (Anthropic bills these above input)

    def add(self, other: Tokens) -> None:
        self.prompt += other.prompt
        self.completion += other.completion
        self.cached += other.cached
        self.cache_write += other.cache_write

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def usage_tokens(usage: Mapping[str, Any] | None) -> Tokens:
    """Tokens from an OpenAI-shaped usage object (litellm's, for every provider)."""
    if not isinstance(usage, Mapping):
        return Tokens()
    details = usage.get("prompt_tokens_details")
    cached = _int(details.get("cached_tokens")) if isinstance(details, Mapping) else 0
    return Tokens(
        prompt=_int(usage.get("prompt_tokens")),
        completion=_int(usage.get("completion_tokens")),
        cached=cached or _int(usage.get("cache_read_input_tokens")),
        cache_write=_int(usage.get("cache_creation_input_tokens")),
    )


def bill(prices: Mapping[str, float] | None, tokens: Tokens) -> float | None:
    """Money for `tokens` at per-token `prices` (`proxy.pricing.Pricing.prices`); None: no price."""
    if prices is None:
        return None
    fresh = max(0, tokens.prompt - tokens.cached - tokens.cache_write)
    return (
        fresh * prices["input"]
        + tokens.cached * prices["cache_read"]
        + tokens.cache_write * prices["cache_write"]
        + tokens.completion * prices["output"]
    )
