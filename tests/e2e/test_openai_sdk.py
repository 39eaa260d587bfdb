"""End to end: `memproxy serve` as a subprocess, driven by the official openai SDK."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml

from proxy.stub.state import Fault
from tests.conftest import make_config
from tests.e2e.serving import free_port, serve

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def served(stub: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("e2e")
    config = make_config(stub.url, tmp / "memproxy.db", server={"request_timeout_s": 5})
    config_path = tmp / "config.yaml"
    config_path.write_text(yaml.safe_dump(config))
    port = free_port()
    proc = serve(config_path, port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def client(served: str, stub: Any) -> openai.OpenAI:
    stub.reset()
    return openai.OpenAI(base_url=f"{served}/v1", api_key="sk-client", max_retries=0)


def test_plain_completion(client: openai.OpenAI, stub: Any) -> None:
    raw = client.chat.completions.with_raw_response.create(
        model="stub", messages=[{"role": "user", "content": "hello sdk"}]
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "echo: hello sdk"
    assert completion.usage is not None
    assert completion.usage.total_tokens > 0
    assert raw.headers["x-memory-mode"] == "managed"
    assert len(raw.headers["x-memory-request-id"]) == 26
    assert stub.received[-1].body["messages"] == [{"role": "user", "content": "hello sdk"}]


def test_streamed_with_usage(client: openai.OpenAI) -> None:
    stream = client.chat.completions.create(
        model="stub",
        messages=[{"role": "user", "content": "stream this please"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, usage = "", None
    for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
        if chunk.usage:
            usage = chunk.usage
    assert text == "echo: stream this please"
    assert usage is not None
    assert usage.total_tokens > 0


def test_tool_call_round_trip(client: openai.OpenAI, stub: Any) -> None:
    tools: Any = [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            },
        }
    ]
    messages: Any = [{"role": "user", "content": "weather in Oslo?"}]
    first = client.chat.completions.create(model="stub", messages=messages, tools=tools)
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "rainy, 4C"})
    second = client.chat.completions.create(model="stub", messages=messages, tools=tools)
    assert second.choices[0].message.content == "echo: rainy, 4C"
    assert stub.received[-1].body["messages"][-1]["tool_call_id"] == call.id


def test_upstream_429_and_500(client: openai.OpenAI, stub: Any) -> None:
    stub.inject(Fault(status=429, retry_after="3", message="too many"))
    with pytest.raises(openai.RateLimitError) as rate:
        client.chat.completions.create(model="stub", messages=[{"role": "user", "content": "x"}])
    assert rate.value.response.headers["retry-after"] == "3"
    stub.inject(Fault(status=500, message="boom"))
    with pytest.raises(openai.InternalServerError):
        client.chat.completions.create(model="stub", messages=[{"role": "user", "content": "x"}])


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"model": "stub", "messages": "not a list"}, openai.BadRequestError),
        (
            {"model": "stub", "messages": [{"role": "wizard", "content": "x"}]},
            openai.BadRequestError,
        ),
        (
            {"model": "stub", "messages": [{"role": "user", "content": [{"type": "blob"}]}]},
            openai.BadRequestError,
        ),
        (
            {"model": "no-such-model", "messages": [{"role": "user", "content": "x"}]},
            openai.NotFoundError,
        ),
    ],
)
def test_bad_input(client: openai.OpenAI, kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        client.chat.completions.create(**kwargs)
    body = caught.value.body  # type: ignore[attr-defined]
    assert set(body) >= {"message", "type", "param", "code"}


def test_malformed_json_and_oversize(served: str) -> None:
    bad = httpx.post(
        f"{served}/v1/chat/completions",
        content=b"{nope",
        headers={"content-type": "application/json"},
    )
    assert bad.status_code == 400
    assert set(bad.json()["error"]) == {"message", "type", "param", "code"}
    missing_model = httpx.post(
        f"{served}/v1/chat/completions", json={"messages": [{"role": "user", "content": "x"}]}
    )
    assert missing_model.status_code == 400
    huge = httpx.post(
        f"{served}/v1/chat/completions",
        content=b"x" * (21 * 1024 * 1024),
        headers={"content-type": "application/json"},
        timeout=30,
    )
    assert huge.status_code == 413


def test_serve_refuses_public_host_without_keys(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("model_list: []\n")
    proc = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "serve", "--config", str(config), "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "--insecure" in proc.stderr


def test_invalid_config_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("memory:\n  budget_tokens: lots\n")
    proc = subprocess.run(
        [sys.executable, "-m", "proxy.cli", "serve", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 2
    assert "memory.budget_tokens" in proc.stderr
