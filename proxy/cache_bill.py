"""The bill with prompt caching: what the provider read from / wrote to its cache, priced.

litellm normalises every provider's usage to OpenAI's shape, and keeps
Anthropic's own fields beside it: cached (read) tokens are
`prompt_tokens_details.cached_tokens` (or `cache_read_input_tokens`), written
ones `prompt_tokens_details.cache_write_tokens` (or
`cache_creation_input_tokens`), both included in `prompt_tokens`. Prices come
from litellm's model cost map (`cache_read_input_token_cost`,
`cache_creation_input_token_cost`); where it has none, the input price times
the family's rule (`policies.assemble.cache_pricing`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from policies.assemble.cache_hints import add_breakpoints, client_cache_key, session_cache_key
from policies.assemble.cache_pricing import (
    RULES,
    CacheRule,
    family_for,
    price_prompt,
    raw_cheaper,
    with_overrides,
)
from proxy.records import serialised, shared_prefix_tokens
from proxy.settings import CacheSettings


@dataclass(frozen=True, slots=True)
class CacheUsage:
    prompt: int  # input tokens in all, cached and written included
    cached: int  # read from the provider's cache
    written: int  # written to it (Anthropic)


@dataclass(frozen=True, slots=True)
class Prices:
    """USD per input token: uncached, read from the cache, written to it."""

    input: float
    cache_read: float
    cache_write: float


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def cache_usage(usage: Mapping[str, Any] | None) -> CacheUsage | None:
    """The cache figures of a (litellm-normalised) usage dict; None without usage."""
    if not isinstance(usage, Mapping) or "prompt_tokens" not in usage:
        return None
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    cached = _int(details.get("cached_tokens")) or _int(usage.get("cache_read_input_tokens"))
    written = (
        _int(details.get("cache_write_tokens"))
        or _int(details.get("cache_creation_tokens"))
        or _int(usage.get("cache_creation_input_tokens"))
    )
    prompt = _int(usage.get("prompt_tokens"))
    cached = min(cached, prompt)
    return CacheUsage(prompt, cached, min(written, prompt - cached))


def rule_for(
    settings: CacheSettings, model_name: str, provider: str, provider_model: str
) -> CacheRule:
    """The cache rule of a model: `memory.cache.models`, else by provider; then the
    family's overrides (`memory.cache.rules`)."""
    family = settings.models.get(model_name) or family_for(provider, provider_model)
    rule = RULES[family]
    override = settings.rules.get(family)
    return with_overrides(rule, override.model_dump()) if override is not None else rule


def prices_from(info: Mapping[str, Any], rule: CacheRule) -> Prices | None:
    """Prices from litellm's model info (or a model_list entry's own figures)."""
    base = info.get("input_cost_per_token")
    if not isinstance(base, int | float) or base <= 0:
        return None
    read = info.get("cache_read_input_token_cost")
    write = info.get("cache_creation_input_token_cost")
    return Prices(
        float(base),
        float(read) if isinstance(read, int | float) else base * rule.read,
        float(write) if isinstance(write, int | float) else base * rule.write,
    )


def bill(usage: CacheUsage, rule: CacheRule, prices: Prices | None) -> dict[str, Any]:
    """The request record's `cache` block: tokens, cached share and (when priced) money."""
    out: dict[str, Any] = {
        "rule": rule.family,
        "prompt_tokens": usage.prompt,
        "cached_tokens": usage.cached,
        "written_tokens": usage.written,
        "cached_share": round(usage.cached / usage.prompt, 4) if usage.prompt else 0.0,
        # In input-price units: the bill over what the prompt costs uncached.
        "relative_cost": (
            round(price_prompt(usage.prompt, usage.cached, usage.written, rule) / usage.prompt, 4)
            if usage.prompt
            else None
        ),
        "input_cost": None,
        "input_cost_uncached": None,
        "saved": None,
    }
    if prices is not None:
        uncached = usage.prompt - usage.cached - usage.written
        cost = (
            uncached * prices.input
            + usage.cached * prices.cache_read
            + usage.written * prices.cache_write
        )
        full = usage.prompt * prices.input
        out.update(
            input_cost=round(cost, 10),
            input_cost_uncached=round(full, 10),
            saved=round(full - cost, 10),
        )
    return out


# --- on the forward path ---------------------------------------------------------------


def prompt_sizes(
    messages: Sequence[dict[str, Any]], count: Callable[[str], int]
) -> tuple[list[str], list[int]]:
    texts = [serialised(m) for m in messages]
    return texts, [count(t) for t in texts]


def raw_decision(
    rule: CacheRule,
    raw: Sequence[dict[str, Any]],
    managed: Sequence[dict[str, Any]],
    previous: Sequence[dict[str, Any]] | None,
    count: Callable[[str], int],
) -> tuple[bool, dict[str, Any]]:
    """Whether the client's own history (`raw`) would cost less than `managed`, the
    provider's cache holding the session's previous forwarded prompt; and the figures."""
    raw_texts, raw_sizes = prompt_sizes(raw, count)
    managed_texts, managed_sizes = prompt_sizes(managed, count)
    before = [serialised(m) for m in previous or ()]
    shared_raw = shared_prefix_tokens(before, raw_texts, raw_sizes, count) if before else 0
    shared_managed = (
        shared_prefix_tokens(before, managed_texts, managed_sizes, count) if before else 0
    )
    cheaper, est_raw, est_managed = raw_cheaper(
        sum(raw_sizes), sum(managed_sizes), shared_raw, shared_managed, rule
    )
    figures = {
        "decision": "raw_cheaper" if cheaper else "managed",
        "rule": rule.family,
        # Input-price units (one uncached token = 1).
        "estimate_raw": round(est_raw, 1),
        "estimate_managed": round(est_managed, 1),
        "raw_prompt_tokens": sum(raw_sizes),
        "managed_prompt_tokens": sum(managed_sizes),
        "raw_shared_prefix": shared_raw,
        "managed_shared_prefix": shared_managed,
    }
    return cheaper, figures


def cache_hints(
    settings: CacheSettings,
    rule: CacheRule,
    messages: list[dict[str, Any]],
    params: Mapping[str, Any],
    session_id: str | None,
    stable_upto: int | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The forwarded messages with the provider's cache hints, the request fields to
    add, and what was done (for the record)."""
    record: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    if rule.explicit and settings.cache_control:
        tools = params.get("tools")
        marked = add_breakpoints(
            messages,
            stable_upto=stable_upto,
            end=settings.end_breakpoint,
            tools=tools if isinstance(tools, list) else None,
            limit=rule.breakpoints,
        )
        messages = marked.messages
        record.update(marked.record())
    elif rule.family.startswith("openai") and settings.prompt_cache_key:
        key = session_cache_key(params, session_id)
        if key is not None:
            extra["prompt_cache_key"] = key
            record["prompt_cache_key"] = "session"
        elif client_cache_key(params):
            record["prompt_cache_key"] = "client"
    return messages, extra, record
