"""X-Memory-Mode: raw, shadow, compare; the sticky A/B split; /metrics."""

from __future__ import annotations

import json
from typing import Any

SYSTEM = {"role": "system", "content": "You plan trips."}


def _long_history(n: int = 12) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = [SYSTEM]
    history.append({"role": "user", "content": "We fly to Lisbon on May 3; budget 1800 euros."})
    history.append({"role": "assistant", "content": "Noted: Lisbon, May 3, 1800 euros."})
    for i in range(n):
        history.append({"role": "user", "content": f"Tell me about neighbourhood {i} " * 8})
        history.append({"role": "assistant", "content": f"Neighbourhood {i} is lovely. " * 10})
    history.append({"role": "user", "content": "What's our budget again?"})
    return history


async def _record(proxy: Any, resp: Any) -> dict[str, Any]:
    await proxy.settle()
    row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
    assert row is not None
    return json.loads(row["record_json"])  # type: ignore[no-any-return]


async def test_raw_mode_forwards_byte_identical_and_is_recorded(
    proxy: Any, stub_upstream: Any
) -> None:
    history = _long_history()
    resp = await proxy.chat(history, headers={"X-Memory-Mode": "raw", "X-Memory-Budget": "300"})
    assert resp.status_code == 200
    assert resp.headers["X-Memory-Mode"] == "raw"
    assert stub_upstream.received[-1].raw.count(b'"role"') == len(history)
    assert stub_upstream.received[-1].body["messages"] == history
    record = await _record(proxy, resp)
    assert record["forwarded"] == history
    assert resp.headers["X-Memory-Raw-Tokens"] == resp.headers["X-Memory-Context-Tokens"]


async def test_shadow_forwards_raw_and_records_the_managed_context(
    proxy: Any, stub_upstream: Any
) -> None:
    history = _long_history()
    resp = await proxy.chat(history, headers={"X-Memory-Mode": "shadow", "X-Memory-Budget": "300"})
    assert resp.status_code == 200
    assert stub_upstream.received[-1].body["messages"] == history
    shadow_tokens = int(resp.headers["X-Memory-Shadow-Tokens"])
    assert shadow_tokens <= 300 < int(resp.headers["X-Memory-Raw-Tokens"])
    record = await _record(proxy, resp)
    assert record["shadow"]["tokens"] == shadow_tokens
    assert record["shadow"]["messages"] != history


async def test_compare_sends_both_and_returns_the_managed_answer(
    proxy: Any, stub_upstream: Any
) -> None:
    history = _long_history()
    before = len(stub_upstream.received)
    resp = await proxy.chat(history, headers={"X-Memory-Mode": "compare", "X-Memory-Budget": "300"})
    assert resp.status_code == 200
    assert resp.headers["X-Memory-Mode"] == "compare"
    bodies = [r.body["messages"] for r in stub_upstream.received[before:]]
    assert len(bodies) == 2
    assert history in bodies
    managed = next(b for b in bodies if b != history)
    assert resp.json()["choices"][0]["message"]["content"] == f"echo: {history[-1]['content']}"
    record = await _record(proxy, resp)
    assert record["forwarded"] == managed
    assert record["compare"]["raw_response"]["choices"][0]["message"]["content"]
    assert record["compare"]["raw_tokens"] == int(resp.headers["X-Memory-Raw-Tokens"])


async def test_sticky_ab_split_assigns_each_session_an_arm(proxy_factory: Any) -> None:
    harness = await proxy_factory(memory={"ab_split": 0.5})
    arms: dict[str, set[str]] = {}
    for n in range(16):
        history: list[dict[str, Any]] = [SYSTEM, {"role": "user", "content": f"conversation {n}"}]
        for _ in range(2):
            resp = await harness.chat(history)
            assert resp.status_code == 200
            arms.setdefault(resp.headers["X-Memory-Session"], set()).add(
                resp.headers["X-Memory-Mode"]
            )
            history = [
                *history,
                {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]},
                {"role": "user", "content": "more"},
            ]
    assert all(len(modes) == 1 for modes in arms.values())  # sticky
    assert {m for modes in arms.values() for m in modes} == {"raw", "managed"}


async def test_metrics_count_requests_and_tokens(proxy: Any) -> None:
    await proxy.chat(_long_history(), headers={"X-Memory-Budget": "300"})
    await proxy.settle()
    text = (await proxy.client.get("/metrics")).text
    assert 'memproxy_requests_total{mode="managed",status="200"} 1' in text
    assert "memproxy_saved_tokens_total" in text
    assert 'memproxy_request_seconds_count{mode="managed"} 1' in text


async def test_records_past_retention_are_purged(proxy_factory: Any) -> None:
    harness = await proxy_factory(log={"retention_days": 7})
    resp = await harness.chat([SYSTEM, {"role": "user", "content": "hello"}])
    await harness.settle()
    store = harness.services.store
    request_id = resp.headers["X-Memory-Request-Id"]
    assert await store.get_request(request_id) is not None
    assert await harness.services.request_log.purge() == 0  # fresh: kept
    await store.purge_requests(older_than=10**12)  # as if 7 days had passed
    assert await store.get_request(request_id) is None
