"""What crosses the provider boundary: where a model name goes, the answers
and streams that come back, and litellm's objects made plain (OpenAI's shape).

Shared by `proxy.upstream` (chat and embeddings), `proxy.upstream_passthrough`
(the raw pass-through routes) and `proxy.pricing`. It never imports litellm.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import anyio

log = logging.getLogger("memproxy.upstream")

# Providers that speak OpenAI's wire format: fields litellm would swallow or
# reject (`user`, `metadata`, vendor extensions) can ride in `extra_body`.
OPENAI_WIRE = frozenset({"openai", "custom_openai", "azure", "hosted_vllm", "lm_studio"})


@dataclass(frozen=True, slots=True)
class Target:
    """Where a model name goes: litellm params (with secrets) and a safe label."""

    model_name: str
    params: dict[str, Any]
    max_input_tokens: int | None

    @property
    def provider_model(self) -> str:
        return str(self.params["model"])


@dataclass(slots=True)
class Completion:
    body: dict[str, Any]
    usage: dict[str, Any] | None
    upstream_ms: float
    response_obj: Any  # litellm's response, for pricing later
    route: dict[str, Any] | None = None  # attempts, retries, fallback, answering model


@dataclass(slots=True)
class Embeddings:
    """Vectors for a list of texts, in order, and what they cost."""

    vectors: list[list[float]]
    prompt_tokens: int
    cost: float | None
    upstream_ms: float


class RoutedStream:
    """A provider stream whose first chunk has already arrived.

    Retries and fallbacks happen before the first chunk (nothing has reached
    the client yet); after it, a failure ends the stream with an error event.
    """

    def __init__(self, stream: Any, first: Any, route: dict[str, Any]) -> None:
        self._stream = stream
        self._first = first  # None: the provider ended the stream without a chunk
        self._started = first is not None
        self.route = route

    def __aiter__(self) -> RoutedStream:
        return self

    async def __anext__(self) -> Any:
        if self._first is not None:
            chunk, self._first = self._first, None
            return chunk
        if not self._started:
            raise StopAsyncIteration
        return await self._stream.__anext__()

    async def aclose(self) -> None:
        """Close the provider connection, even while the request is being cancelled."""
        await close_stream(self._stream)


async def first_chunk(stream: Any) -> tuple[Any, Any]:
    """The stream and its first chunk (None: it ended at once). A stream that
    fails before its first chunk is closed, so a retry or fallback leaks nothing."""
    try:
        first = await stream.__anext__()
    except StopAsyncIteration:
        first = None
    except BaseException:
        await close_stream(stream)
        raise
    return stream, first


async def close_stream(stream: Any) -> None:
    closer = getattr(stream, "aclose", None)
    if closer is None:
        return
    # A disconnecting client cancels the relay: without the shield, the close
    # itself would be cancelled and the provider would keep generating.
    with anyio.CancelScope(shield=True):
        try:
            await closer()
        except Exception:  # a broken stream may fail to close; nothing is left to save
            log.debug("closing the provider stream failed", exc_info=True)


def strip_provider_fields(value: Any) -> Any:
    """Drop litellm's bookkeeping keys so responses keep OpenAI's shape."""
    if isinstance(value, dict):
        return {
            k: strip_provider_fields(v)
            for k, v in value.items()
            if k not in ("provider_specific_fields", "_hidden_params", "_response_ms")
        }
    if isinstance(value, list):
        return [strip_provider_fields(v) for v in value]
    return value


def litellm_kwargs(call: dict[str, Any]) -> dict[str, Any]:
    # One retry loop (ours): litellm's and the OpenAI SDK's are turned off.
    return {**call, "num_retries": 0, "max_retries": 0}


def field_of(obj: Any, name: str) -> Any:
    """A field of a litellm object or of a plain dict (litellm returns either)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)
