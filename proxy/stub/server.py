"""The stub upstream's app (`build_stub_app`: every route) and its server
(`StubUpstream`: uvicorn in a daemon thread on 127.0.0.1:<free port>, with its
own event loop).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque

import uvicorn
from starlette.applications import Starlette
from starlette.routing import Route

from proxy.stub.chat import ChatRoutes
from proxy.stub.embeddings import EmbeddingRoutes
from proxy.stub.passthrough import passthrough_routes
from proxy.stub.recorder import Recorder
from proxy.stub.state import Fault, RecordedRequest, Reply, StubState


def build_stub_app(state: StubState) -> Starlette:
    recorder = Recorder(state)
    chat, embeddings = ChatRoutes(recorder), EmbeddingRoutes(recorder)
    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat.chat, methods=["POST"]),
            Route("/chat/completions", chat.chat, methods=["POST"]),
            Route("/v1/models", chat.models, methods=["GET"]),
            Route("/v1/embeddings", embeddings.embeddings, methods=["POST"]),
            Route("/embeddings", embeddings.embeddings, methods=["POST"]),
            *passthrough_routes(recorder),
            # Anthropic's Messages API (litellm's native path for Anthropic-family models).
            Route("/v1/messages", chat.anthropic, methods=["POST"]),
        ]
    )


class StubUpstream:
    """The stub served by uvicorn in a daemon thread on 127.0.0.1:<free port>."""

    def __init__(self) -> None:
        self.state = StubState()
        # proto=IPPROTO_TCP so asyncio sets TCP_NODELAY on accepted connections;
        # without it every response waits ~40 ms for the peer's delayed ACK.
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(
            build_stub_app(self.state),
            log_level="critical",
            lifespan="off",
            access_log=False,
            # Longer than the client pool's idle expiry (httpx: 5 s), as real providers
            # keep it: with both at 5 s, a loaded machine lets the server close a
            # connection the client is reusing ("Connection error" under load).
            timeout_keep_alive=60,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, name="stub-upstream", daemon=True)

    @property
    def url(self) -> str:
        """Base URL in the form litellm's `api_base` expects for OpenAI-compatible servers."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def received(self) -> list[RecordedRequest]:
        return self.state.received

    def _run(self) -> None:
        self._server.run(sockets=[self._sock])

    def start(self) -> StubUpstream:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("stub upstream did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)
        self._sock.close()

    def inject(self, fault: Fault, times: int = 1) -> None:
        with self.state.lock:
            self.state.faults.extend([fault] * times)

    def queue_replies(self, contains: str, *replies: Reply) -> None:
        """Answer the next requests whose last user/tool message contains `contains`
        with `replies`, one each, in order (then as before: responder, script, echo)."""
        with self.state.lock:
            self.state.queued.append((contains, deque(replies)))

    def reset(self) -> None:
        with self.state.lock:
            self.state.received.clear()
            self.state.queued.clear()
            self.state.faults.clear()
            self.state.script.clear()
            self.state.responder = None
            self.state.chunk_delay_s = 0.0
            self.state.usage_style = "openai"
            self.state.files.clear()
        self.state.cache.clear()

    def __enter__(self) -> StubUpstream:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
