"""Prompt caching end to end: the stub's cache, the bill recorded and priced, cache hints.

Requests go through the proxy and litellm to the real stub upstream, which
keeps a prompt cache as a provider does; the store is a real SQLite file.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import httpx
import pytest

from policies.assemble.cache_hints import MAX_BREAKPOINTS, count_breakpoints
from proxy.ab_report_cli import show_ab
from proxy.inspect_cli import show_request

# ~1,500 tokens of a system prompt of our own: long enough for a provider to cache.
LONG_SYSTEM = {
    "role": "system",
    "content": " ".join(
        f"Rule {i}: when a customer asks about parcel {i}, check the depot ledger first."
        for i in range(100)
    ),
}
ADMIN_KEY = "adm-cache-key-1"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
CLAUDE_PRICES = {
    "input_cost_per_token": 3e-6,
    "output_cost_per_token": 1.5e-5,
    "cache_read_input_token_cost": 3e-7,
    "cache_creation_input_token_cost": 3.75e-6,
}


def models(stub: Any) -> list[dict[str, Any]]:
    def entry(name: str, model: str, **info: Any) -> dict[str, Any]:
        params = {"model": model, "api_base": stub.url, "api_key": "sk-test-123"}
        return {"model_name": name, "litellm_params": params, "model_info": info}

    return [
        entry("stub", "openai/stub-model", max_input_tokens=16000),
        # Priced from litellm's cost map (cached input at its own price).
        entry("gpt", "openai/gpt-4o-mini", max_input_tokens=16000),
        # An Anthropic-family model as far as memproxy's cache rules go
        # (`memory.cache.models`), served by the OpenAI-compatible stub.
        entry("house-claude", "openai/house-claude", max_input_tokens=16000, **CLAUDE_PRICES),
    ]


@pytest.fixture
async def cached_proxy(proxy_factory: Any, stub_upstream: Any) -> Any:
    return await proxy_factory(
        model_list=models(stub_upstream),
        memory={"cache": {"models": {"house-claude": "anthropic"}}},
        server={"admin_key": ADMIN_KEY},
    )


async def converse(
    proxy: Any, model: str, turns: list[str], *, stream: bool = False, **body: Any
) -> list[Any]:
    """A conversation turn by turn (the history grows); the responses' headers."""
    history: list[dict[str, Any]] = [LONG_SYSTEM]
    out = []
    for text in turns:
        history.append({"role": "user", "content": text})
        extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
        resp = await proxy.chat(history, model=model, **extra, **body)
        assert resp.status_code == 200, resp.text
        if stream:
            answer = "".join(
                (json.loads(line[6:])["choices"] or [{}])[0].get("delta", {}).get("content") or ""
                for line in resp.text.splitlines()
                if line.startswith("data: {")
            )
        else:
            answer = resp.json()["choices"][0]["message"]["content"]
        history.append({"role": "assistant", "content": answer})
        out.append(resp)
    await proxy.settle()
    return out


async def record_of(proxy: Any, resp: Any) -> dict[str, Any]:
    row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
    assert row is not None
    return {**row, "record": json.loads(row["record_json"])}


# --- the stub's own cache -------------------------------------------------------------


async def test_stub_cache_reports_what_a_provider_would(stub_upstream: Any) -> None:
    async with httpx.AsyncClient(base_url=stub_upstream.url) as client:

        async def usage(messages: list[dict[str, Any]], **body: Any) -> dict[str, Any]:
            resp = await client.post(
                "/chat/completions", json={"model": "m", "messages": messages, **body}
            )
            assert resp.status_code == 200
            if not body.get("stream"):
                return dict(resp.json()["usage"])
            chunks = [json.loads(x[6:]) for x in resp.text.splitlines() if x.startswith("data: {")]
            return dict(chunks[-1]["usage"])

        first = [LONG_SYSTEM, {"role": "user", "content": "Where is parcel 7?"}]
        fresh = await usage(first)
        assert fresh["prompt_tokens"] > 1024
        assert fresh["prompt_tokens_details"]["cached_tokens"] == 0
        # The next turn repeats the whole previous prompt: its prefix is served, in
        # 128-token blocks, never more than the prompt.
        second = [*first, {"role": "assistant", "content": "At the depot."}]
        second.append({"role": "user", "content": "And parcel 9?"})
        again = await usage(second)
        cached = again["prompt_tokens_details"]["cached_tokens"]
        assert cached % 128 == 0
        assert 1024 <= cached <= again["prompt_tokens"]
        assert again["prompt_tokens"] - cached < 300
        # Streamed: the final usage chunk carries it too (the same prompt again: all of
        # it, to the last whole block).
        streamed = await usage(second, stream=True, stream_options={"include_usage": True})
        assert streamed["prompt_tokens_details"]["cached_tokens"] == (
            streamed["prompt_tokens"] // 128 * 128
        )
        # A short prompt is never cached, however often it repeats.
        short = [{"role": "user", "content": "Hello there, depot."}]
        await usage(short)
        assert (await usage(short))["prompt_tokens_details"]["cached_tokens"] == 0
        # A prompt whose first message differs shares nothing.
        other = [{**LONG_SYSTEM, "content": "New rules. " + LONG_SYSTEM["content"]}, first[1]]
        assert (await usage(other))["prompt_tokens_details"]["cached_tokens"] == 0


# --- the bill, recorded and priced --------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_cache_usage_recorded_and_priced(
    cached_proxy: Any, stream: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    from litellm import model_cost

    first, second = await converse(
        cached_proxy, "gpt", ["Where is parcel 12?", "And parcel 40?"], stream=stream
    )
    fresh, warm = await record_of(cached_proxy, first), await record_of(cached_proxy, second)
    assert fresh["record"]["cache"]["cached_tokens"] == 0
    cache = warm["record"]["cache"]
    assert cache["rule"] == "openai"
    assert cache["cached_tokens"] >= 1024
    assert cache["cached_tokens"] % 128 == 0
    assert warm["cached_tokens"] == cache["cached_tokens"]
    assert warm["prompt_tokens"] == cache["prompt_tokens"]
    share = cache["cached_tokens"] / cache["prompt_tokens"]
    assert cache["cached_share"] == pytest.approx(share, abs=1e-4)
    price = model_cost["gpt-4o-mini"]
    uncached = cache["prompt_tokens"] - cache["cached_tokens"]
    expected = (
        uncached * price["input_cost_per_token"]
        + cache["cached_tokens"] * price["cache_read_input_token_cost"]
    )
    assert cache["input_cost"] == pytest.approx(expected)
    assert warm["input_cost"] == pytest.approx(expected)
    assert cache["saved"] > 0
    assert cache["input_cost_uncached"] == pytest.approx(
        cache["prompt_tokens"] * price["input_cost_per_token"]
    )
    # The inspector, the A/B report and the metrics show it too.
    assert await show_request(cached_proxy.services.settings, warm["id"]) == 0
    shown = capsys.readouterr().out
    assert f"{cache['cached_tokens']} of {cache['prompt_tokens']} input tokens cached" in shown
    admin = (await cached_proxy.client.get(f"/memory/requests/{warm['id']}", headers=ADMIN)).json()
    assert admin["record"]["cache"] == cache
    assert admin["cached_tokens"] == cache["cached_tokens"]
    ab = (await cached_proxy.client.get("/memory/ab", headers=ADMIN)).json()["data"]
    (arm,) = ab
    assert arm["cached_tokens"] == cache["cached_tokens"]
    assert arm["input_tokens"] == fresh["prompt_tokens"] + warm["prompt_tokens"]
    assert arm["input_cost"] == pytest.approx(fresh["input_cost"] + warm["input_cost"], abs=1e-6)
    metrics = (await cached_proxy.client.get("/metrics")).text
    assert f'memproxy_cached_tokens_total{{mode="managed"}} {cache["cached_tokens"]}' in metrics
    assert 'memproxy_input_cost_usd_total{mode="managed"}' in metrics
    assert 'memproxy_cache_saved_usd_total{mode="managed"}' in metrics


@pytest.mark.parametrize("stream", [False, True])
async def test_anthropic_cache_usage_recorded_and_priced(
    cached_proxy: Any, stub_upstream: Any, stream: bool
) -> None:
    stub_upstream.state.usage_style = "anthropic"  # cache read / creation fields, as litellm's
    first, second = await converse(
        cached_proxy, "house-claude", ["Where is parcel 3?", "And parcel 5?"], stream=stream
    )
    fresh = (await record_of(cached_proxy, first))["record"]["cache"]
    assert fresh["cached_tokens"] == 0
    assert fresh["written_tokens"] == fresh["prompt_tokens"]
    warm = await record_of(cached_proxy, second)
    cache = warm["record"]["cache"]
    assert cache["rule"] == "anthropic"
    assert cache["cached_tokens"] >= 1024
    assert cache["written_tokens"] == cache["prompt_tokens"] - cache["cached_tokens"]
    assert warm["cache_write_tokens"] == cache["written_tokens"]
    expected = (
        cache["cached_tokens"] * CLAUDE_PRICES["cache_read_input_token_cost"]
        + cache["written_tokens"] * CLAUDE_PRICES["cache_creation_input_token_cost"]
    )
    assert cache["input_cost"] == pytest.approx(expected)


async def test_ab_report_shows_cached_tokens_per_arm(
    cached_proxy: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    await converse(cached_proxy, "gpt", ["Where is parcel 1?", "And parcel 2?"])
    # The same system prompt in another conversation: cached too.
    await converse(cached_proxy, "gpt", ["Where is parcel 8?", "And parcel 9?"])
    assert await show_ab(cached_proxy.services.settings, argparse.Namespace(json=True)) == 0
    (arm,) = json.loads(capsys.readouterr().out)
    assert arm["cached_tokens"] > 0
    assert 0 < arm["cached_share"] < 1
    assert arm["input_cost"] > 0
    assert await show_ab(cached_proxy.services.settings, argparse.Namespace(json=False)) == 0
    table = capsys.readouterr().out
    assert "Prompt cache by mode" in table
    assert f"{arm['cached_tokens']} (" in table


# --- cache hints ---------------------------------------------------------------------------


async def test_breakpoints_on_anthropic_family_models_only(
    cached_proxy: Any, stub_upstream: Any
) -> None:
    responses = await converse(cached_proxy, "house-claude", ["Where is parcel 3?", "And 4?"])
    sent = stub_upstream.received[-1].body
    marked = [i for i, m in enumerate(sent["messages"]) if "cache_control" in m]
    # The system prompt and the last message before the current input.
    assert marked == [0, len(sent["messages"]) - 2]
    assert "prompt_cache_key" not in sent
    record = (await record_of(cached_proxy, responses[-1]))["record"]
    assert record["cache"]["hints"] == {"cache_control": marked, "client_breakpoints": 0}
    await converse(cached_proxy, "gpt", ["Where is parcel 3?", "And 4?"])
    assert all("cache_control" not in m for m in stub_upstream.received[-1].body["messages"])


async def test_a_clients_own_breakpoints_are_kept_and_the_total_stays_within_four(
    cached_proxy: Any, stub_upstream: Any
) -> None:
    own = {"type": "ephemeral", "ttl": "1h"}
    messages: list[dict[str, Any]] = [{**LONG_SYSTEM, "cache_control": own}]
    for i in range(3):
        part: dict[str, Any] = {"type": "text", "text": f"q{i}"}
        if i < 2:
            part["cache_control"] = own
        messages += [
            {"role": "user", "content": [part]},
            {"role": "assistant", "content": f"a{i}"},
        ]
    messages.append({"role": "user", "content": "last question"})
    resp = await cached_proxy.chat(messages, model="house-claude", stream=False)
    assert resp.status_code == 200, resp.text
    sent = stub_upstream.received[-1].body["messages"]
    # Three of the client's, one of ours (the last stable message): four in all.
    assert count_breakpoints(sent) == MAX_BREAKPOINTS
    assert sent[0]["cache_control"] == own
    for i in (1, 3, 5):
        assert sent[i] == messages[i]  # the client's own, as sent
    assert sent[-2]["cache_control"] == {"type": "ephemeral"}
    # With four of its own, nothing is added.
    messages[5] = {
        "role": "user",
        "content": [{"type": "text", "text": "q2", "cache_control": own}],
    }
    messages[-1] = {"role": "user", "content": "another last question"}
    resp = await cached_proxy.chat(messages, model="house-claude")
    assert resp.status_code == 200, resp.text
    sent = stub_upstream.received[-1].body["messages"]
    assert count_breakpoints(sent) == MAX_BREAKPOINTS
    assert "cache_control" not in sent[-2]


async def test_prompt_cache_key_from_the_session_unless_the_client_sent_one(
    cached_proxy: Any, stub_upstream: Any
) -> None:
    (resp,) = await converse(cached_proxy, "gpt", ["Where is parcel 6?"])
    session = resp.headers["X-Memory-Session"]
    assert stub_upstream.received[-1].body["prompt_cache_key"] == f"memproxy-{session}"
    record = (await record_of(cached_proxy, resp))["record"]
    assert record["cache"]["hints"] == {"prompt_cache_key": "session"}
    (resp,) = await converse(
        cached_proxy, "gpt", ["Where is parcel 60?"], prompt_cache_key="client-key-1"
    )
    assert stub_upstream.received[-1].body["prompt_cache_key"] == "client-key-1"
    record = (await record_of(cached_proxy, resp))["record"]
    assert record["cache"]["hints"] == {"prompt_cache_key": "client"}
    assert record["params"]["prompt_cache_key"] == "client-key-1"


async def test_hints_can_be_turned_off(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await proxy_factory(
        model_list=models(stub_upstream),
        memory={
            "cache": {
                "models": {"house-claude": "anthropic"},
                "cache_control": False,
                "prompt_cache_key": False,
            }
        },
    )
    await converse(proxy, "house-claude", ["Where is parcel 3?", "And 4?"])
    assert all("cache_control" not in m for m in stub_upstream.received[-1].body["messages"])
    await converse(proxy, "gpt", ["Where is parcel 3?"])
    assert "prompt_cache_key" not in stub_upstream.received[-1].body


# --- manage only where it pays (memory.cache.raw_when_cheaper) ---------------------------

TRAVELLER = {"role": "system", "content": "You are a travel assistant."}


async def chat_as(proxy: Any, user: str, turns: list[str], **headers: str) -> list[Any]:
    history: list[dict[str, Any]] = [TRAVELLER]
    out = []
    for text in turns:
        history.append({"role": "user", "content": text})
        resp = await proxy.chat(history, headers={"X-Memory-User": user, **headers})
        assert resp.status_code == 200, resp.text
        history.append(resp.json()["choices"][0]["message"])
        out.append(resp)
    await proxy.settle()
    return out


@pytest.mark.parametrize("flag", [True, False])
async def test_raw_forwarded_when_cheaper_and_the_decision_recorded(
    proxy_factory: Any, stub_upstream: Any, flag: bool
) -> None:
    from policies.longterm.backfill import BACKFILL_HEADER

    proxy = await proxy_factory(memory={"cache": {"raw_when_cheaper": flag}})
    await chat_as(proxy, "dana", ["Always book an aisle seat for me.", "Thanks."])
    # A new conversation of the same user: the managed context adds the earlier rule
    # as background; the client's own two messages cost less and fit the budget.
    (resp,) = await chat_as(proxy, "dana", ["Book me a seat on the Friday train to Ghent."])
    sent = stub_upstream.received[-1].body["messages"]
    record = (await record_of(proxy, resp))["record"]
    has_background = any(str(m.get("content")).startswith(BACKFILL_HEADER) for m in sent)
    if not flag:
        assert has_background  # the default: managed, background included
        assert "decision" not in record.get("cache", {})
        return
    decision = record["cache"]["decision"]
    assert decision["decision"] == "raw_cheaper"
    assert decision["estimate_raw"] < decision["estimate_managed"]
    assert decision["raw_prompt_tokens"] < decision["managed_prompt_tokens"]
    assert not has_background
    assert sent == [
        TRAVELLER,
        {"role": "user", "content": "Book me a seat on the Friday train to Ghent."},
    ]
    assert record["managed"] is None
    assert record["shadow"] is not None  # computed, not sent


async def test_raw_never_forwarded_past_the_budget(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await proxy_factory(memory={"cache": {"raw_when_cheaper": True}})
    await chat_as(proxy, "eli", ["Always book an aisle seat for me.", "Thanks."])
    turns = [f"Question {i}: which platforms serve the {i} o'clock trains?" for i in range(12)]
    responses = await chat_as(proxy, "eli", turns, **{"X-Memory-Budget": "120"})
    last = await record_of(proxy, responses[-1])
    assert last["raw_tokens"] > 120
    assert "decision" not in last["record"].get("cache", {})
    assert last["context_tokens"] < last["raw_tokens"]


async def test_a_fallback_of_another_family_gets_the_prompt_unhinted(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    from proxy.stub.state import Fault

    proxy = await proxy_factory(
        model_list=models(stub_upstream),
        memory={"cache": {"models": {"house-claude": "anthropic"}}},
        router_settings={
            "retry_backoff_s": 0.01,
            "retry_backoff_max_s": 0.05,
            "num_retries": 0,
            "fallbacks": [{"house-claude": ["gpt"]}],
        },
    )
    stub_upstream.inject(Fault(status=503, message="overloaded"))
    messages = [LONG_SYSTEM, {"role": "user", "content": "Where is parcel 11?"}]
    resp = await proxy.chat(messages, model="house-claude")
    assert resp.status_code == 200, resp.text
    primary, backup = stub_upstream.received[-2:]
    assert primary.body["model"] == "house-claude"
    assert "cache_control" in primary.body["messages"][0]
    assert backup.body["model"] == "gpt-4o-mini"
    assert backup.body["messages"] == messages
    assert "prompt_cache_key" not in backup.body


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("anthropic/claude-3-5-sonnet-20240620", "anthropic"),
        ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", "anthropic"),
        ("vertex_ai/claude-3-5-sonnet@20240620", "anthropic"),
        ("bedrock/amazon.nova-pro-v1:0", "none"),
        ("openai/gpt-4o-mini", "openai"),
        ("gpt-5-mini", "openai-gpt5"),
        ("gemini/gemini-2.5-flash", "gemini"),
    ],
)
def test_the_family_follows_litellms_provider_of_the_routed_model(model: str, family: str) -> None:
    from proxy.cache_bill import rule_for
    from proxy.config import settings_from_dict
    from proxy.upstream import Upstream

    entry = {"model_name": "m", "litellm_params": {"model": model, "api_key": "sk-test-123"}}
    settings = settings_from_dict({"model_list": [entry]}, env={})
    upstream = Upstream(settings)
    target = upstream.resolve("m")
    rule = rule_for(settings.memory.cache, "m", upstream.provider(target), target.provider_model)
    assert rule.family == family
