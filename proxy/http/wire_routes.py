"""Routes of the Responses and Anthropic Messages APIs: translate, run the chat pipeline.

Each route turns its body into the internal chat request (`proxy.responses_request`,
`proxy.wire_messages`), then runs exactly what `/v1/chat/completions` runs —
sessions, memory, budget, modes, A/B, records, `X-Memory-*` headers — and
answers through its `WireFormat`.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from policies.assemble.budget import message_tokens
from proxy.errors import ProxyError
from proxy.http.routes import memory_headers, parse_json, prepare_chat, read_body
from proxy.http.services import Services
from proxy.http.wire_openapi import MESSAGES_OPENAPI, RESPONSES_OPENAPI
from proxy.ids import new_id
from proxy.messages_answer import error_response as anthropic_error
from proxy.responses_answer import ResponseRequest
from proxy.responses_request import input_items, items_to_chat, request_params
from proxy.responses_store import ResponseStore
from proxy.wire import WireFormat
from proxy.wire_messages import MessagesWire, messages_to_chat
from proxy.wire_responses import ResponsesWire, new_response_id

router = APIRouter()

# Request headers of Anthropic's API forwarded to Anthropic-family upstreams.
_ANTHROPIC_HEADERS = ("anthropic-version", "anthropic-beta")


def _services(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def _responses(request: Request) -> ResponseStore:
    store: ResponseStore = request.app.state.responses
    return store


async def _run(
    request: Request,
    services: Services,
    tenant: str,
    request_id: str,
    body: dict[str, Any],
    wire: WireFormat,
) -> Response:
    """The chat pipeline on an already translated body; errors are the caller's to shape."""
    headers = memory_headers(request, services.settings.server.max_header_bytes)
    req, plan = await prepare_chat(services, request_id, tenant, headers, body)
    if req.stream:
        return await services.pipeline.stream(plan, wire)
    return await services.pipeline.complete(plan, wire)


# --- /v1/responses --------------------------------------------------------------------


@router.post("/v1/responses", openapi_extra=RESPONSES_OPENAPI)
@router.post("/responses", openapi_extra=RESPONSES_OPENAPI)
async def create_response(request: Request) -> Response:
    services = _services(request)
    request_id = new_id()
    try:
        tenant = services.auth.tenant(request.headers.get("authorization"))
        body = parse_json(await read_body(request, services.settings.server.max_body_bytes))
        if not isinstance(body, dict):
            raise ProxyError(400, "request body must be a JSON object", code="invalid_json")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise ProxyError(400, "model: a non-empty string is required", param="model")
        if "input" not in body:
            raise ProxyError(400, "input is required", param="input", code="missing")
        history: list[dict[str, Any]] = []
        previous = body.get("previous_response_id")
        if previous is not None:
            if not isinstance(previous, str):
                raise ProxyError(
                    400, "previous_response_id must be a string", param="previous_response_id"
                )
            history = _responses(request).get(tenant, previous).conversation
        items = input_items(body["input"])
        await services.upstream.ready()
        claude = services.upstream.anthropic_family(services.upstream.resolve(model))
        messages = [
            *items_to_chat([], body.get("instructions")),
            *items_to_chat(history, keep_thinking=claude),
            *items_to_chat(items, keep_thinking=claude),
        ]
        wire = ResponsesWire(
            ResponseRequest(body, new_response_id(), history), _responses(request), tenant, items
        )
        chat = {"model": model, "messages": messages, **request_params(body)}
        return await _run(request, services, tenant, request_id, chat, wire)
    except ProxyError as exc:
        return exc.response({"X-Memory-Request-Id": request_id})


@router.get("/v1/responses/{response_id}")
@router.get("/responses/{response_id}")
async def get_response(request: Request, response_id: str) -> JSONResponse:
    tenant = _services(request).auth.tenant(request.headers.get("authorization"))
    return JSONResponse(_responses(request).get(tenant, response_id).response)


@router.get("/v1/responses/{response_id}/input_items")
@router.get("/responses/{response_id}/input_items")
async def get_input_items(request: Request, response_id: str) -> JSONResponse:
    tenant = _services(request).auth.tenant(request.headers.get("authorization"))
    stored = _responses(request).get(tenant, response_id)
    produced = len(stored.response["output"])
    items = stored.conversation[: len(stored.conversation) - produced]
    data = [{"id": item.get("id") or f"item_{i}", **item} for i, item in enumerate(items)]
    data.reverse()  # OpenAI lists them newest first by default
    first, last = (data[0]["id"], data[-1]["id"]) if data else (None, None)
    return JSONResponse(
        {"object": "list", "data": data, "first_id": first, "last_id": last, "has_more": False}
    )


@router.delete("/v1/responses/{response_id}")
@router.delete("/responses/{response_id}")
async def delete_response(request: Request, response_id: str) -> JSONResponse:
    tenant = _services(request).auth.tenant(request.headers.get("authorization"))
    _responses(request).delete(tenant, response_id)
    return JSONResponse({"id": response_id, "object": "response", "deleted": True})


# --- /v1/messages ---------------------------------------------------------------------


def _anthropic_tenant(services: Services, request: Request) -> str:
    """Bearer, or Anthropic's `x-api-key`, for the proxy key."""
    authorization = request.headers.get("authorization")
    api_key = request.headers.get("x-api-key")
    if not authorization and api_key:
        authorization = f"Bearer {api_key}"
    return services.auth.tenant(authorization)


async def _anthropic_body(request: Request, services: Services) -> tuple[str, dict[str, Any], bool]:
    """(tenant, body, whether the model is Anthropic-family)."""
    tenant = _anthropic_tenant(services, request)
    body = parse_json(await read_body(request, services.settings.server.max_body_bytes))
    model = body.get("model") if isinstance(body, dict) else None
    anthropic = False
    if isinstance(model, str) and model:
        await services.upstream.ready()
        anthropic = services.upstream.anthropic_family(services.upstream.resolve(model))
    return tenant, body, anthropic


@router.post("/v1/messages", openapi_extra=MESSAGES_OPENAPI)
@router.post("/messages", openapi_extra=MESSAGES_OPENAPI)
async def create_message(request: Request) -> Response:
    services = _services(request)
    request_id = new_id()
    try:
        tenant, body, anthropic = await _anthropic_body(request, services)
        model, messages, params = messages_to_chat(body, anthropic_upstream=anthropic)
        if anthropic:
            forwarded = {h: request.headers[h] for h in _ANTHROPIC_HEADERS if h in request.headers}
            if forwarded:
                params["extra_headers"] = forwarded
        chat = {"model": model, "messages": messages, **params}
        return await _run(
            request, services, tenant, request_id, chat, MessagesWire(model, request_id)
        )
    except ProxyError as exc:
        return anthropic_error(exc, {"X-Memory-Request-Id": request_id})


@router.post("/v1/messages/count_tokens")
@router.post("/messages/count_tokens")
async def count_tokens(request: Request) -> Response:
    """Tokens of the request as sent (the proxy's tokenizer for the model: an estimate)."""
    services = _services(request)
    try:
        _, body, anthropic = await _anthropic_body(request, services)
        if isinstance(body, dict):
            body = {**body, "max_tokens": 1, "stream": False}
        model, messages, params = messages_to_chat(body, anthropic_upstream=anthropic)
        target = services.upstream.resolve(model)
        counter = services.pipeline.counters.for_model(target.provider_model)
        tokens = sum(message_tokens(m, counter) for m in messages)
        tools = params.get("tools")
        if tools:
            tokens += counter(str(tools))
        return JSONResponse({"input_tokens": tokens})
    except ProxyError as exc:
        return anthropic_error(exc)
