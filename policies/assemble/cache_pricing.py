"""Prompt caching, provider by provider: one rule per family, and the bill it gives.

Providers discount the part of a prompt that repeats a recent prompt's start.
OpenAI caches implicitly, in 128-token blocks, for prompts of at least 1,024
tokens (gpt-4o family: cached input at 50 %; gpt-5 family: 10 %). Anthropic
caches at explicit `cache_control` breakpoints (at most 4): a read costs 10 %
of the input price, a write 125 %. Gemini and DeepSeek cache implicitly.

Everything here is pure and in units of the model's input price (one uncached
input token = 1.0): the proxy multiplies by the model's price when it knows it.
`memory.cache.rules` overrides a family's figures (`proxy.settings`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CacheRule:
    """How one provider family caches and bills a repeated prompt prefix."""

    family: str
    read: float  # price of a cached (read) input token, as a share of the input price
    write: float  # price of a token written to the cache (1.0: no surcharge)
    min_tokens: int  # prompts shorter than this are never served from the cache
    block: int  # the cached prefix is rounded down to a multiple of this
    breakpoints: int  # explicit `cache_control` breakpoints allowed (0: implicit caching)

    @property
    def explicit(self) -> bool:
        """Caches only where the prompt says so (`cache_control`), and bills the writes."""
        return self.breakpoints > 0


RULES: dict[str, CacheRule] = {
    rule.family: rule
    for rule in (
        CacheRule("openai", read=0.5, write=1.0, min_tokens=1024, block=128, breakpoints=0),
        CacheRule("openai-gpt5", read=0.1, write=1.0, min_tokens=1024, block=128, breakpoints=0),
        CacheRule("anthropic", read=0.1, write=1.25, min_tokens=1024, block=1, breakpoints=4),
        CacheRule("gemini", read=0.25, write=1.0, min_tokens=1024, block=1, breakpoints=0),
        CacheRule("deepseek", read=0.1, write=1.0, min_tokens=64, block=64, breakpoints=0),
        # Providers with no prompt cache we know of: everything is billed in full.
        CacheRule("none", read=1.0, write=1.0, min_tokens=0, block=1, breakpoints=0),
    )
}
FAMILIES = tuple(RULES)
_OPENAI_PROVIDERS = frozenset(
    {"openai", "azure", "azure_ai", "custom_openai", "text-completion-openai"}
)
_CLAUDE_HOSTS = frozenset({"bedrock", "bedrock_converse", "vertex_ai", "vertex_ai_beta"})


def family_for(provider: str, model: str) -> str:
    """The cache family of a routed model, from litellm's provider name and the model id."""
    bare = model.rsplit("/", 1)[-1].lower()
    lowered = model.lower()
    if provider == "anthropic" or (
        provider in _CLAUDE_HOSTS and ("claude" in lowered or "anthropic" in lowered)
    ):
        return "anthropic"
    if provider in _OPENAI_PROVIDERS:
        return "openai-gpt5" if bare.startswith("gpt-5") else "openai"
    if provider in ("gemini", "vertex_ai", "vertex_ai_beta") or bare.startswith("gemini"):
        return "gemini"
    if provider == "deepseek" or bare.startswith("deepseek"):
        return "deepseek"
    return "none"


def with_overrides(rule: CacheRule, overrides: Mapping[str, Any]) -> CacheRule:
    """`rule` with the figures `overrides` sets (config: `memory.cache.rules.<family>`)."""
    changes = {k: v for k, v in overrides.items() if v is not None}
    return dataclasses.replace(rule, **changes) if changes else rule


def cached_prefix(prompt_tokens: int, shared_tokens: int, rule: CacheRule) -> int:
    """Tokens a provider serves from its cache when `shared_tokens` of a prompt of
    `prompt_tokens` repeat a cached prompt: 0 under the minimum, else the shared
    part rounded down to the rule's blocks."""
    if prompt_tokens < rule.min_tokens or prompt_tokens <= 0:
        return 0
    shared = max(0, min(shared_tokens, prompt_tokens))
    return shared - shared % max(1, rule.block)


def price_prompt(tokens: int, cached: int, written: int, rule: CacheRule) -> float:
    """Input cost of a prompt of `tokens`, `cached` read from and `written` to the cache,
    in input-price units (uncached tokens at 1.0)."""
    cached = max(0, min(cached, tokens))
    written = max(0, min(written, tokens - cached))
    return (tokens - cached - written) + cached * rule.read + written * rule.write


def estimate_bill(tokens: int, shared_tokens: int, rule: CacheRule) -> float:
    """Expected input cost of a prompt whose first `shared_tokens` repeat the previous
    prompt (cache warm). Explicit caches (Anthropic) read the shared part and write
    the rest (the next request reads it); implicit ones bill the rest in full."""
    if rule.explicit:
        if tokens < rule.min_tokens:
            return float(tokens)
        shared = max(0, min(shared_tokens, tokens))
        return price_prompt(tokens, shared, tokens - shared, rule)
    return price_prompt(tokens, cached_prefix(tokens, shared_tokens, rule), 0, rule)


def raw_cheaper(
    raw_tokens: int,
    managed_tokens: int,
    prev_prefix_raw: int,
    prev_prefix_managed: int,
    rule: CacheRule,
) -> tuple[bool, float, float]:
    """Would forwarding the client's own history cost less than the managed context?

    `prev_prefix_*`: tokens each prompt shares with the session's previous
    forwarded prompt (what the provider has cached). Returns (raw is cheaper,
    estimated raw bill, estimated managed bill), in input-price units. The
    caller keeps the budget as the ceiling: this compares cost only.
    """
    est_raw = estimate_bill(raw_tokens, prev_prefix_raw, rule)
    est_managed = estimate_bill(managed_tokens, prev_prefix_managed, rule)
    return est_raw < est_managed, est_raw, est_managed
