"""Retries with backoff and fallbacks to other model_list entries (real stub upstream).

Every test counts what the stub received: that is how many calls really went out.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from proxy.config import ConfigError, settings_from_dict
from proxy.routing import retry_after_seconds
from proxy.stub.state import Fault

SECRET = "sk-provider-secret-123"
FAST = {"retry_backoff_s": 0.01, "retry_backoff_max_s": 0.05}


def _entry(name: str, api_base: str, model: str = "openai/stub-model") -> dict[str, Any]:
    return {
        "model_name": name,
        "litellm_params": {"model": model, "api_base": api_base, "api_key": SECRET},
        "model_info": {"max_input_tokens": 16000},
    }


def _models(stub_url: str) -> list[dict[str, Any]]:
    return [
        _entry("stub", stub_url),
        _entry("primary", stub_url, "openai/primary-model"),
        _entry("backup", stub_url, "openai/backup-model"),
        # Nothing listens on port 9 (discard): connection refused.
        _entry("down", "http://127.0.0.1:9/v1"),
    ]


async def _harness(proxy_factory: Any, stub: Any, **router: Any) -> Any:
    return await proxy_factory(model_list=_models(stub.url), router_settings={**FAST, **router})


async def _record(proxy: Any, resp: Any) -> dict[str, Any]:
    await proxy.settle()
    row = await proxy.services.store.get_request(resp.headers["X-Memory-Request-Id"])
    return json.loads(row["record_json"])  # type: ignore[no-any-return]


def _error(resp: Any, status: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert SECRET not in resp.text
    return body["error"]  # type: ignore[no-any-return]


async def _stream_lines(proxy: Any, model: str, text: str) -> tuple[int, list[str]]:
    body = {"model": model, "messages": [{"role": "user", "content": text}], "stream": True}
    async with proxy.client.stream("POST", "/v1/chat/completions", json=body) as resp:
        lines = [line async for line in resp.aiter_lines() if line.startswith("data: ")]
        return resp.status_code, lines


def _streamed_text(lines: list[str]) -> str:
    chunks = [json.loads(line[6:]) for line in lines if line != "data: [DONE]"]
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices")
    )


async def test_500_then_success_is_retried(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, num_retries=2)
    stub_upstream.inject(Fault(status=500, message="provider hiccup"))
    resp = await proxy.chat([{"role": "user", "content": "hello"}])
    assert resp.status_code == 200, resp.text
    assert resp.json()["choices"][0]["message"]["content"] == "echo: hello"
    assert len(stub_upstream.received) == 2
    upstream = (await _record(proxy, resp))["upstream"]
    assert upstream["model"] == "stub"
    assert upstream["retries"] == 1
    assert upstream["fallback"] is False
    assert [a["status"] for a in upstream["attempts"]] == [500, 200]


async def test_retries_are_off_by_default(proxy: Any, stub_upstream: Any) -> None:
    stub_upstream.inject(Fault(status=503, message="busy"))
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    _error(resp, 503)
    assert len(stub_upstream.received) == 1


async def test_server_num_retries_still_counts(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await proxy_factory(server={"num_retries": 1}, router_settings=FAST)
    stub_upstream.inject(Fault(status=502))
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    assert resp.status_code == 200, resp.text
    assert len(stub_upstream.received) == 2


async def test_exhausted_retries_keep_the_status_and_record_each_attempt(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, num_retries=2)
    stub_upstream.inject(Fault(status=500, message="provider exploded"), times=3)
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    error = _error(resp, 500)
    assert "provider exploded" in error["message"]
    assert "after 3 attempts" in error["message"]
    assert len(stub_upstream.received) == 3
    record = await _record(proxy, resp)
    assert record["upstream"]["model"] is None
    assert [a["status"] for a in record["upstream"]["attempts"]] == [500, 500, 500]
    waits = [a["wait_s"] for a in record["upstream"]["attempts"][:2]]
    assert all(0 < w <= FAST["retry_backoff_max_s"] for w in waits)


async def test_429_waits_for_retry_after(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, num_retries=1)
    stub_upstream.inject(Fault(status=429, retry_after="1", message="slow down"))
    started = time.monotonic()
    resp = await proxy.chat([{"role": "user", "content": "patience"}])
    elapsed = time.monotonic() - started
    assert resp.status_code == 200, resp.text
    assert len(stub_upstream.received) == 2
    gap = stub_upstream.received[1].at - stub_upstream.received[0].at
    assert gap >= 0.95, gap  # not the 10 ms backoff: the provider asked for 1 s
    assert elapsed < 5
    upstream = (await _record(proxy, resp))["upstream"]
    assert upstream["attempts"][0] == {**upstream["attempts"][0], "status": 429, "wait_s": 1.0}


async def test_retry_after_beyond_the_cap_is_not_waited_for(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, num_retries=3, retry_after_max_s=2)
    stub_upstream.inject(Fault(status=429, retry_after="120", message="come back later"))
    started = time.monotonic()
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    assert time.monotonic() - started < 3
    _error(resp, 429)
    assert resp.headers["retry-after"] == "120"  # the client learns the provider's wish
    assert len(stub_upstream.received) == 1


@pytest.mark.parametrize("status", [400, 401, 404, 413, 422])
async def test_client_errors_are_not_retried(
    proxy_factory: Any, stub_upstream: Any, status: int
) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, num_retries=3)
    stub_upstream.inject(Fault(status=status, message="your fault"), times=4)
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    _error(resp, status)
    assert len(stub_upstream.received) == 1


async def test_a_bad_request_does_not_fall_back(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await _harness(
        proxy_factory, stub_upstream, num_retries=2, fallbacks=[{"primary": ["backup"]}]
    )
    stub_upstream.inject(Fault(status=400, message="bad tool pairing"))
    resp = await proxy.chat([{"role": "user", "content": "x"}], model="primary")
    _error(resp, 400)
    assert [r.body["model"] for r in stub_upstream.received] == ["primary-model"]


async def test_fallback_answers_when_the_primary_is_down(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(
        proxy_factory, stub_upstream, num_retries=1, fallbacks=[{"down": ["backup", "stub"]}]
    )
    resp = await proxy.chat([{"role": "user", "content": "anyone there?"}], model="down")
    assert resp.status_code == 200, resp.text
    assert resp.json()["choices"][0]["message"]["content"] == "echo: anyone there?"
    # The refused entry was retried once, then the first fallback answered.
    assert [r.body["model"] for r in stub_upstream.received] == ["backup-model"]
    upstream = (await _record(proxy, resp))["upstream"]
    assert upstream["model"] == "backup"
    assert upstream["fallback"] is True
    assert [(a["model"], a["status"]) for a in upstream["attempts"]] == [
        ("down", 502),
        ("down", 502),
        ("backup", 200),
    ]


async def test_fallback_after_the_primary_keeps_failing(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, fallbacks=[{"primary": ["backup"]}])
    stub_upstream.inject(Fault(status=503, message="overloaded"))
    resp = await proxy.chat([{"role": "user", "content": "x"}], model="primary")
    assert resp.status_code == 200, resp.text
    assert [r.body["model"] for r in stub_upstream.received] == ["primary-model", "backup-model"]
    # The session is the client's conversation whichever entry answered.
    again = await proxy.chat(
        [
            {"role": "user", "content": "x"},
            resp.json()["choices"][0]["message"],
            {"role": "user", "content": "y"},
        ],
        model="primary",
    )
    assert again.status_code == 200, again.text
    assert again.headers["X-Memory-Session"] == resp.headers["X-Memory-Session"]


async def test_every_entry_failing_returns_the_last_error(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, fallbacks=[{"primary": ["backup"]}])
    stub_upstream.inject(Fault(status=500, message="first"))
    stub_upstream.inject(Fault(status=503, message="second"))
    resp = await proxy.chat([{"role": "user", "content": "x"}], model="primary")
    error = _error(resp, 503)
    assert "second" in error["message"]
    assert len(stub_upstream.received) == 2


async def test_timeout_and_reset_are_retried(proxy_factory: Any, stub_upstream: Any) -> None:
    proxy = await proxy_factory(
        model_list=_models(stub_upstream.url),
        router_settings={**FAST, "num_retries": 2},
        server={"request_timeout_s": 0.5},
    )
    stub_upstream.inject(Fault(delay_s=2))
    stub_upstream.inject(Fault(reset=True))
    resp = await proxy.chat([{"role": "user", "content": "third time lucky"}])
    assert resp.status_code == 200, resp.text
    assert len(stub_upstream.received) == 3
    statuses = [a["status"] for a in (await _record(proxy, resp))["upstream"]["attempts"]]
    assert statuses == [504, 502, 200]


async def test_stream_falls_back_before_its_first_chunk(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, fallbacks=[{"primary": ["backup"]}])
    stub_upstream.inject(Fault(cut_after_chunks=0))
    status, lines = await _stream_lines(proxy, "primary", "stream it")
    assert status == 200
    assert lines[-1] == "data: [DONE]"
    assert _streamed_text(lines) == "echo: stream it"
    received = stub_upstream.received
    assert [r.body["model"] for r in received] == ["primary-model", "backup-model"]
    assert [r.stream_end for r in received] == ["cut", "done"]


async def test_stream_is_retried_on_a_status_before_its_first_chunk(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(proxy_factory, stub_upstream, num_retries=1)
    stub_upstream.inject(Fault(status=429, retry_after="0"))
    status, lines = await _stream_lines(proxy, "stub", "again")
    assert status == 200
    assert _streamed_text(lines) == "echo: again"
    assert len(stub_upstream.received) == 2


async def test_stream_is_not_retried_after_its_first_chunk(
    proxy_factory: Any, stub_upstream: Any
) -> None:
    proxy = await _harness(
        proxy_factory, stub_upstream, num_retries=2, fallbacks=[{"primary": ["backup"]}]
    )
    stub_upstream.inject(Fault(cut_after_chunks=2))
    status, lines = await _stream_lines(proxy, "primary", "a long answer please")
    assert status == 200
    assert lines[-1] != "data: [DONE]"
    assert "error" in json.loads(lines[-1][6:])
    # The client already holds two chunks: a retry would duplicate them.
    assert len(stub_upstream.received) == 1


def test_fallbacks_must_name_model_list_entries(tmp_path: Any) -> None:
    config = {
        "model_list": _models("http://127.0.0.1:1/v1"),
        "router_settings": {"fallbacks": [{"primary": ["nope"]}]},
    }
    with pytest.raises(ConfigError, match=r"router_settings\.fallbacks: 'nope'"):
        settings_from_dict(config, env={})


def test_litellm_router_settings_are_accepted() -> None:
    config = {
        "model_list": _models("http://127.0.0.1:1/v1"),
        "router_settings": {"num_retries": 3, "routing_strategy": "simple-shuffle"},
    }
    settings = settings_from_dict(config, env={})
    assert settings.num_retries == 3


@pytest.mark.parametrize(
    ("value", "expected"),
    [("3", 3.0), ("0.5", 0.5), ("-2", 0.0), ("soon", None), ("", None), (None, None)],
)
def test_retry_after_parsing(value: str | None, expected: float | None) -> None:
    assert retry_after_seconds(value) == expected


def test_retry_after_as_an_http_date() -> None:
    from email.utils import formatdate

    seconds = retry_after_seconds(formatdate(time.time() + 30, usegmt=True))
    assert seconds is not None
    assert 25 <= seconds <= 31


async def test_a_stream_cut_midway_keeps_the_users_turn_and_no_half_answer(
    proxy: Any, stub_upstream: Any
) -> None:
    stub_upstream.inject(Fault(cut_after_chunks=2))
    history = [{"role": "user", "content": "draft the packing list for the ski trip"}]
    body = {"model": "stub", "messages": history, "stream": True}
    async with proxy.client.stream("POST", "/v1/chat/completions", json=body) as resp:
        assert resp.status_code == 200
        session = resp.headers["X-Memory-Session"]
        lines = [line async for line in resp.aiter_lines() if line.startswith("data: ")]
    assert lines[-1] != "data: [DONE]"
    error = json.loads(lines[-1][6:])["error"]
    assert error["message"]
    assert SECRET not in json.dumps(error)
    assert _streamed_text(lines)  # some of the answer did arrive before the cut
    await proxy.settle()
    stored = await proxy.services.store.load_messages(session)
    assert [(m.role, m.text) for m in stored] == [("user", history[0]["content"])]

    # The client retries the same turn: the session goes on, the answer is stored once.
    retry = await proxy.chat(history)
    assert retry.status_code == 200, retry.text
    assert retry.headers["X-Memory-Session"] == session
    history += [
        {"role": "assistant", "content": retry.json()["choices"][0]["message"]["content"]},
        {"role": "user", "content": "add gloves"},
    ]
    after = await proxy.chat(history)
    assert after.status_code == 200, after.text
    assert after.headers["X-Memory-Session"] == session
    await proxy.settle()
    stored = await proxy.services.store.load_messages(session)
    assert [m.role for m in stored] == ["user", "assistant", "user", "assistant"]
    assert stored[1].text == history[1]["content"]
