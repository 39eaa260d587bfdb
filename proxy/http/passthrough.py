"""The OpenAI routes memproxy passes through: no memory work, the proxy's auth and a record.

One endpoint per row of `PASS_ROUTES` (`proxy/http/pass_routes.py`), mounted
with and without `/v1`, plus `GET /v1/models/{model}`. Each request's fields
are read and routed to a `model_list` entry in `proxy/http/pass_request.py`,
answered and recorded in `proxy/http/pass_answer.py`.

Answers keep OpenAI's shape; upstream errors keep the provider's status and
error object; litellm having no call for a route answers 501 naming it.
"""

from __future__ import annotations

import re
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from proxy.errors import ProxyError
from proxy.http.pass_answer import PassCall, answer_call, record_call, relay_stream
from proxy.http.pass_request import model_target, provider_target, request_fields
from proxy.http.pass_routes import PASS_ROUTES, PassRoute
from proxy.http.services import Services
from proxy.ids import new_id
from proxy.upstream_wire import RoutedStream

router = APIRouter()


async def _serve(request: Request, spec: PassRoute) -> Response:
    services: Services = request.app.state.services
    upstream = services.upstream
    call = PassCall(spec, new_id(), "", time.perf_counter())
    try:
        call.tenant = services.auth.tenant(request.headers.get("authorization"))
    except ProxyError as exc:
        return exc.response(call.headers())
    try:
        fields = await request_fields(request, spec, services.settings)
        target = (
            model_target(services, fields)
            if spec.by_model
            else provider_target(services, fields, spec.label)
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
        record_call(services, call, exc.status, error=exc.message)
        return exc.response(call.headers())
    if isinstance(result, RoutedStream):
        return relay_stream(services, call, result)
    return answer_call(services, call, result, fields)


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
