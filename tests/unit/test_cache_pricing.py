"""Provider cache rules, the bill they give, cache hints and the raw-cheaper estimate."""

from __future__ import annotations

from typing import Any

import pytest

from policies.assemble.cache_hints import (
    MAX_BREAKPOINTS,
    add_breakpoints,
    count_breakpoints,
    session_cache_key,
)
from policies.assemble.cache_pricing import (
    RULES,
    cached_prefix,
    estimate_bill,
    family_for,
    price_prompt,
    raw_cheaper,
    with_overrides,
)
from proxy.cache_bill import bill, cache_usage, prices_from, rule_for
from proxy.config import ConfigError, settings_from_dict
from proxy.settings import CacheSettings

OPENAI, GPT5, ANTHROPIC = RULES["openai"], RULES["openai-gpt5"], RULES["anthropic"]


def test_openai_caches_from_1024_tokens_in_128_token_blocks() -> None:
    assert cached_prefix(1000, 1000, OPENAI) == 0  # under the minimum
    assert cached_prefix(1024, 1024, OPENAI) == 1024
    assert cached_prefix(2000, 1500, OPENAI) == 1408  # 11 blocks of 128
    assert cached_prefix(2000, 100, OPENAI) == 0
    assert cached_prefix(2000, 5000, OPENAI) == 1920  # never more than the prompt


def test_price_prompt_bills_each_part_at_its_rate() -> None:
    assert price_prompt(2000, 0, 0, OPENAI) == 2000
    assert price_prompt(2000, 1024, 0, OPENAI) == pytest.approx(976 + 512)
    assert price_prompt(2000, 1024, 0, GPT5) == pytest.approx(976 + 102.4)
    assert price_prompt(2000, 1000, 1000, ANTHROPIC) == pytest.approx(100 + 1250)


def test_estimate_bill_reads_the_shared_part_and_writes_the_rest_on_anthropic() -> None:
    assert estimate_bill(3000, 2000, ANTHROPIC) == pytest.approx(200 + 1250)
    assert estimate_bill(3000, 2000, OPENAI) == pytest.approx(1000 + 1920 * 0.5 + 80)
    assert estimate_bill(500, 400, ANTHROPIC) == 500  # under the minimum: nothing cached


def test_raw_cheaper_when_the_raw_history_is_cache_hot() -> None:
    # Raw shares almost all of its 3,000 tokens; the managed prompt 1,200 of 2,000.
    cheaper, est_raw, est_managed = raw_cheaper(3000, 2000, 2900, 200, GPT5)
    assert cheaper
    assert est_raw < est_managed
    assert est_raw == pytest.approx(estimate_bill(3000, 2900, GPT5))
    # A managed prompt that keeps its prefix costs less than the longer raw one.
    cheaper, est_raw, est_managed = raw_cheaper(3000, 2000, 2900, 1900, GPT5)
    assert not cheaper
    assert est_managed < est_raw


@pytest.mark.parametrize(
    ("provider", "model", "family"),
    [
        ("openai", "openai/gpt-4o-mini", "openai"),
        ("azure", "azure/gpt-5-mini", "openai-gpt5"),
        ("anthropic", "anthropic/claude-sonnet-4-5", "anthropic"),
        ("bedrock", "bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic"),
        ("vertex_ai", "vertex_ai/claude-3-5-sonnet@20240620", "anthropic"),
        ("vertex_ai", "vertex_ai/gemini-2.5-flash", "gemini"),
        ("bedrock", "bedrock/amazon.nova-pro-v1:0", "none"),
        ("deepseek", "deepseek/deepseek-chat", "deepseek"),
        ("hosted_vllm", "hosted_vllm/llama-3", "none"),
    ],
)
def test_family_of_a_routed_model(provider: str, model: str, family: str) -> None:
    assert family_for(provider, model) == family


def test_config_overrides_a_rule_and_maps_a_model() -> None:
    settings = CacheSettings.model_validate(
        {"rules": {"openai": {"read": 0.25}}, "models": {"house-model": "anthropic"}}
    )
    assert rule_for(settings, "gpt", "openai", "openai/gpt-4o").read == 0.25
    assert rule_for(settings, "gpt", "openai", "openai/gpt-4o").block == 128
    assert rule_for(settings, "house-model", "openai", "openai/x").family == "anthropic"
    assert with_overrides(OPENAI, {"read": None}) is OPENAI


@pytest.mark.parametrize(
    ("cache", "message"),
    [
        ({"cache_contrl": True}, "memory.cache.cache_contrl: Extra inputs are not permitted"),
        ({"rules": {"openia": {}}}, "unknown cache family 'openia'"),
        ({"rules": {"openai": {"reads": 0.1}}}, "memory.cache.rules.openai.reads"),
        ({"models": {"m": "claude"}}, "models.m: unknown cache family 'claude'"),
        ({"rules": {"anthropic": {"breakpoints": 9}}}, "breakpoints"),
    ],
)
def test_bad_cache_config_is_rejected_clearly(cache: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="invalid config") as err:
        settings_from_dict({"model_list": [], "memory": {"cache": cache}}, env={})
    assert message in str(err.value)


# --- cache usage, normalised and priced ---------------------------------------------------


def test_cache_usage_from_litellm_usage_objects_of_both_providers() -> None:
    from litellm.types.utils import Usage

    openai_shape = Usage(
        prompt_tokens=2000, completion_tokens=5, prompt_tokens_details={"cached_tokens": 1536}
    ).model_dump()
    got = cache_usage(openai_shape)
    assert got is not None
    assert (got.prompt, got.cached, got.written) == (2000, 1536, 0)
    # litellm's Anthropic usage: read / creation fields, both inside prompt_tokens.
    anthropic_shape = Usage(
        prompt_tokens=3000,
        completion_tokens=5,
        cache_read_input_tokens=2000,
        cache_creation_input_tokens=900,
    ).model_dump()
    got = cache_usage(anthropic_shape)
    assert got is not None
    assert (got.prompt, got.cached, got.written) == (3000, 2000, 900)
    assert cache_usage(None) is None
    assert cache_usage({"completion_tokens": 3}) is None


def test_bill_prices_reads_and_writes_with_the_cost_map_or_the_rule() -> None:
    usage = cache_usage(
        {"prompt_tokens": 3000, "cache_read_input_tokens": 2000, "cache_creation_input_tokens": 900}
    )
    assert usage is not None
    listed = prices_from(
        {
            "input_cost_per_token": 3e-6,
            "cache_read_input_token_cost": 3e-7,
            "cache_creation_input_token_cost": 3.75e-6,
        },
        ANTHROPIC,
    )
    record = bill(usage, ANTHROPIC, listed)
    assert record["input_cost"] == pytest.approx(100 * 3e-6 + 2000 * 3e-7 + 900 * 3.75e-6)
    assert record["input_cost_uncached"] == pytest.approx(3000 * 3e-6)
    assert record["cached_share"] == pytest.approx(2000 / 3000, abs=1e-4)
    # No cache prices listed: the input price times the family's rule.
    fallback = prices_from({"input_cost_per_token": 1e-6}, GPT5)
    assert fallback is not None
    assert fallback.cache_read == pytest.approx(1e-7)
    assert prices_from({}, OPENAI) is None
    unpriced = bill(usage, ANTHROPIC, None)
    assert unpriced["input_cost"] is None
    assert unpriced["cached_tokens"] == 2000


# --- cache hints ---------------------------------------------------------------------------


def conversation(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You help with gardening."}]
    for i in range(turns):
        messages.append({"role": "user", "content": f"question {i} about tomatoes"})
        messages.append({"role": "assistant", "content": f"answer {i}"})
    messages.append({"role": "user", "content": "and the basil?"})
    return messages


def test_breakpoints_on_the_system_prompt_and_the_last_stable_message() -> None:
    messages = conversation(3)
    marked = add_breakpoints(messages)
    assert marked.added == [0, len(messages) - 2]
    assert marked.messages[0]["cache_control"] == {"type": "ephemeral"}
    assert marked.messages[-2]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in marked.messages[-1]
    assert all("cache_control" not in m for m in messages)  # the input is not mutated
    with_end = add_breakpoints(messages, end=True, stable_upto=3)
    assert with_end.added == [0, 3, len(messages) - 1]


def test_never_more_than_four_breakpoints_and_the_clients_own_untouched() -> None:
    messages = conversation(4)
    own = {"type": "ephemeral", "ttl": "1h"}
    for i in (1, 3, 5):
        messages[i] = {**messages[i], "cache_control": own}
    tools = [{"type": "function", "function": {"name": "f"}, "cache_control": own}]
    marked = add_breakpoints(messages, end=True, tools=tools)
    assert marked.client == 4
    assert marked.added == []
    assert count_breakpoints(marked.messages, tools) == MAX_BREAKPOINTS
    # One client breakpoint in a content part: three of ours at most, theirs as sent.
    messages = conversation(2)
    messages[1] = {
        "role": "user",
        "content": [{"type": "text", "text": "a long brief", "cache_control": own}],
    }
    marked = add_breakpoints(messages, end=True, stable_upto=1)
    assert marked.client == 1
    assert marked.messages[1] == messages[1]
    assert count_breakpoints(marked.messages) <= MAX_BREAKPOINTS
    assert marked.added == [0, len(messages) - 1]


def test_a_list_content_gets_its_breakpoint_on_the_last_part() -> None:
    messages = [
        {
            "role": "system",
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        },
        {"role": "user", "content": "hello"},
    ]
    marked = add_breakpoints(messages)
    assert marked.added == [0]
    assert marked.messages[0]["content"][1]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in marked.messages[0]["content"][0]


def test_prompt_cache_key_from_the_session_unless_the_client_sent_one() -> None:
    assert session_cache_key({}, "01SESSION") == "memproxy-01SESSION"
    assert session_cache_key({"prompt_cache_key": "mine"}, "01SESSION") is None
    assert session_cache_key({"extra_body": {"prompt_cache_key": "mine"}}, "01SESSION") is None
    assert session_cache_key({}, None) is None
