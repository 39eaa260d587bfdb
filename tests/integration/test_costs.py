"""What a request cost, as recorded: priced by litellm for plain and streamed answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

PRICED = "priced"  # a model litellm has list prices for, served by the stub


async def _record(proxy: Any, resp: Any) -> dict[str, Any]:
    await proxy.settle()
    row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
    assert row is not None
    return json.loads(row["record_json"])  # type: ignore[no-any-return]


def _list_price(usage: dict[str, Any]) -> float:
    import litellm  # the tests may import it; the proxy imports it only in upstream.py

    prompt, completion = litellm.cost_per_token(
        model="gpt-4o-mini",
        prompt_tokens=usage["prompt_tokens"],
        completion_tokens=usage["completion_tokens"],
    )
    return float(prompt + completion)


@pytest.fixture
async def priced_proxy(proxy_factory: Any, stub_upstream: Any) -> Any:
    models = [
        {
            "model_name": PRICED,
            "litellm_params": {
                "model": "openai/gpt-4o-mini",
                "api_base": stub_upstream.url,
                "api_key": "sk-test",
            },
        }
    ]
    return await proxy_factory(model_list=models)


async def test_plain_answer_is_priced_at_list_price(priced_proxy: Any) -> None:
    resp = await priced_proxy.chat([{"role": "user", "content": "price me"}], model=PRICED)
    assert resp.status_code == 200, resp.text
    record = await _record(priced_proxy, resp)
    usage = resp.json()["usage"]
    assert record["cost"] == pytest.approx(_list_price(usage), rel=1e-6)
    assert record["cost"] > 0


async def test_streamed_answer_with_usage_is_priced(priced_proxy: Any) -> None:
    resp = await priced_proxy.chat(
        [{"role": "user", "content": "stream and price me"}],
        model=PRICED,
        stream=True,
        stream_options={"include_usage": True},
    )
    assert resp.status_code == 200, resp.text
    chunks = [json.loads(line[6:]) for line in resp.text.splitlines() if line.startswith("data: {")]
    usage = next(c["usage"] for c in chunks if c.get("usage"))
    record = await _record(priced_proxy, resp)
    assert record["cost"] == pytest.approx(_list_price(usage), rel=1e-6)


async def test_streamed_answer_without_usage_has_no_invented_price(priced_proxy: Any) -> None:
    resp = await priced_proxy.chat(
        [{"role": "user", "content": "stream without usage"}], model=PRICED, stream=True
    )
    assert resp.status_code == 200, resp.text
    assert "[DONE]" in resp.text
    record = await _record(priced_proxy, resp)
    assert record["cost"] is None


async def test_unpriced_model_records_no_cost(proxy: Any) -> None:
    resp = await proxy.chat([{"role": "user", "content": "no price here"}])
    assert resp.status_code == 200, resp.text
    record = await _record(proxy, resp)
    assert record["cost"] is None


def test_litellm_success_logging_is_replaced_by_no_ops() -> None:
    # litellm's own success logging cost ~4 ms of event-loop CPU per streamed
    # call; if a litellm upgrade renames these handlers, this must fail loudly.
    from proxy import upstream

    upstream.drop_success_logging()
    from litellm.litellm_core_utils.litellm_logging import Logging

    for name in upstream.SUCCESS_LOGGING_HANDLERS:
        assert getattr(getattr(Logging, name), "_memproxy_noop", False), name


def test_litellm_rebuilds_a_finished_stream_only_when_it_is_used() -> None:
    # The end-of-stream rebuild cost ~2 ms of CPU per streamed call; if a litellm
    # upgrade renames it, this must fail loudly.
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

    from proxy import upstream

    assert upstream.skip_unused_stream_rebuild()
    rebuild = CustomStreamWrapper._async_build_complete_streaming_response
    assert getattr(rebuild, "_memproxy_when_used", False)


async def test_a_stream_asked_for_usage_still_ends_with_it(proxy: Any) -> None:
    resp = await proxy.chat(
        [{"role": "user", "content": "stream with its usage"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    assert resp.status_code == 200, resp.text
    usage = [
        json.loads(line[6:])["usage"]
        for line in resp.text.splitlines()
        if line.startswith("data: {") and json.loads(line[6:]).get("usage")
    ]
    assert usage
    assert usage[-1]["total_tokens"] > 0
    plain = await proxy.chat([{"role": "user", "content": "stream, no usage"}], stream=True)
    assert plain.status_code == 200, plain.text
    assert "[DONE]" in plain.text
    assert '"usage"' not in plain.text


async def test_a_model_litellm_cannot_price_is_not_priced_again(proxy: Any) -> None:
    # litellm retries every pricing fallback for an unpriced model on each call
    # (~2-3 ms of CPU); the failure is remembered once, the cost stays None.
    from litellm.litellm_core_utils.litellm_logging import Logging

    from proxy import pricing

    for text in ("first unpriced call", "second unpriced call"):
        resp = await proxy.chat([{"role": "user", "content": text}])
        assert resp.status_code == 200, resp.text
        assert (await _record(proxy, resp))["cost"] is None
    assert getattr(Logging.response_cost_calculator, "_memproxy_memo", False)
    assert any(model == "stub-model" for _, model in pricing.UNPRICED)
