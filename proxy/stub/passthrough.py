"""The stub upstream's pass-through routes: OpenAI-shaped, deterministic answers.

Completions echo the prompt (streamed as `text_completion` chunks when asked),
moderations flag a text that contains `STUB_FLAG_WORD`, images are a fixed
1x1 PNG, speech is bytes derived from the input, transcriptions name the file
they were given, and files and batches live in memory. Every request is
recorded and takes injected faults like the chat route does (`Fault(path=...)`),
so tests can check that an upstream error reaches the client unchanged.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route

from proxy.stub.usage import stub_token_counter

if TYPE_CHECKING:
    from proxy.stub.recorder import Recorder

STUB_FLAG_WORD = "stubflagged"
# The smallest valid PNG (1x1, transparent): what every image route answers.
PNG_1X1_B64 = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
_CATEGORIES = ("harassment", "hate", "self-harm", "sexual", "violence")
# What OpenAI accepts (and refuses otherwise, with a 400).
_PURPOSES = frozenset({"assistants", "batch", "fine-tune", "vision", "user_data", "evals"})
_BATCH_ENDPOINTS = frozenset(
    {"/v1/responses", "/v1/chat/completions", "/v1/embeddings", "/v1/completions"}
)


def speech_bytes(text: str, size: int = 4096) -> bytes:
    """Deterministic 'audio': an ID3-looking header, then bytes hashed from the text."""
    seed = hashlib.sha256(text.encode()).digest()
    out = bytearray(b"ID3\x04\x00\x00\x00\x00\x00\x00")
    for n in itertools.count():
        if len(out) >= size:
            break
        out += hashlib.sha256(seed + n.to_bytes(4, "little")).digest()
    return bytes(out[:size])


def _error(status: int, message: str, param: str | None = None) -> JSONResponse:
    err = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    return JSONResponse({"error": err}, status_code=status)


@dataclass
class StubFiles:
    """Files and batches held in memory, per stub."""

    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    contents: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, dict[str, Any]] = field(default_factory=dict)
    counter: itertools.count[int] = field(default_factory=itertools.count)

    def clear(self) -> None:
        self.files.clear()
        self.contents.clear()
        self.batches.clear()


class _Routes:
    """Routes recorded, and faulted, like the stub's chat route."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder
        self.store = recorder.state.files

    async def _take(self, request: Request) -> dict[str, Any] | Response:
        received = await self.recorder.received(request)
        return received if isinstance(received, Response) else received[0]


class ModelRoutes(_Routes):
    """What a model answers: completions, moderations, images, audio."""

    async def completions(self, request: Request) -> Response:
        body = await self._take(request)
        if isinstance(body, Response):
            return body
        prompt = body.get("prompt")
        given = prompt if isinstance(prompt, list) else [prompt]
        prompts = [p for p in given if isinstance(p, str)]
        if len(prompts) != len(given):
            return _error(400, "prompt must be a string or a list of strings", "prompt")
        texts = [f"completion: {p}" for p in prompts]
        base = {
            "id": f"cmpl-stub{len(self.recorder.state.received)}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
        }
        usage = _text_usage(prompts, texts)
        if body.get("stream"):
            return StreamingResponse(
                _completion_chunks(base, texts, usage, body), media_type="text/event-stream"
            )
        choices = [
            {"text": t, "index": i, "logprobs": None, "finish_reason": "stop"}
            for i, t in enumerate(texts)
        ]
        return JSONResponse({**base, "choices": choices, "usage": usage})

    async def moderations(self, request: Request) -> Response:
        body = await self._take(request)
        if isinstance(body, Response):
            return body
        value = body.get("input")
        inputs = value if isinstance(value, list) else [value]
        results = []
        for text in inputs:
            flagged = STUB_FLAG_WORD in str(text)
            results.append(
                {
                    "flagged": flagged,
                    "categories": dict.fromkeys(_CATEGORIES, flagged),
                    "category_scores": dict.fromkeys(_CATEGORIES, 0.99 if flagged else 0.01),
                }
            )
        model = body.get("model") or "omni-moderation-latest"
        return JSONResponse({"id": "modr-stub", "model": model, "results": results})

    async def images(self, request: Request) -> Response:
        body = await self._take(request)
        if isinstance(body, Response):
            return body
        count = int(body.get("n") or 1)
        if body.get("response_format") == "url":
            data = [{"url": f"http://127.0.0.1/stub-{i}.png"} for i in range(count)]
        else:
            data = [{"b64_json": PNG_1X1_B64} for _ in range(count)]
        return JSONResponse({"created": int(time.time()), "data": data})

    async def transcription(self, request: Request) -> Response:
        body = await self._take(request)
        if isinstance(body, Response):
            return body
        upload = body.get("file")
        if not isinstance(upload, dict):
            return _error(400, "file is required", "file")
        text = f"transcript of {upload['filename']} ({upload['bytes']} bytes)"
        if body.get("response_format") in ("text", "srt", "vtt"):
            return PlainTextResponse(text)
        return JSONResponse({"text": text})

    async def speech(self, request: Request) -> Response:
        body = await self._take(request)
        if isinstance(body, Response):
            return body
        audio = speech_bytes(str(body.get("input", "")))

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(audio), 1024):
                yield audio[i : i + 1024]

        return StreamingResponse(chunks(), media_type="audio/mpeg")


class FileRoutes(_Routes):
    """Uploaded files, held in the stub's `StubFiles`."""

    async def create_file(self, request: Request) -> Response:
        body = await self._take(request)
        if isinstance(body, Response):
            return body
        upload = body.get("file")
        if not isinstance(upload, dict):
            return _error(400, "file is required", "file")
        if body.get("purpose") not in _PURPOSES:
            return _error(400, f"purpose must be one of {sorted(_PURPOSES)}", "purpose")
        file_id = f"file-stub{next(self.store.counter)}"
        self.store.contents[file_id] = upload["content"]
        obj = {
            "id": file_id,
            "object": "file",
            "bytes": upload["bytes"],
            "created_at": int(time.time()),
            "filename": upload["filename"],
            "purpose": body["purpose"],
            "status": "processed",
            "status_details": None,
        }
        self.store.files[file_id] = obj
        return JSONResponse(obj)

    async def list_files(self, request: Request) -> Response:
        if isinstance(received := await self._take(request), Response):
            return received
        purpose = request.query_params.get("purpose")
        data = [f for f in self.store.files.values() if purpose in (None, f["purpose"])]
        return JSONResponse({"object": "list", "data": data, "has_more": False})

    async def file(self, request: Request) -> Response:
        if isinstance(received := await self._take(request), Response):
            return received
        file_id = request.path_params["file_id"]
        obj = self.store.files.get(file_id)
        if obj is None:
            return _error(404, f"No such File object: {file_id}", "id")
        if request.method == "DELETE":
            del self.store.files[file_id]
            self.store.contents.pop(file_id, None)
            return JSONResponse({"id": file_id, "object": "file", "deleted": True})
        return JSONResponse(obj)

    async def file_content(self, request: Request) -> Response:
        if isinstance(received := await self._take(request), Response):
            return received
        file_id = request.path_params["file_id"]
        if file_id not in self.store.contents:
            return _error(404, f"No such File object: {file_id}", "id")
        return Response(self.store.contents[file_id], media_type="application/octet-stream")


class BatchRoutes(_Routes):
    """Batches over uploaded files, held in the stub's `StubFiles` (never run)."""

    async def create_batch(self, request: Request) -> Response:
        body = await self._take(request)
        if isinstance(body, Response):
            return body
        if body.get("endpoint") not in _BATCH_ENDPOINTS:
            return _error(400, f"endpoint must be one of {sorted(_BATCH_ENDPOINTS)}", "endpoint")
        if body.get("completion_window") != "24h":
            return _error(400, "completion_window must be '24h'", "completion_window")
        file_id = body.get("input_file_id")
        if file_id not in self.store.files:
            message = f"input_file_id {file_id!r} is not an uploaded file"
            return _error(400, message, "input_file_id")
        batch_id = f"batch_stub{next(self.store.counter)}"
        batch = {
            "id": batch_id,
            "object": "batch",
            "endpoint": body.get("endpoint"),
            "errors": None,
            "input_file_id": file_id,
            "completion_window": body.get("completion_window", "24h"),
            "status": "validating",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": int(time.time()),
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": body.get("metadata"),
        }
        self.store.batches[batch_id] = batch
        return JSONResponse(batch)

    async def list_batches(self, request: Request) -> Response:
        if isinstance(received := await self._take(request), Response):
            return received
        data = list(self.store.batches.values())
        first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
        return JSONResponse(
            {"object": "list", "data": data, "first_id": first, "last_id": last, "has_more": False}
        )

    async def batch(self, request: Request) -> Response:
        if isinstance(received := await self._take(request), Response):
            return received
        batch_id = request.path_params["batch_id"]
        batch = self.store.batches.get(batch_id)
        if batch is None:
            return _error(404, f"No batch found with id '{batch_id}'", "batch_id")
        if request.url.path.endswith("/cancel"):
            batch["status"] = "cancelled"
            batch["cancelled_at"] = int(time.time())
        return JSONResponse(batch)


def _text_usage(prompts: list[str], texts: list[str]) -> dict[str, int]:
    prompt = max(1, sum(stub_token_counter()(p) for p in prompts))
    completion = max(1, sum(stub_token_counter()(t) for t in texts))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


async def _completion_chunks(
    base: dict[str, Any], texts: list[str], usage: dict[str, int], body: dict[str, Any]
) -> AsyncIterator[bytes]:
    for index, text in enumerate(texts):
        step = max(1, len(text) // 4)
        for i in range(0, len(text), step):
            choice = {"text": text[i : i + step], "index": index, "logprobs": None}
            chunk = {**base, "choices": [{**choice, "finish_reason": None}]}
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        last = {"text": "", "index": index, "logprobs": None, "finish_reason": "stop"}
        yield f"data: {json.dumps({**base, 'choices': [last]})}\n\n".encode()
    if (body.get("stream_options") or {}).get("include_usage"):
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
    yield b"data: [DONE]\n\n"


def passthrough_routes(recorder: Recorder) -> list[Route]:
    """The routes, under `/v1` (litellm's `api_base` for OpenAI-compatible servers)."""
    m, f, b = ModelRoutes(recorder), FileRoutes(recorder), BatchRoutes(recorder)
    table: list[tuple[str, Any, list[str]]] = [
        ("/completions", m.completions, ["POST"]),
        ("/moderations", m.moderations, ["POST"]),
        ("/images/generations", m.images, ["POST"]),
        ("/images/edits", m.images, ["POST"]),
        ("/images/variations", m.images, ["POST"]),
        ("/audio/transcriptions", m.transcription, ["POST"]),
        ("/audio/translations", m.transcription, ["POST"]),
        ("/audio/speech", m.speech, ["POST"]),
        ("/files", f.create_file, ["POST"]),
        ("/files", f.list_files, ["GET"]),
        ("/files/{file_id}", f.file, ["GET", "DELETE"]),
        ("/files/{file_id}/content", f.file_content, ["GET"]),
        ("/batches", b.create_batch, ["POST"]),
        ("/batches", b.list_batches, ["GET"]),
        ("/batches/{batch_id}", b.batch, ["GET"]),
        ("/batches/{batch_id}/cancel", b.batch, ["POST"]),
    ]
    return [Route(f"/v1{path}", fn, methods=methods) for path, fn, methods in table]
