"""The provider side: the only module that imports litellm.

litellm is imported lazily (it costs seconds and, unless told otherwise, tries
to download a model-cost map), once, when the app starts. Everything the
client sent besides the messages goes to the provider unchanged; litellm's
exceptions become `ProxyError`s that keep the provider's status and message.
Retryable failures are retried and then sent to the configured fallbacks
(`proxy.routing`); litellm's and the OpenAI SDK's own retries are turned off so
that there is one retry loop, and it is the one that records what it did.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import anyio

from proxy.config import ModelEntry, Settings
from proxy.errors import ProxyError
from proxy.routing import Call, RetryPolicy, run_routed

log = logging.getLogger("memproxy.upstream")

# Providers that speak OpenAI's wire format: fields litellm would swallow or
# reject (`user`, `metadata`, vendor extensions) can ride in `extra_body`.
_OPENAI_WIRE = frozenset({"openai", "custom_openai", "azure", "hosted_vllm", "lm_studio"})
# Fields litellm consumes for itself instead of forwarding.
_LITELLM_SWALLOWS = frozenset({"user", "metadata"})
# Request fields we handle ourselves.
_OWN_FIELDS = frozenset({"model", "messages", "stream"})
_SECRET_KEYS = ("api_key", "aws_secret_access_key", "vertex_credentials")


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
        await _close_stream(self._stream)


async def _close_stream(stream: Any) -> None:
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


def _strip_provider_fields(value: Any) -> Any:
    """Drop litellm's bookkeeping keys so responses keep OpenAI's shape."""
    if isinstance(value, dict):
        return {
            k: _strip_provider_fields(v)
            for k, v in value.items()
            if k not in ("provider_specific_fields", "_hidden_params", "_response_ms")
        }
    if isinstance(value, list):
        return [_strip_provider_fields(v) for v in value]
    return value


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return text


class Upstream:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.retry_policy = RetryPolicy.from_settings(settings)
        self._litellm: Any = None
        self._loader: threading.Thread | None = None
        self.secrets = [
            str(entry.litellm_params[key])
            for entry in settings.model_list
            for key in _SECRET_KEYS
            if entry.litellm_params.get(key)
        ]

    # --- lifecycle ------------------------------------------------------------

    def load(self) -> None:
        """Import and quiet litellm: no network, no callbacks on the hot path."""
        if self._litellm is not None:
            return
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "ERROR")
        # Typed as Any: litellm's module attributes are settings, not a typed API.
        litellm: Any = importlib.import_module("litellm")
        litellm.suppress_debug_info = True
        litellm.telemetry = False
        litellm.set_verbose = False
        litellm.callbacks = []
        litellm.success_callback = []
        litellm.failure_callback = []
        litellm.turn_off_message_logging = True
        logging.getLogger("LiteLLM").setLevel(logging.ERROR)
        drop_success_logging()
        skip_repeated_pricing_failures()
        self._litellm = litellm

    def load_in_background(self) -> None:
        """Import litellm in a thread: `/health` answers before its ~4 s import ends."""
        if self._loader is None and self._litellm is None:
            self._loader = threading.Thread(target=self.load, name="litellm-import", daemon=True)
            self._loader.start()

    async def ready(self) -> None:
        """Wait (without blocking the event loop) until litellm is imported."""
        loader = self._loader
        if self._litellm is None and loader is not None:
            await asyncio.to_thread(loader.join)

    @property
    def litellm(self) -> Any:
        if self._litellm is None and self._loader is not None:
            self._loader.join()
        if self._litellm is None:
            self.load()
        return self._litellm

    # --- routing --------------------------------------------------------------

    def resolve(self, model: str) -> Target:
        entry: ModelEntry | None = self.settings.find_model(model)
        if entry is not None:
            info = entry.model_info.get("max_input_tokens")
            return Target(
                model, dict(entry.litellm_params), info if isinstance(info, int) else None
            )
        if self.settings.server.allow_passthrough_models:
            return Target(model, {"model": model}, None)
        raise ProxyError(
            404,
            f"The model `{model}` does not exist or is not configured in memproxy's model_list",
            param="model",
            code="model_not_found",
        )

    def model_names(self) -> list[str]:
        return [entry.model_name for entry in self.settings.model_list]

    def input_window(self, target: Target) -> int | None:
        """The model's input window from config, else litellm's model info."""
        if target.max_input_tokens:
            return target.max_input_tokens
        try:
            info = self.litellm.get_model_info(target.provider_model)
        except Exception:  # unknown model: the caller falls back to a default
            return None
        value = info.get("max_input_tokens") if isinstance(info, dict) else None
        return int(value) if isinstance(value, int) else None

    def _provider(self, target: Target) -> str:
        try:
            return str(self.litellm.get_llm_provider(target.provider_model)[1])
        except Exception:
            return ""

    def build_call(
        self,
        target: Target,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        stream: bool,
        *,
        fallbacks: bool = True,
    ) -> Call:
        """litellm's arguments for `target`, with a call per configured fallback entry."""
        server = self.settings.server
        httpx_timeout = _timeout(server.request_timeout_s, server.connect_timeout_s)
        call: dict[str, Any] = {
            **target.params,
            "messages": messages,
            "stream": stream,
            "timeout": httpx_timeout,
            # Read by `proxy.routing`; litellm itself is told not to retry.
            "num_retries": self.settings.num_retries,
        }
        openai_wire = self._provider(target) in _OPENAI_WIRE
        extra: dict[str, Any] = dict(call.pop("extra_body", None) or {})
        for key, value in params.items():
            if key in _OWN_FIELDS:
                continue
            if key in _LITELLM_SWALLOWS:
                if openai_wire:
                    extra[key] = value
                elif key == "user":
                    call[key] = value
                continue
            if key == "extra_body" and isinstance(value, dict):
                extra.update(value)
                continue
            call[key] = value
        if extra:
            call["extra_body"] = extra
        backups = []
        if fallbacks:
            for name in self.settings.fallbacks_for(target.model_name):
                backups.append(
                    self.build_call(self.resolve(name), messages, params, stream, fallbacks=False)
                )
        return Call(target.model_name, call, backups)

    # --- calls ----------------------------------------------------------------

    @staticmethod
    def _litellm_kwargs(call: dict[str, Any]) -> dict[str, Any]:
        # One retry loop (ours): litellm's and the OpenAI SDK's are turned off.
        return {**call, "num_retries": 0, "max_retries": 0}

    async def complete(self, call: dict[str, Any]) -> Completion:
        started = time.perf_counter()

        async def attempt(entry: Call) -> Any:
            return await self.litellm.acompletion(**self._litellm_kwargs(entry))

        response, route = await run_routed(
            _as_call(call), self.retry_policy, attempt, self.map_error
        )
        body = _strip_provider_fields(response.model_dump())
        usage = body.get("usage")
        elapsed = (time.perf_counter() - started) * 1000
        return Completion(body, usage, elapsed, response, route.record())

    async def open_stream(self, call: dict[str, Any]) -> RoutedStream:
        """Open the stream and wait for its first chunk; retry or fall back until then."""

        async def attempt(entry: Call) -> tuple[Any, Any]:
            stream = await self.litellm.acompletion(**self._litellm_kwargs(entry))
            try:
                first = await stream.__anext__()
            except StopAsyncIteration:
                first = None
            except BaseException:
                await _close_stream(stream)
                raise
            return stream, first

        (stream, first), route = await run_routed(
            _as_call(call), self.retry_policy, attempt, self.map_error
        )
        return RoutedStream(stream, first, route.record())

    async def embed(self, model_name: str, texts: list[str], timeout_s: float) -> Embeddings:
        """Embed `texts` with a model_list model (`memory.long_term.embedding_model`).

        Bounded by `timeout_s` as a whole, retries included (litellm reads
        `max_retries=0` as unset for embeddings and retries on its own): the caller
        falls back to lexical retrieval on any error.
        """
        target = self.resolve(model_name)
        call = {**target.params, "input": texts, "timeout": timeout_s}
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(
                self.litellm.aembedding(**self._litellm_kwargs(call)), timeout_s
            )
        except TimeoutError as exc:
            raise ProxyError(504, "embedding timed out", code="upstream_timeout") from exc
        except Exception as exc:
            raise self.map_error(exc) from exc
        rows = sorted(response.data, key=lambda d: _field(d, "index"))
        vectors = [[float(x) for x in _field(d, "embedding")] for d in rows]
        if len(vectors) != len(texts):
            raise ProxyError(502, "embedding answer has the wrong number of vectors")
        usage = getattr(response, "usage", None)
        tokens = int(_field(usage, "prompt_tokens") or 0) if usage is not None else 0
        try:
            cost: float | None = float(
                self.litellm.completion_cost(response, call_type="aembedding")
            )
        except Exception:  # models without a price (local servers, stubs)
            cost = None
        return Embeddings(vectors, tokens, cost, (time.perf_counter() - started) * 1000)

    def chunk_dict(self, chunk: Any) -> dict[str, Any]:
        data = chunk.model_dump(exclude_none=True) if hasattr(chunk, "model_dump") else dict(chunk)
        return _strip_provider_fields(data)  # type: ignore[no-any-return]

    def cost(self, response: Any) -> float | None:
        # litellm prices every response while building it; pricing it again
        # cost ~1 ms per request.
        hidden = getattr(response, "_hidden_params", None) or {}
        known = hidden.get("response_cost")
        if isinstance(known, int | float):
            return float(known)
        if _pricing_key(hidden.get("litellm_model_name"), response) in _UNPRICED:
            return None  # litellm already failed to price this model: it would again
        try:
            return float(self.litellm.completion_cost(completion_response=response))
        except Exception:  # models without a price (local servers, stubs)
            return None

    def usage_cost(self, model_name: str, usage: dict[str, Any]) -> float | None:
        """Price a streamed answer from the usage its last chunk reported."""
        try:
            prompt, completion = self.litellm.cost_per_token(
                model=self.resolve(model_name).provider_model,
                prompt_tokens=int(usage.get("prompt_tokens") or 0),
                completion_tokens=int(usage.get("completion_tokens") or 0),
            )
            return float(prompt) + float(completion)
        except Exception:  # models without a price, malformed usage
            return None

    def map_error(self, exc: BaseException) -> ProxyError:
        """Keep the provider's status and message; timeouts → 504, unreachable → 502."""
        litellm = self.litellm
        message = redact(str(getattr(exc, "message", None) or exc), self.secrets)
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


# litellm's per-call success logging (`Logging`'s handlers), replaced by no-ops.
SUCCESS_LOGGING_HANDLERS = ("dispatch_success_handlers", "async_success_handler", "success_handler")


def drop_success_logging() -> list[str]:
    """Turn litellm's per-call success logging into no-ops; returns the handlers replaced.

    memproxy configures no litellm callbacks (it records requests itself), yet
    after every call litellm still computes the cost, builds a logging payload
    and deep-copies the messages to redact them — in a task on the event loop
    (and, for the sync handler, in a thread). Against the local stub that was
    ~4 ms of CPU per streamed call (9.6 → 5.7 ms per call), and since it runs
    when the stream ends it delayed the `[DONE]` and the next request's first
    chunk. Failure handlers stay: they are rare and feed litellm's exception
    mapping.
    """
    module: Any = importlib.import_module("litellm.litellm_core_utils.litellm_logging")
    logging_class = module.Logging
    replaced = []
    for name in SUCCESS_LOGGING_HANDLERS:
        original = getattr(logging_class, name, None)
        if original is None or getattr(original, "_memproxy_noop", False):
            continue
        noop = _async_noop if inspect.iscoroutinefunction(original) else _sync_noop
        setattr(logging_class, name, noop)
        replaced.append(name)
    return replaced


async def _async_noop(self: Any, *args: Any, **kwargs: Any) -> None:
    # The real handler restores litellm's trace contextvars when it is done.
    restore = getattr(self, "_restore_correlation_context", None)
    if restore is not None:
        restore()


def _sync_noop(self: Any, *args: Any, **kwargs: Any) -> None:
    return None


_async_noop._memproxy_noop = True  # type: ignore[attr-defined]
_sync_noop._memproxy_noop = True  # type: ignore[attr-defined]


# (requested model, model the response names) that litellm could not price: a
# local or self-hosted model. litellm looks such a model up again on every call,
# through every pricing fallback (~2-3 ms of CPU per call); the answer does not
# change while the process runs. Bounded: passthrough models may be any name.
_UNPRICED: set[tuple[str | None, str | None]] = set()
_UNPRICED_MAX = 1024


def _pricing_key(model: Any, result: Any) -> tuple[str | None, str | None]:
    answered = _field(result, "model") if result is not None else None
    return (
        model if isinstance(model, str) else None,
        answered if isinstance(answered, str) else None,
    )


def skip_repeated_pricing_failures() -> bool:
    """Price a model litellm cannot price once per process, not on every response.

    litellm prices every response while building it (`Logging.
    response_cost_calculator`, on the response path). For a model missing from
    its cost map that fails after trying every fallback spelling of the name;
    the failure is remembered here and the lookup skipped next time (the cost
    stays None, as before). Models with custom pricing never fail, so never
    skip. Returns False if litellm's method is missing (a test fails loudly).
    """
    module: Any = importlib.import_module("litellm.litellm_core_utils.litellm_logging")
    logging_class = module.Logging
    original = getattr(logging_class, "response_cost_calculator", None)
    if original is None:
        return False
    if getattr(original, "_memproxy_memo", False):
        return True

    def response_cost_calculator(self: Any, result: Any, *args: Any, **kwargs: Any) -> Any:
        name = kwargs.get("litellm_model_name") or getattr(self, "model", None)
        key = _pricing_key(name, result)
        if key in _UNPRICED and not getattr(self, "custom_pricing", False):
            return None
        cost = original(self, result, *args, **kwargs)
        details = getattr(self, "model_call_details", None) or {}
        if cost is None and details.get("response_cost_failure_debug_information"):
            if len(_UNPRICED) >= _UNPRICED_MAX:
                _UNPRICED.clear()
            _UNPRICED.add(key)
        return cost

    response_cost_calculator._memproxy_memo = True  # type: ignore[attr-defined]
    logging_class.response_cost_calculator = response_cost_calculator
    return True


def _field(obj: Any, name: str) -> Any:
    """A field of a litellm object or of a plain dict (litellm returns either)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _as_call(call: dict[str, Any]) -> Call:
    return call if isinstance(call, Call) else Call(str(call.get("model", "")), call)


def _timeout(total: float, connect: float) -> Any:
    import httpx

    return httpx.Timeout(total, connect=connect)
