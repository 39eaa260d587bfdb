"""The proxy as a plain OpenAI-compatible gateway (in-process, real stub upstream)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from proxy.stub.state import Fault

SECRET = "sk-provider-secret-123"


def _assert_openai_error(resp: Any, status: int) -> dict[str, Any]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["message"]
    assert "Traceback" not in resp.text
    assert SECRET not in resp.text
    return body["error"]  # type: ignore[no-any-return]


async def test_plain_completion_keeps_openai_shape_and_forwards_unchanged(
    proxy: Any, stub_upstream: Any
) -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "hi there"}], "name": "ann"},
    ]
    resp = await proxy.chat(messages)
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"]["content"] == "echo: hi there"
    assert body["choices"][0]["finish_reason"] == "stop"
    assert body["usage"]["total_tokens"] > 0
    assert len(resp.headers["X-Memory-Request-Id"]) == 26  # ULID
    assert resp.headers["X-Memory-Mode"] == "managed"
    assert int(resp.headers["X-Memory-Raw-Tokens"]) > 0
    received = stub_upstream.received[-1].body
    assert received["messages"] == messages
    assert received["model"] == "stub-model"
    assert SECRET not in resp.text


async def test_every_client_field_reaches_the_provider_unchanged(
    proxy: Any, stub_upstream: Any
) -> None:
    fields: dict[str, Any] = {
        "temperature": 0.2,
        "top_p": 0.9,
        "n": 1,
        "stop": ["END"],
        "seed": 7,
        "logprobs": True,
        "top_logprobs": 2,
        "max_tokens": 50,
        "max_completion_tokens": 60,
        "user": "user-42",
        "metadata": {"team": "a"},
        "reasoning_effort": "low",
        "response_format": {"type": "json_object"},
        "parallel_tool_calls": False,
        "presence_penalty": 0.1,
        "frequency_penalty": 0.2,
        "logit_bias": {"50256": -100},
    }
    resp = await proxy.chat([{"role": "user", "content": "json please"}], **fields)
    assert resp.status_code == 200, resp.text
    received = stub_upstream.received[-1].body
    for key, value in fields.items():
        assert received.get(key) == value, key


async def test_tool_call_round_trip(proxy: Any, stub_upstream: Any) -> None:
    tools = [
        {
            "type": "function",
            "function": {
                "name": "lookup",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        }
    ]
    first = await proxy.chat(
        [{"role": "user", "content": "find it"}], tools=tools, tool_choice="auto"
    )
    assert first.status_code == 200, first.text
    choice = first.json()["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    call = choice["message"]["tool_calls"][0]
    assert stub_upstream.received[-1].body["tools"] == tools
    assert stub_upstream.received[-1].body["tool_choice"] == "auto"
    history = [
        {"role": "user", "content": "find it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": '{"answer": 42}'},
    ]
    second = await proxy.chat(history, tools=tools)
    assert second.status_code == 200, second.text
    assert second.json()["choices"][0]["message"]["content"] == 'echo: {"answer": 42}'
    assert stub_upstream.received[-1].body["messages"][-1]["tool_call_id"] == call["id"]


async def test_streaming_relays_chunks_and_usage(proxy: Any, stub_upstream: Any) -> None:
    body = {
        "model": "stub",
        "messages": [{"role": "user", "content": "stream me a longer answer please"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    async with proxy.client.stream("POST", "/v1/chat/completions", json=body) as resp:
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        assert resp.headers["x-accel-buffering"] == "no"
        assert resp.headers["X-Memory-Request-Id"]
        lines = [line async for line in resp.aiter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in lines[:-1]]
    text = "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices")
    )
    assert text == "echo: stream me a longer answer please"
    assert any(c.get("usage") for c in chunks)
    assert stub_upstream.received[-1].body["stream_options"] == {"include_usage": True}


@pytest.mark.parametrize(
    ("payload", "param"),
    [
        (b"{not json", None),
        (b'{"model": "stub", "messages": "hello"}', "messages"),
        (
            b'{"model": "stub", "messages": [{"role": "wizard", "content": "x"}]}',
            "messages[0].role",
        ),
        (
            b'{"model": "stub", "messages": [{"role": "user", "content": [{"type": "blob"}]}]}',
            "messages[0].content[0].type",
        ),
        (b'{"model": "stub", "messages": [{"role": "user", "content": 5}]}', "messages[0].content"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "model"),
        (
            b'{"model": "stub", "messages": [{"role": "tool", "content": "x"}]}',
            "messages[0].tool_call_id",
        ),
        (b'{"model": "stub", "messages": []}', "messages"),
        (b"\xff\xfe", None),
    ],
)
async def test_bad_input_is_a_400_in_openai_shape(proxy: Any, payload: bytes, param: Any) -> None:
    resp = await proxy.client.post(
        "/v1/chat/completions", content=payload, headers={"content-type": "application/json"}
    )
    error = _assert_openai_error(resp, 400)
    assert error["param"] == param


async def test_unknown_model_is_404(proxy: Any) -> None:
    resp = await proxy.chat([{"role": "user", "content": "x"}], model="nope")
    error = _assert_openai_error(resp, 404)
    assert error["code"] == "model_not_found"


async def test_body_over_limit_is_413(proxy_factory: Any) -> None:
    harness = await proxy_factory(server={"max_body_bytes": 1000})
    resp = await harness.chat([{"role": "user", "content": "x" * 2000}])
    _assert_openai_error(resp, 413)


async def test_upstream_429_keeps_status_and_retry_after(proxy: Any, stub_upstream: Any) -> None:
    stub_upstream.inject(Fault(status=429, retry_after="7", message="slow down"))
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    error = _assert_openai_error(resp, 429)
    assert "slow down" in error["message"]
    assert resp.headers["retry-after"] == "7"


async def test_upstream_500_keeps_status(proxy: Any, stub_upstream: Any) -> None:
    stub_upstream.inject(Fault(status=500, message="provider exploded"))
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    error = _assert_openai_error(resp, 500)
    assert "provider exploded" in error["message"]


async def test_upstream_timeout_is_504(proxy_factory: Any, stub_upstream: Any) -> None:
    harness = await proxy_factory(server={"request_timeout_s": 0.5})
    stub_upstream.inject(Fault(delay_s=2))
    resp = await harness.chat([{"role": "user", "content": "x"}])
    _assert_openai_error(resp, 504)


async def test_unreachable_upstream_is_502(proxy: Any) -> None:
    resp = await proxy.chat([{"role": "user", "content": "x"}], model="unreachable")
    _assert_openai_error(resp, 502)


async def test_connection_reset_is_502(proxy: Any, stub_upstream: Any) -> None:
    stub_upstream.inject(Fault(reset=True))
    resp = await proxy.chat([{"role": "user", "content": "x"}])
    _assert_openai_error(resp, 502)


async def test_stream_cut_midway_ends_with_error_event(proxy: Any, stub_upstream: Any) -> None:
    stub_upstream.inject(Fault(cut_after_chunks=2))
    body = {
        "model": "stub",
        "messages": [{"role": "user", "content": "a long answer please"}],
        "stream": True,
    }
    async with proxy.client.stream("POST", "/v1/chat/completions", json=body) as resp:
        lines = [line async for line in resp.aiter_lines() if line.startswith("data: ")]
    assert lines[-1] != "data: [DONE]"
    assert "error" in json.loads(lines[-1][6:])


async def test_api_keys_are_required_when_configured(proxy_factory: Any) -> None:
    harness = await proxy_factory(server={"api_keys": ["team-key-1"]})
    messages = [{"role": "user", "content": "x"}]
    missing = await harness.chat(messages)
    _assert_openai_error(missing, 401)
    wrong = await harness.chat(messages, headers={"Authorization": "Bearer nope"})
    _assert_openai_error(wrong, 401)
    right = await harness.chat(messages, headers={"Authorization": "Bearer team-key-1"})
    assert right.status_code == 200
    models = await harness.client.get("/v1/models")
    _assert_openai_error(models, 401)


async def test_models_and_health(proxy: Any) -> None:
    models = await proxy.client.get("/v1/models")
    assert models.status_code == 200
    assert [m["id"] for m in models.json()["data"]] == ["stub", "unreachable"]
    health = await proxy.client.get("/health")
    assert health.json() == {"status": "ok", "store": "ok"}


async def test_unknown_memory_mode_is_400(proxy: Any) -> None:
    resp = await proxy.chat([{"role": "user", "content": "x"}], headers={"X-Memory-Mode": "magic"})
    error = _assert_openai_error(resp, 400)
    assert error["param"] == "X-Memory-Mode"


@pytest.mark.parametrize("budget", ["-5", "0", "lots", "1e9999"])
async def test_invalid_budget_header_is_400(proxy: Any, budget: str) -> None:
    resp = await proxy.chat([{"role": "user", "content": "x"}], headers={"X-Memory-Budget": budget})
    _assert_openai_error(resp, 400)


async def test_a_continuation_with_a_bad_message_is_still_a_400(proxy: Any) -> None:
    # Resent turns that passed validation before are not checked again; a bad
    # new message, or an earlier one altered, is still named in the 400.
    history: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for text in ("one", "two"):
        history.append({"role": "user", "content": text})
        resp = await proxy.chat(history)
        assert resp.status_code == 200, resp.text
        history.append(
            {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]}
        )
    bad_new = [*history, {"role": "user", "content": 5}]
    error = _assert_openai_error(await proxy.chat(bad_new), 400)
    assert error["param"] == "messages[5].content"
    altered = [*history, {"role": "user", "content": "three"}]
    altered[3] = {"role": "wizard", "content": "one"}
    error = _assert_openai_error(await proxy.chat(altered), 400)
    assert error["param"] == "messages[3].role"
    bad_system = [
        {"role": "system", "content": None},
        *history[1:],
        {"role": "user", "content": "x"},
    ]
    error = _assert_openai_error(await proxy.chat(bad_system), 400)
    assert error["param"] == "messages[0].content"
    resp = await proxy.chat([*history, {"role": "user", "content": "three"}])
    assert resp.status_code == 200, resp.text
