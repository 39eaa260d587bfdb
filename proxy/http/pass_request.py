"""A pass-through request read into litellm's arguments, and the `model_list` entry it goes to.

Routed by `model` through `model_list`, like chat (an unknown model is the same
404). Files and batches carry no model: they go to the `model_list` entry named
by a `model` the client adds (query string, form field or JSON field:
`extra_query` / `extra_body` in the SDKs), else to the first entry of the
provider named by `custom_llm_provider`, else to the first OpenAI or Azure
entry, else to the first entry; that entry's credentials and `api_base` are
used (so ids made through one entry are found through the same one).
"""

from __future__ import annotations

import io
from typing import Any

from fastapi import Request
from starlette.datastructures import UploadFile

from proxy.errors import ProxyError
from proxy.http.pass_routes import PassRoute
from proxy.http.routes import parse_json, read_body
from proxy.http.services import Services
from proxy.settings import Settings
from proxy.upstream_wire import Target

# Query parameters that are numbers in OpenAI's API (forms and queries arrive as text).
_INTEGER_QUERY = frozenset({"limit"})
# Routed to these first when a files or batches call names no model or provider.
_FILE_PROVIDERS = ("openai", "azure")


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


async def request_fields(request: Request, spec: PassRoute, settings: Settings) -> dict[str, Any]:
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


def model_target(services: Services, fields: dict[str, Any]) -> Target:
    model = fields.pop("model", None)
    if not isinstance(model, str) or not model:
        raise ProxyError(400, "model must be a non-empty string", param="model")
    return services.upstream.resolve(model)


def provider_target(services: Services, fields: dict[str, Any], path: str) -> Target:
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
