"""Shared plumbing for benchmarks that talk HTTP to an in-process proxy.

The proxy app runs under uvicorn on a free 127.0.0.1 port in this process's
event loop (as `memproxy eval` does), in front of the local stub upstream,
with a temporary SQLite store: real HTTP on both sides, no network.
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import uvicorn

# litellm would otherwise fetch its model cost map over the network at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from proxy.config import settings_from_dict
from proxy.http.app import create_app
from proxy.settings import Settings


def stub_settings(stub_url: str, db_path: Path, memory: dict[str, Any] | None = None) -> Settings:
    """A config with one model, `stub`, served by the stub upstream at `stub_url`."""
    return settings_from_dict(
        {
            "model_list": [
                {
                    "model_name": "stub",
                    "litellm_params": {
                        "model": "openai/stub-model",
                        "api_base": stub_url,
                        "api_key": "bench",
                    },
                    "model_info": {"max_input_tokens": 128_000},
                }
            ],
            "memory": {"database_url": f"sqlite+aiosqlite:///{db_path}", **(memory or {})},
        },
        env={},
    )


def _free_socket() -> socket.socket:
    """A listening socket for uvicorn, with Nagle off.

    asyncio turns Nagle off only for sockets whose `proto` is IPPROTO_TCP; a
    plain `socket.socket()` has proto 0, and then every response waits ~40 ms
    for the client's delayed ACK (measured: 44 ms per request, against 1-2 ms).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@asynccontextmanager
async def serve_proxy(settings: Settings) -> AsyncIterator[str]:
    """Serve `create_app(settings)` on 127.0.0.1; yields its base URL."""
    sock = _free_socket()
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings), log_level="warning", access_log=False)
    )
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        while not server.started:
            if serving.done():
                serving.result()  # re-raises the start-up error
            await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await serving
        sock.close()
