"""A real OpenAI-compatible upstream on 127.0.0.1 for tests, `eval` and `bench`.

It records every request body it receives (the assertion point of the tests),
answers deterministically (an echo, a tool call when tools are offered, a
scripted reply keyed by the last user/tool message, or replies queued in order
for prompts containing a text: `queue_replies`), serves `/v1/embeddings`
with vectors that carry real similarity (`embed_text`), the other OpenAI routes
(`proxy.stub_passthrough`: completions, moderations, images, audio, files,
batches), and injects faults on
demand: an HTTP status (with Retry-After), a delay, a reset connection, or a
stream cut mid-way. It keeps a prompt cache as providers do (`PromptCache`) and
reports `usage.prompt_tokens_details.cached_tokens` (or, with
`usage_style = "anthropic"`, Anthropic's cache read / write fields as well).
For streams it records how each one ended (`stream_end`), so a test can see
that a client's disconnect reached the provider. It runs in a background
thread with its own event loop.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import json
import math
import re
import socket
import threading
import time
import unicodedata
from array import array
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from policies.assemble.cache_pricing import RULES, CacheRule, cached_prefix
from proxy.records import common_chars as _common_chars
from proxy.records import serialised
from proxy.stub_passthrough import StubFiles, passthrough_routes
from proxy.tokens import TokenCounter

Reply = dict[str, Any]  # an assistant message: {"content": ...} or {"tool_calls": [...]}


@dataclass
class Fault:
    """One injected failure, consumed by the next matching request."""

    status: int | None = None  # answer with this HTTP status and an OpenAI error body
    retry_after: str | None = None
    delay_s: float = 0.0  # sleep before answering (timeouts)
    reset: bool = False  # close the connection without an answer
    cut_after_chunks: int | None = None  # streaming: stop after N chunks, no [DONE]
    message: str = "injected fault"
    path: str | None = None  # only requests to this path (e.g. "/v1/embeddings") take it
    # Only requests whose last user/tool message contains this text take it (a
    # failure in the middle of a scripted run, at a chosen prompt).
    contains: str | None = None


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes
    at: float
    # Streams only: "done" (sent [DONE]), "cut" (injected), "closed" (the
    # client went away mid-stream); None while it runs.
    stream_end: str | None = None


@dataclass
class StubState:
    received: list[RecordedRequest] = field(default_factory=list)
    faults: deque[Fault] = field(default_factory=deque)
    script: dict[str, Reply] = field(default_factory=dict)
    responder: Callable[[dict[str, Any]], Reply | None] | None = None
    # Replies in order for prompts containing a text (`StubUpstream.queue_replies`).
    queued: list[tuple[str, deque[Reply]]] = field(default_factory=list)
    chunk_delay_s: float = 0.0
    # "openai": cached_tokens only; "anthropic": cache_read_input_tokens and
    # cache_creation_input_tokens too (as litellm's Anthropic usage carries them).
    usage_style: str = "openai"
    cache: PromptCache = field(default_factory=lambda: PromptCache())
    lock: threading.Lock = field(default_factory=threading.Lock)
    files: StubFiles = field(default_factory=StubFiles)  # files and batches (pass-through)


def _last_prompt_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") in ("user", "tool"):
            content = msg.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _default_reply(body: dict[str, Any]) -> Reply:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if body.get("tools") and isinstance(last, dict) and last.get("role") == "user":
        tool = body["tools"][0]["function"]["name"]
        return {
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{len(messages)}",
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps({"q": "stub"})},
                }
            ],
        }
    return {"content": f"echo: {_last_prompt_text(body)}"}


@functools.cache
def stub_token_counter() -> TokenCounter:
    """Built on first use: tiktoken loads its BPE file then, not at import."""
    return TokenCounter("cl100k_base")


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def prompt_texts(body: dict[str, Any]) -> list[str]:
    """A request's prompt as a provider caches it: the tools first, then each message
    serialised (role, content, tool calls), so equal prompts give equal texts."""
    texts = []
    if body.get("tools"):
        texts.append("<tools>" + json.dumps(body["tools"], sort_keys=True, ensure_ascii=False))
    texts += [serialised(m) for m in body.get("messages") or [] if isinstance(m, dict)]
    return texts


class PromptCache:
    """The prompts a provider has cached, as an index of their prefixes.

    Every whole-message prefix of every prompt seen (per model) is kept under a
    hash of its texts, with its size in tokens and the next text of the latest
    prompt that continued it; a lookup walks the new prompt's prefixes until one
    is not cached, then counts the text it shares with that next message. The
    cost is one hash per message, however many prompts are cached (the least
    recently used prefixes go first past `max_prefixes`).
    """

    def __init__(self, max_prefixes: int = 100_000) -> None:
        self._prefixes: OrderedDict[int, tuple[int, str | None]] = OrderedDict()
        self._max = max_prefixes
        self._lock = threading.Lock()

    def lookup_and_add(
        self,
        model: str,
        texts: list[str],
        prompt_tokens: int,
        count: Callable[[str], int] | None = None,
        rule: CacheRule = RULES["openai"],
    ) -> int:
        """Tokens of this prompt a provider serves from its cache (0 for a fresh
        prompt or one under the rule's minimum; else the shared prefix rounded down
        to the rule's blocks); then the prompt is cached for the next ones."""
        count = count or stub_token_counter()
        # Python's own hash of (previous key, text): one C pass over each text (a
        # 64-bit collision would only misreport a test's cached tokens).
        keys, key = [], hash(model)
        for text in texts:
            key = hash((key, text))
            keys.append(key)
        with self._lock:
            known: list[int] = []  # tokens through each cached prefix
            following = None
            for key in keys:
                found = self._prefixes.get(key)
                if found is None:
                    break
                known.append(found[0])
                following = found[1]
            matched = len(known)
            whole = known[-1] if known else 0
            shared = whole
            if following is not None and matched < len(texts):
                shared += count(texts[matched][: _common_chars(following, texts[matched])])
            # Only the texts past the cached prefix are counted (usually the new turns).
            total = whole
            for i, key in enumerate(keys):
                if i < matched:
                    through = known[i]
                else:
                    total += count(texts[i])
                    through = total
                self._prefixes[key] = (through, texts[i + 1] if i + 1 < len(texts) else None)
                self._prefixes.move_to_end(key)
            while len(self._prefixes) > self._max:
                self._prefixes.popitem(last=False)
        return min(prompt_tokens, cached_prefix(prompt_tokens, shared, rule))

    def clear(self) -> None:
        with self._lock:
            self._prefixes.clear()


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """Usage counted as a provider would (cl100k, 4 tokens of framing per
    message), so costs computed from it compare fairly across prompts."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    prompt = sum(stub_token_counter()(_text(m.get("content") or "")) + 4 for m in messages)
    answer = reply if reply.get("tool_calls") else reply.get("content") or ""
    completion = stub_token_counter()(_text(answer))
    return {
        "prompt_tokens": max(1, prompt),
        "completion_tokens": max(1, completion),
        "total_tokens": max(1, prompt) + max(1, completion),
    }


# --- embeddings -----------------------------------------------------------------------

EMBEDDING_DIMENSIONS = 512
_WORD_RE = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CJK_START = "\u3400"
_STOPWORDS = frozenset(
    "a an the and or of to in on at for with from by as is are was be it this that i me my we "
    "our you your do does please can could would will just am any".split()
)


def _features(text: str) -> dict[str, float]:
    """Features of `text`: the character trigrams of each word (sharing one weight per
    word), so "allergic" and "allergies" are near though no whole word is shared;
    for Chinese, characters and bigrams, no segmentation needed. Word identity on
    top would only add weight to exact repeats, which lexical retrieval finds anyway."""
    out: dict[str, float] = {}
    for token in _WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold()):
        if token[0] >= _CJK_START:
            grams = [*token, *(token[i : i + 2] for i in range(len(token) - 1))]
            for gram in grams:
                out[f"z:{gram}"] = out.get(f"z:{gram}", 0.0) + (1.0 if len(gram) == 2 else 0.5)
            continue
        if token in _STOPWORDS:
            continue
        padded = f"<{token}>"
        trigrams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        for gram in trigrams:
            out[f"c:{gram}"] = out.get(f"c:{gram}", 0.0) + 1.0 / math.sqrt(len(trigrams))
    return out


def embed_text(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic L2-normalised vector (signed feature hashing): texts sharing
    words or parts of words are close, unrelated texts are near orthogonal."""
    vector = [0.0] * dimensions
    for feature, weight in _features(text).items():
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dimensions
        vector[slot] += weight if digest[4] & 1 else -weight
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


def _embedding_inputs(body: dict[str, Any]) -> list[str] | None:
    """The texts to embed: strings, or token arrays (cl100k, as OpenAI takes them, e.g.
    from LangChain's length check), decoded back to text; None: neither."""
    value = body.get("input")
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, int) for v in value):
        value = [value]
    if all(isinstance(v, str) for v in value):
        return list(value)
    if all(isinstance(v, list) and all(isinstance(t, int) for t in v) for v in value):
        return [stub_token_counter().decode(tokens) for tokens in value]
    return None


class _Cut(ConnectionResetError):
    """An injected mid-stream cut (told apart from a client's disconnect)."""


async def _reset_body() -> AsyncIterator[bytes]:
    raise ConnectionResetError("stub: injected reset")
    yield b""  # pragma: no cover - makes this an async generator


async def _body_of(request: Request, raw: bytes) -> dict[str, Any]:
    """JSON, or a multipart form (an upload as its name, size, type and bytes), or {}."""
    if request.headers.get("content-type", "").startswith("multipart/form-data"):
        body: dict[str, Any] = {}
        async with request.form() as form:
            for key, value in form.multi_items():
                if isinstance(value, str):
                    body[key] = value
                    continue
                content = await value.read()
                body[key] = {
                    "filename": value.filename,
                    "bytes": len(content),
                    "content_type": value.content_type,
                    "content": content,
                }
        return body
    if not raw:
        return {}
    parsed = json.loads(raw)
    if not isinstance(parsed, dict):
        raise ValueError("not an object")
    return parsed


class Recorder:
    """Every request recorded, and the injected fault it takes (`StubState`)."""

    def __init__(self, state: StubState) -> None:
        self.state = state

    def _next_fault(self, path: str, body: dict[str, Any]) -> Fault | None:
        with self.state.lock:
            for fault in self.state.faults:
                if fault.contains is not None and fault.contains not in _last_prompt_text(body):
                    continue
                if fault.path is None or fault.path == path:
                    self.state.faults.remove(fault)
                    return fault
            return None

    async def received(
        self, request: Request
    ) -> tuple[dict[str, Any], Fault | None, RecordedRequest] | Response:
        """Record the request and take its fault: a Response when the fault answers."""
        raw = await request.body()
        try:
            body = await _body_of(request, raw)
        except ValueError:
            return JSONResponse({"error": {"message": "bad json"}}, status_code=400)
        recorded = RecordedRequest(request.url.path, dict(request.headers), body, raw, time.time())
        with self.state.lock:
            self.state.received.append(recorded)
        fault = self._next_fault(request.url.path, body)
        if fault and fault.delay_s:
            await asyncio.sleep(fault.delay_s)
        if fault and fault.reset:
            # Headers go out, then the connection drops: what a client sees when
            # a load balancer or the provider resets a connection mid-answer.
            return StreamingResponse(_reset_body(), media_type="application/json")
        if fault and fault.status:
            headers = {"retry-after": fault.retry_after} if fault.retry_after else {}
            err = {"message": fault.message, "type": "stub_error", "param": None, "code": None}
            return JSONResponse({"error": err}, status_code=fault.status, headers=headers)
        return body, fault, recorded


class _ChatRoutes:
    """Chat completions (streamed or not), Anthropic's Messages, the model list."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.state = recorder.state

    def _queued_reply(self, body: dict[str, Any]) -> Reply | None:
        prompt = _last_prompt_text(body)
        with self.state.lock:
            for text, replies in self.state.queued:
                if replies and text in prompt:
                    return replies.popleft()
        return None

    def _reply_for(self, body: dict[str, Any]) -> Reply:
        queued = self._queued_reply(body)
        if queued is not None:
            return queued
        if self.state.responder is not None:
            reply = self.state.responder(body)
            if reply is not None:
                return reply
        scripted = self.state.script.get(_last_prompt_text(body))
        return scripted if scripted is not None else _default_reply(body)

    async def chat(self, request: Request) -> Response:
        received = await self.recorder.received(request)
        if isinstance(received, Response):
            return received
        body, fault, recorded = received
        reply = self._reply_for(body)
        model = body.get("model", "stub")
        usage = self._usage(body, reply, str(model))
        if body.get("stream"):
            cut = fault.cut_after_chunks if fault else None
            return StreamingResponse(
                self._stream(body, reply, model, cut, recorded, usage),
                media_type="text/event-stream",
            )
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        message = {"role": "assistant", "content": reply.get("content")}
        if reply.get("tool_calls"):
            message["tool_calls"] = reply["tool_calls"]
        return JSONResponse(
            {
                "id": f"chatcmpl-stub{len(self.state.received)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": usage,
            }
        )

    def _usage(self, body: dict[str, Any], reply: Reply, model: str) -> dict[str, Any]:
        """The answer's usage, the prompt looked up in (then added to) the prompt cache."""
        usage = _usage(body, reply)
        prompt = usage["prompt_tokens"]
        cached = self.state.cache.lookup_and_add(model, prompt_texts(body), prompt)
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
        if self.state.usage_style == "anthropic":
            # Anthropic's cache: the shared prefix is read, the rest of the prompt written.
            usage["cache_read_input_tokens"] = cached
            usage["cache_creation_input_tokens"] = prompt - cached
        return usage

    async def _stream(
        self,
        body: dict[str, Any],
        reply: Reply,
        model: str,
        cut: int | None,
        recorded: RecordedRequest,
        usage: dict[str, Any],
    ) -> AsyncIterator[bytes]:
        try:
            async for part in self._chunks(body, reply, model, cut, usage):
                yield part
            recorded.stream_end = "done"
        except _Cut:
            recorded.stream_end = "cut"
            raise
        finally:
            if recorded.stream_end is None:
                recorded.stream_end = "closed"

    async def _chunks(
        self,
        body: dict[str, Any],
        reply: Reply,
        model: str,
        cut: int | None,
        usage: dict[str, Any],
    ) -> AsyncIterator[bytes]:
        base = {
            "id": f"chatcmpl-stub{len(self.state.received)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
        if reply.get("tool_calls"):
            for i, call in enumerate(reply["tool_calls"]):
                deltas.append({"tool_calls": [{"index": i, **call}]})
        else:
            text = reply.get("content") or ""
            step = max(1, len(text) // 4)
            deltas += [{"content": text[i : i + step]} for i in range(0, len(text), step)]
        finish = "tool_calls" if reply.get("tool_calls") else "stop"
        for n, delta in enumerate(deltas):
            if cut is not None and n >= cut:
                raise _Cut("stub: stream cut")
            chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
            yield f"data: {json.dumps(chunk)}\n\n".encode()
            if self.state.chunk_delay_s:
                await asyncio.sleep(self.state.chunk_delay_s)
        last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
        yield f"data: {json.dumps(last)}\n\n".encode()
        if (body.get("stream_options") or {}).get("include_usage"):
            last_chunk = {**base, "choices": [], "usage": usage}
            yield f"data: {json.dumps(last_chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    async def anthropic(self, request: Request) -> Response:
        from proxy.stub_anthropic import anthropic_messages

        return await anthropic_messages(request, self.recorder.received, self._reply_for)

    async def models(self, request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [{"id": "stub", "object": "model"}]})


class _EmbeddingRoutes:
    """Embeddings that carry real similarity (`embed_text`)."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    async def embeddings(self, request: Request) -> Response:
        received = await self.recorder.received(request)
        if isinstance(received, Response):
            return received
        body = received[0]
        texts = _embedding_inputs(body)
        if texts is None:
            err = {"message": "input must be a string or a list of strings",
                   "type": "invalid_request_error", "param": "input", "code": None}  # fmt: skip
            return JSONResponse({"error": err}, status_code=400)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = embed_text(text)
            encoded: Any = (
                base64.b64encode(array("f", vector).tobytes()).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = max(1, sum(stub_token_counter()(text) for text in texts))
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "stub-embedding"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )


def build_stub_app(state: StubState) -> Starlette:
    recorder = Recorder(state)
    chat, embeddings = _ChatRoutes(recorder), _EmbeddingRoutes(recorder)
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
