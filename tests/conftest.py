"""Shared fixtures: a network guard, the stub upstream, the proxy in-process.

Tests talk to a real local OpenAI-compatible stub over HTTP through litellm;
the store is a real SQLite file per test. No test may leave the machine.
"""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex
_real_getaddrinfo = socket.getaddrinfo


def _loopback(address: Any) -> bool:
    if not isinstance(address, tuple) or not address:
        return isinstance(address, str | bytes)  # a unix socket path is local
    host = address[0]
    try:
        return host in ("localhost", "") or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
        raise AssertionError(f"test tried to reach a non-loopback address: {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> Any:
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _loopback(address):
        raise AssertionError(f"test tried to reach a non-loopback address: {address!r}")
    return _real_connect_ex(self, address)


def _guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name not in (None, "localhost") and not _loopback((name, 0)):
        raise AssertionError(f"test tried to resolve a non-loopback host: {name!r}")
    return _real_getaddrinfo(host, *args, **kwargs)


@pytest.fixture(autouse=True)
def _network_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any test that reaches a non-loopback address or needs a provider key."""
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    monkeypatch.setattr(socket, "getaddrinfo", _guarded_getaddrinfo)
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="session")
def stub() -> Iterator[Any]:
    from proxy.stub.server import StubUpstream

    upstream = StubUpstream().start()
    yield upstream
    upstream.stop()


@pytest.fixture
def stub_upstream(stub: Any) -> Any:
    stub.reset()
    return stub


def make_config(stub_url: str, db_path: Path, **overrides: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "model_list": [
            {
                "model_name": "stub",
                "litellm_params": {
                    "model": "openai/stub-model",
                    "api_base": stub_url,
                    "api_key": "sk-provider-secret-123",
                },
                "model_info": {"max_input_tokens": 16000},
            },
            {
                "model_name": "unreachable",
                "litellm_params": {
                    "model": "openai/stub-model",
                    "api_base": "http://127.0.0.1:9/v1",
                    "api_key": "sk-provider-secret-123",
                },
            },
        ],
        "memory": {"database_url": f"sqlite+aiosqlite:///{db_path}"},
        "server": {"request_timeout_s": 5},
    }
    for section, values in overrides.items():
        if isinstance(values, dict) and isinstance(config.get(section), dict):
            config[section] = {**config[section], **values}
        else:
            config[section] = values
    return config


@pytest.fixture
def config_factory(stub_upstream: Any, tmp_path: Path) -> Any:
    def factory(**overrides: Any) -> dict[str, Any]:
        return make_config(stub_upstream.url, tmp_path / "memproxy.db", **overrides)

    return factory


class ProxyHarness:
    """The app in-process behind an httpx client, plus access to its services."""

    def __init__(self, app: Any, client: Any) -> None:
        self.app = app
        self.client = client

    @property
    def services(self) -> Any:
        return self.app.state.services

    async def settle(self) -> None:
        await self.services.pipeline.drain()

    async def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        headers: dict[str, str] | None = None,
        model: str = "stub",
        **body: Any,
    ) -> Any:
        return await self.client.post(
            "/v1/chat/completions",
            json={"model": model, "messages": messages, **body},
            headers=headers or {},
        )


@pytest.fixture
async def proxy_factory(config_factory: Any) -> AsyncIterator[Any]:
    import httpx

    from proxy.config import settings_from_dict
    from proxy.http.app import create_app

    stacks: list[Any] = []

    async def factory(**overrides: Any) -> ProxyHarness:
        settings = settings_from_dict(config_factory(**overrides), env={})
        app = create_app(settings)
        lifespan = app.router.lifespan_context(app)
        await lifespan.__aenter__()
        client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://memproxy.test", timeout=30
        )
        stacks.append((lifespan, client, app))
        return ProxyHarness(app, client)

    yield factory
    for lifespan, client, app in reversed(stacks):
        await app.state.services.pipeline.drain()
        await client.aclose()
        await lifespan.__aexit__(None, None, None)


@pytest.fixture
async def proxy(proxy_factory: Any) -> ProxyHarness:
    harness: ProxyHarness = await proxy_factory()
    return harness
