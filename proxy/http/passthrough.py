"""The OpenAI routes memproxy passes through: no memory work, the proxy's auth and a record.

Each route is a row of `PASS_ROUTES` (data): its litellm call, how its body
arrives (JSON, multipart form, or none), and how it is routed. By `model`
through `model_list`, like chat (an unknown model is the same 404). Files and
batches carry no model: they go to the `model_list` entry named by a `model`
the client adds (query string, form field or JSON field: `extra_query` /
`extra_body` in the SDKs), else to the first entry of the provider named by
`custom_llm_provider`, else to the first OpenAI or Azure entry, else to the
first entry; that entry's credentials and `api_base` are used (so ids made
through one entry are found through the same one).

Answers keep OpenAI's shape; upstream errors keep the provider's status and
error object; litellm having no call for a route answers 501 naming it.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse
from starlette.datastructures import UploadFile

from proxy.config import Settings
from proxy.errors import ProxyError
from proxy.http.routes import parse_json, read_body
from proxy.http.services import Services
from proxy.ids import new_id
from proxy.upstream_wire import RoutedStream, Target

router = APIRouter()

Body = Literal["json", "form", "none"]
Answer = Literal["json", "bytes", "transcript"]


@dataclass(frozen=True, slots=True)
class PassRoute:
    """One pass-through route: `call` is litellm's function for it."""

    method: str
    path: str
    call: str
    body: Body = "json"
    by_model: bool = True  # False: files and batches (the provider rule above)
    # Fields litellm must see as arguments; the client's others ride in
    # `extra_body` on an OpenAI-wire provider. None: every field is an argument.
    core: frozenset[str] | None = None
    answer: Answer = "json"
    streams: bool = False  # `stream: true` is honoured (completions)
    required: tuple[str, ...] = ()  # missing: a 400 here, not a failure inside litellm

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


def _core(*names: str) -> frozenset[str]:
    return frozenset(names)


PASS_ROUTES: tuple[PassRoute, ...] = (
    PassRoute(
        "POST",
        "/v1/embeddings",
        "aembedding",
        core=_core("input", "encoding_format"),
        required=("model", "input"),
    ),
    PassRoute(
        "POST",
        "/v1/completions",
        "atext_completion",
        core=_core("prompt", "stream", "stream_options"),
        required=("model", "prompt"),
        streams=True,
    ),
    PassRoute(
        "POST", "/v1/moderations", "amoderation", core=_core("input"), required=("model", "input")
    ),
    PassRoute(
        "POST",
        "/v1/images/generations",
        "aimage_generation",
        core=_core("prompt"),
        required=("model", "prompt"),
    ),
    PassRoute("POST", "/v1/images/edits", "aimage_edit", "form", required=("model", "image")),
    PassRoute(
        "POST", "/v1/images/variations", "aimage_variation", "form", required=("model", "image")
    ),
    PassRoute(
        "POST",
        "/v1/audio/transcriptions",
        "atranscription",
        "form",
        answer="transcript",
        required=("model", "file"),
    ),
    # litellm has no translation call (yet): this route answers 501 until it has.
    PassRoute(
        "POST",
        "/v1/audio/translations",
        "atranslation",
        "form",
        answer="transcript",
        required=("model", "file"),
    ),
    PassRoute(
        "POST", "/v1/audio/speech", "aspeech", answer="bytes", required=("model", "input", "voice")
    ),
    PassRoute("POST", "/v1/files", "acreate_file", "form", False, required=("file", "purpose")),
    PassRoute("GET", "/v1/files", "afile_list", "none", False),
    PassRoute("GET", "/v1/files/{file_id}", "afile_retrieve", "none", False),
    PassRoute("DELETE", "/v1/files/{file_id}", "afile_delete", "none", False),
    PassRoute("GET", "/v1/files/{file_id}/content", "afile_content", "none", False, answer="bytes"),
    PassRoute(
        "POST",
        "/v1/batches",
        "acreate_batch",
        "json",
        False,
        required=("input_file_id", "endpoint", "completion_window"),
    ),
    PassRoute("GET", "/v1/batches", "alist_batches", "none", False),
    PassRoute("GET", "/v1/batches/{batch_id}", "aretrieve_batch", "none", False),
    PassRoute("POST", "/v1/batches/{batch_id}/cancel", "acancel_batch", "none", False),
)

# Query parameters that are numbers in OpenAI's API (forms and queries arrive as text).
_INTEGER_QUERY = frozenset({"limit"})
# Routed to these first when a files or batches call names no model or provider.
_FILE_PROVIDERS = ("openai", "azure")


# --- reading the request ----------------------------------------------------------------


async def _form_fields(request: Request, raw: bytes) -> dict[str, Any]:
    """A multipart body (already read, within the size limit) as litellm's arguments:
    an upload becomes a named in-memory file (litellm's image calls read() it, the
    others accept it too); `name[]` fields become lists."""

    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": raw, "more_body": False}

    fields: dict[str, Any] = {}
    async with Request(request.scope, replay).form() as form:
        for key, value in form.multi_items():
            item: Any = value
            if isinstance(value, UploadFile):
                item = io.BytesIO(await value.read())
                item.name = value.filename or "upload"
            name = key.removesuffix("[]")
            if key.endswith("[]") or name in fields:
                previous = fields.get(name, [])
                fields[name] = [*(previous if isinstance(previous, list) else [previous]), item]
            else:
                fields[name] = item
    return fields


async def _fields(request: Request, spec: PassRoute, settings: Settings) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for key, value in request.query_params.items():
        fields[key] = int(value) if key in _INTEGER_QUERY and value.isdigit() else value
    if spec.body != "none":
        raw = await read_body(request, settings.server.max_body_bytes)
        if spec.body == "form":
            kind = request.headers.get("content-type", "")
            if not kind.startswith("multipart/form-data"):
                raise ProxyError(
                    400,
                    f"{spec.path} takes a multipart/form-data body, not {kind or 'none'}",
                    code="invalid_content_type",
                )
            fields.update(await _form_fields(request, raw))
        else:
            body = parse_json(raw)
            if not isinstance(body, dict):
                raise ProxyError(400, "request body must be a JSON object", code="invalid_json")
            fields.update(body)
    fields.update(request.path_params)
    for name in spec.required:
        if fields.get(name) in (None, ""):
            raise ProxyError(
                400, f"you must provide a {name} parameter", param=name, code="missing"
            )
    return fields


# --- routing -------------------------------------------------------------------------


def _model_target(services: Services, fields: dict[str, Any]) -> Target:
    model = fields.pop("model", None)
    if not isinstance(model, str) or not model:
        raise ProxyError(400, "model must be a non-empty string", param="model")
    return services.upstream.resolve(model)


def _provider_target(services: Services, fields: dict[str, Any], path: str) -> Target:
    """Files and batches: the rule in this module's docstring."""
    upstream = services.upstream
    model = fields.pop("model", None)
    provider = fields.pop("custom_llm_provider", None)
    if isinstance(model, str) and model:
        return upstream.resolve(model)
    targets = [upstream.resolve(entry.model_name) for entry in services.settings.model_list]
    providers = [upstream.provider(t) for t in targets]
    wanted = (provider,) if isinstance(provider, str) and provider else _FILE_PROVIDERS
    for name in wanted:
        if name in providers:
            return targets[providers.index(name)]
    if provider:
        raise ProxyError(
            400,
            f"no model_list entry uses the provider {provider!r} (custom_llm_provider)",
            param="custom_llm_provider",
        )
    if targets:
        return targets[0]
    raise ProxyError(501, f"memproxy cannot serve {path}: model_list is empty", code="no_model")


# --- answering -----------------------------------------------------------------------


@dataclass(slots=True)
class _Call:
    """What one pass-through request did, for its record."""

    spec: PassRoute
    request_id: str
    tenant: str
    started: float
    model: str = ""
    upstream_ms: float | None = None
    route: dict[str, Any] | None = None

    def headers(self) -> dict[str, str]:
        return {"X-Memory-Request-Id": self.request_id}


def _usage_tokens(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    value = usage.get("prompt_tokens", usage.get("input_tokens"))
    return int(value) if isinstance(value, int) else 0


def _record(
    services: Services,
    call: _Call,
    status: int,
    *,
    usage: dict[str, Any] | None = None,
    cost: float | None = None,
    error: str | None = None,
) -> None:
    elapsed = (time.perf_counter() - call.started) * 1000
    tokens = _usage_tokens(usage)
    record = {
        "route": call.spec.label,
        "call": call.spec.call,
        "usage": usage,
        "cost": cost,
        "error": error,
        "upstream": call.route,
    }
    services.request_log.submit(
        services.request_log.row(
            record=record,
            id=call.request_id,
            tenant_id=call.tenant,
            session_id=None,
            mode="passthrough",
            policy="none",
            model=call.model,
            status=status,
            budget=None,
            raw_tokens=tokens,
            context_tokens=tokens,
            prefix_share=None,
            proxy_ms=round(max(0.0, elapsed - (call.upstream_ms or 0.0)), 2),
            upstream_ms=call.upstream_ms,
            route=call.spec.path,
        )
    )


def _answer(services: Services, call: _Call, result: Any, fields: dict[str, Any]) -> Response:
    upstream = services.upstream
    if call.spec.answer == "bytes":
        content = getattr(result, "content", b"")
        response = getattr(result, "response", None)
        media = response.headers.get("content-type") if response is not None else None
        _record(services, call, 200)

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(content), 65536):
                yield content[i : i + 65536]

        return StreamingResponse(
            chunks(), media_type=media or "application/octet-stream", headers=call.headers()
        )
    body = upstream.passthrough.body(result)
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else None
    cost = upstream.pricing.passthrough_cost(result, call.spec.call)
    _record(services, call, 200, usage=usage, cost=cost)
    if call.spec.answer == "transcript" and fields.get("response_format") in ("text", "srt", "vtt"):
        return PlainTextResponse(str(body.get("text", "")), headers=call.headers())
    return JSONResponse(body, headers=call.headers())


def _sse(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data, ensure_ascii=False).encode() + b"\n\n"


def _relay(services: Services, call: _Call, stream: RoutedStream) -> StreamingResponse:
    upstream = services.upstream

    async def events() -> AsyncIterator[bytes]:
        usage: dict[str, Any] | None = None
        status, error = 200, None
        try:
            async for chunk in stream:
                data = upstream.chunk_dict(chunk)
                for choice in data.get("choices") or ():
                    choice.setdefault("text", "")
                if data.get("usage"):
                    usage = data["usage"]
                yield _sse(data)
            yield b"data: [DONE]\n\n"
        except asyncio.CancelledError:  # the client went away: the provider call is closed
            status, error = 499, "client disconnected mid-stream"
            raise
        except Exception as exc:
            failure = upstream.passthrough.map_error(exc, call.spec.label)
            status, error = failure.status, failure.message
            yield _sse(failure.body())
        finally:
            await stream.aclose()
            cost = upstream.pricing.usage_cost(call.model, usage) if usage else None
            _record(services, call, status, usage=usage, cost=cost, error=error)

    return StreamingResponse(
        events(),
        media_type="text/event-stream",
        headers={**call.headers(), "Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _serve(request: Request, spec: PassRoute) -> Response:
    services: Services = request.app.state.services
    upstream = services.upstream
    call = _Call(spec, new_id(), "", time.perf_counter())
    try:
        call.tenant = services.auth.tenant(request.headers.get("authorization"))
    except ProxyError as exc:
        return exc.response(call.headers())
    try:
        fields = await _fields(request, spec, services.settings)
        target = (
            _model_target(services, fields)
            if spec.by_model
            else _provider_target(services, fields, spec.label)
        )
        call.model = target.model_name
        await upstream.ready()
        if not upstream.passthrough.can_call(spec.call):
            raise ProxyError(
                501,
                f"memproxy cannot serve {spec.label}: the installed litellm has "
                f"no `{spec.call}` call",
                code="route_not_supported",
                type_="not_implemented_error",
            )
        stream = spec.streams and bool(fields.get("stream"))
        core = spec.core if spec.core is not None else frozenset(fields)
        own = {k: v for k, v in fields.items() if k in core}
        extra = {k: v for k, v in fields.items() if k not in core}
        routed = upstream.passthrough.call(target, own, extra, by_model=spec.by_model)
        began = time.perf_counter()
        result, call.route = await upstream.passthrough.run(
            spec.call, spec.label, routed, stream=stream
        )
        call.upstream_ms = round((time.perf_counter() - began) * 1000, 2)
    except ProxyError as exc:
        call.route = exc.route
        _record(services, call, exc.status, error=exc.message)
        return exc.response(call.headers())
    if isinstance(result, RoutedStream):
        return _relay(services, call, result)
    return _answer(services, call, result, fields)


def _endpoint(spec: PassRoute) -> Any:
    async def endpoint(request: Request) -> Response:
        return await _serve(request, spec)

    endpoint.__name__ = f"passthrough_{spec.call}_{spec.method.lower()}"
    return endpoint


def _openapi(spec: PassRoute) -> dict[str, Any]:
    """What the schema says the route takes (the handler reads the request itself):
    its path parameters and, loosely, its body; anything else is passed on."""
    described: dict[str, Any] = {
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in re.findall(r"{(\w+)}", spec.path)
        ]
    }
    if spec.body != "none":
        properties = {
            name: {"type": "string", "format": "binary"}
            if spec.body == "form" and name in ("file", "image")
            else {"type": "string"}
            for name in spec.required
        }
        kind = "multipart/form-data" if spec.body == "form" else "application/json"
        described["requestBody"] = {
            "required": True,
            "content": {
                kind: {
                    "schema": {
                        "type": "object",
                        "required": list(spec.required),
                        "properties": properties,
                    }
                }
            },
        }
    return described


for _spec in PASS_ROUTES:
    _handler = _endpoint(_spec)
    router.add_api_route(
        _spec.path, _handler, methods=[_spec.method], openapi_extra=_openapi(_spec)
    )
    router.add_api_route(
        _spec.path.removeprefix("/v1"), _handler, methods=[_spec.method], include_in_schema=False
    )


@router.get("/v1/models/{model:path}")
@router.get("/models/{model:path}", include_in_schema=False)
async def retrieve_model(request: Request, model: str) -> JSONResponse:
    """A `model_list` name, in the shape of `GET /v1/models`; any other name is a 404."""
    services: Services = request.app.state.services
    services.auth.tenant(request.headers.get("authorization"))
    if services.settings.find_model(model) is None:
        raise ProxyError(
            404,
            f"The model `{model}` does not exist or is not configured in memproxy's model_list",
            param="model",
            code="model_not_found",
        )
    return JSONResponse({"id": model, "object": "model", "created": 0, "owned_by": "memproxy"})
