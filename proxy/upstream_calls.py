"""The provider calls (`Upstream.complete`, `open_stream`, `embed`) and litellm's
exceptions made `ProxyError`s (`Upstream.map_error`).

It never imports litellm: it calls the module `proxy.upstream` loaded
(`Upstream.litellm`).
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from proxy import demo
from proxy.errors import ProxyError
from proxy.redaction import redact_secrets
from proxy.routing import Call, run_routed
from proxy.upstream_wire import (
    Completion,
    Embeddings,
    RoutedStream,
    field_of,
    first_chunk,
    litellm_kwargs,
    strip_provider_fields,
)

if TYPE_CHECKING:
    from proxy.upstream import Upstream


class ProviderCalls:
    """Completions (whole or streamed) and embeddings, retried and routed."""

    def __init__(self, upstream: Upstream) -> None:
        self._upstream = upstream

    async def complete(self, call: dict[str, Any]) -> Completion:
        started = time.perf_counter()
        up = self._upstream

        async def attempt(entry: Call) -> Any:
            if demo.is_demo(entry):
                return demo.complete(entry, entry.model_name)
            return await up.litellm.acompletion(**litellm_kwargs(entry))

        response, route = await run_routed(_as_call(call), up.retry_policy, attempt, self.map_error)
        body = strip_provider_fields(response.model_dump())
        usage = body.get("usage")
        elapsed = (time.perf_counter() - started) * 1000
        return Completion(body, usage, elapsed, response, route.record())

    async def open_stream(self, call: dict[str, Any]) -> RoutedStream:
        """Open the stream and wait for its first chunk; retry or fall back until then."""
        up = self._upstream

        async def attempt(entry: Call) -> tuple[Any, Any]:
            if demo.is_demo(entry):
                stream: Any = demo.stream(entry, entry.model_name)
            else:
                stream = await up.litellm.acompletion(**litellm_kwargs(entry))
            return await first_chunk(stream)

        (stream, first), route = await run_routed(
            _as_call(call), up.retry_policy, attempt, self.map_error
        )
        return RoutedStream(stream, first, route.record())

    async def embed(self, model_name: str, texts: list[str], timeout_s: float) -> Embeddings:
        """Embed `texts` with a model_list model (`memory.long_term.embedding_model`).

        Bounded by `timeout_s` as a whole, retries included (litellm reads
        `max_retries=0` as unset for embeddings and retries on its own): the caller
        falls back to lexical retrieval on any error.
        """
        up = self._upstream
        target = up.resolve(model_name)
        call = {**target.params, "input": texts, "timeout": timeout_s}
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(
                up.litellm.aembedding(**litellm_kwargs(call)), timeout_s
            )
        except TimeoutError as exc:
            raise ProxyError(504, "embedding timed out", code="upstream_timeout") from exc
        except Exception as exc:
            raise self.map_error(exc) from exc
        rows = sorted(response.data, key=lambda d: field_of(d, "index"))
        vectors = [[float(x) for x in field_of(d, "embedding")] for d in rows]
        if len(vectors) != len(texts):
            raise ProxyError(502, "embedding answer has the wrong number of vectors")
        usage = getattr(response, "usage", None)
        tokens = int(field_of(usage, "prompt_tokens") or 0) if usage is not None else 0
        cost = up.pricing.embedding_cost(response)
        return Embeddings(vectors, tokens, cost, (time.perf_counter() - started) * 1000)

    def chunk_dict(self, chunk: Any) -> dict[str, Any]:
        data = chunk.model_dump(exclude_none=True) if hasattr(chunk, "model_dump") else dict(chunk)
        return strip_provider_fields(data)  # type: ignore[no-any-return]

    def map_error(self, exc: BaseException) -> ProxyError:
        """Keep the provider's status and message; timeouts → 504, unreachable → 502."""
        litellm = self._upstream.litellm
        message = redact_secrets(str(getattr(exc, "message", None) or exc), self._upstream.secrets)
        headers: dict[str, str] = {}
        response = getattr(exc, "response", None)
        retry_after = None
        if response is not None:
            try:
                retry_after = response.headers.get("retry-after")
            except Exception:
                retry_after = None
        if retry_after:
            headers["Retry-After"] = str(retry_after)
        if isinstance(exc, litellm.Timeout):
            return ProxyError(504, f"upstream timed out: {message}", code="upstream_timeout")
        status = getattr(exc, "status_code", None)
        lowered = message.lower()
        if isinstance(exc, litellm.APIConnectionError) or (
            status == 500 and "connection error" in lowered
        ):
            return ProxyError(502, f"upstream unreachable: {message}", code="upstream_unreachable")
        if isinstance(exc, litellm.UnsupportedParamsError):
            return ProxyError(400, message, code="unsupported_parameter")
        if isinstance(status, int) and 400 <= status < 600:
            return ProxyError(status, message, code="upstream_error", headers=headers)
        return ProxyError(502, f"upstream error: {message}", code="upstream_error")


def _as_call(call: dict[str, Any]) -> Call:
    return call if isinstance(call, Call) else Call(str(call.get("model", "")), call)
