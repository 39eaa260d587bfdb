"""The pass-through routes' side of the provider (`proxy.http.passthrough`): the
client's request forwarded raw to one of litellm's calls (embeddings, images,
audio, files, batches, …), with retries and fallbacks, and litellm's refusals
told apart from the provider's errors.

It never imports litellm: it calls the module `proxy.upstream` loaded
(`Upstream.litellm`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy.errors import ProxyError
from proxy.redaction import redact_secrets
from proxy.routing import Call, run_routed
from proxy.upstream_wire import (
    OPENAI_WIRE,
    RoutedStream,
    Target,
    first_chunk,
    litellm_kwargs,
    strip_provider_fields,
)

if TYPE_CHECKING:
    from proxy.upstream import Upstream


class Passthrough:
    """Raw forwarding through `upstream` (`Upstream.passthrough`)."""

    def __init__(self, upstream: Upstream) -> None:
        self._upstream = upstream

    def can_call(self, function: str) -> bool:
        """Whether the installed litellm has `function` (e.g. `aembedding`)."""
        return callable(getattr(self._upstream.litellm, function, None))

    def call(
        self,
        target: Target,
        fields: dict[str, Any],
        extra: dict[str, Any],
        *,
        by_model: bool = True,
        fallbacks: bool = True,
    ) -> Call:
        """litellm's arguments for one pass-through call to `target`.

        `fields` are arguments litellm must see; `extra` are the client's other
        fields: on an OpenAI-wire provider they ride in `extra_body`, so litellm
        neither refuses nor rewrites them; elsewhere they are arguments too.
        Files and batches (`by_model=False`) name the provider, not a model.
        """
        params = dict(target.params)
        if not by_model:
            params.pop("model", None)
            params["custom_llm_provider"] = self._upstream.provider(target) or "openai"
        call: dict[str, Any] = {
            **params,
            **fields,
            "timeout": float(self._upstream.settings.server.request_timeout_s),
            "num_retries": self._upstream.settings.num_retries,
        }
        if extra and self._upstream.provider(target) in OPENAI_WIRE:
            call["extra_body"] = {**(call.get("extra_body") or {}), **extra}
        else:
            call.update(extra)
        backups = []
        if fallbacks and by_model:
            for name in self._upstream.settings.fallbacks_for(target.model_name):
                backups.append(
                    self.call(self._upstream.resolve(name), fields, extra, fallbacks=False)
                )
        return Call(target.model_name, call, backups)

    async def run(
        self, function: str, route: str, call: Call, *, stream: bool = False
    ) -> tuple[Any, dict[str, Any]]:
        """Run litellm's `function` with retries and fallbacks; a stream waits for its
        first chunk (as `Upstream.open_stream` does) and comes back as a `RoutedStream`."""
        run = getattr(self._upstream.litellm, function)

        async def attempt(entry: Call) -> Any:
            result = await run(**litellm_kwargs(entry))
            if not stream:
                return result
            return await first_chunk(result)

        result, log_ = await run_routed(
            call, self._upstream.retry_policy, attempt, lambda exc: self.map_error(exc, route)
        )
        if stream:
            return RoutedStream(result[0], result[1], log_.record()), log_.record()
        return result, log_.record()

    def body(self, result: Any) -> dict[str, Any]:
        """A litellm answer object as the JSON the client gets (OpenAI's field names)."""
        if hasattr(result, "model_dump"):
            data = result.model_dump(by_alias=True, exclude_none=True, warnings=False)
        else:
            data = dict(result)
        return strip_provider_fields(data)  # type: ignore[no-any-return]

    def map_error(self, exc: BaseException, route: str) -> ProxyError:
        """501 when litellm itself cannot serve `route` for this provider; otherwise the
        provider's status with its own error object (message, type, param, code)."""
        if _litellm_lacks(exc):
            message = str(getattr(exc, "message", None) or exc)
            detail = redact_secrets(message, self._upstream.secrets)
            return ProxyError(
                501,
                f"memproxy cannot serve {route} for this model: litellm has no call for it "
                f"({detail})",
                code="route_not_supported",
                type_="not_implemented_error",
            )
        error = self._upstream.map_error(exc)
        provided = _provider_error(exc)
        if provided is not None and error.status == getattr(exc, "status_code", None):
            message = str(provided.get("message") or error.message)
            error.message = redact_secrets(message, self._upstream.secrets)
            error.type = str(provided.get("type") or error.type)
            error.param = provided.get("param")
            error.code = provided.get("code")
        return error


# litellm's own refusals before any request: it has no such call for the provider.
_LACKS_CLASSES = frozenset({"LiteLLMUnknownProvider", "UnsupportedEndpointError"})
_LACKS_PHRASES = (
    "litellm doesn't support",
    "unable to map the custom llm provider",
    "unmapped llm provider",
    "invalid image variation provider",
    "is not supported for",
    "does not support audio transcription",
)


def _litellm_lacks(exc: BaseException) -> bool:
    if type(exc).__name__ in _LACKS_CLASSES:
        return True
    text = str(getattr(exc, "message", None) or exc).lower()
    return any(phrase in text for phrase in _LACKS_PHRASES)


def _provider_error(exc: BaseException) -> dict[str, Any] | None:
    """The provider's own `error` object, where litellm kept it (body or response)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and "message" in inner:
            return inner
    response = getattr(exc, "response", None)
    try:
        parsed = response.json() if response is not None else None
    except Exception:  # not JSON (or no body): litellm's message is all there is
        return None
    inner = parsed.get("error") if isinstance(parsed, dict) else None
    return inner if isinstance(inner, dict) and "message" in inner else None
