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

from proxy import demo
from proxy.config import ModelEntry, Settings
from proxy.errors import ProxyError
from proxy.redaction import redact_secrets
from proxy.routing import Call, RetryPolicy, run_routed

log = logging.getLogger("memproxy.upstream")

# Providers that speak OpenAI's wire format: fields litellm would swallow or
# reject (`user`, `metadata`, vendor extensions) can ride in `extra_body`.
_OPENAI_WIRE = frozenset({"openai", "custom_openai", "azure", "hosted_vllm", "lm_studio"})
# Fields litellm consumes for itself instead of forwarding.
_LITELLM_SWALLOWS = frozenset({"user", "metadata"})
# Request fields we handle ourselves.
_OWN_FIELDS = frozenset({"model", "messages", "stream"})
# Providers that serve Claude models with Anthropic's message format.
_CLAUDE_HOSTS = frozenset({"bedrock", "vertex_ai", "vertex_ai_beta", "azure_ai"})
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


class Upstream:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.retry_policy = RetryPolicy.from_settings(settings)
        self._litellm: Any = None
        self._loader: threading.Thread | None = None
        self._price_info: dict[str, dict[str, Any]] = {}
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
        # Else litellm fetches its Anthropic beta-header table from GitHub on first use.
        os.environ.setdefault("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")
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
        if entry is not None and entry.missing_env:
            raise missing_env_error(entry)
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

    def anthropic_family(self, target: Target) -> bool:
        """Whether litellm reaches `target` through Anthropic's Messages API (Claude)."""
        provider = self._provider(target)
        if provider == "anthropic":
            return True
        return provider in _CLAUDE_HOSTS and "claude" in target.provider_model.lower()

    def _provider(self, target: Target) -> str:
        try:
            return str(self.litellm.get_llm_provider(target.provider_model)[1])
        except Exception:
            return ""

    def provider(self, target: Target) -> str:
        """litellm's provider of a routed model ("openai", "anthropic", "bedrock", …)."""
        return self._provider(target)

    # Price keys a model_list entry may set itself (litellm's custom pricing names).
    _PRICE_KEYS = (
        "input_cost_per_token",
        "output_cost_per_token",
        "cache_read_input_token_cost",
        "cache_creation_input_token_cost",
    )

    def price_info(self, model_name: str) -> dict[str, Any]:
        """A model's per-token prices: litellm's cost map, then the entry's own figures
        (litellm_params / model_info). Empty for a model without a price."""
        if model_name in self._price_info:
            return self._price_info[model_name]
        info: dict[str, Any] = {}
        try:
            target = self.resolve(model_name)
        except ProxyError:
            return info
        try:
            found = self.litellm.get_model_info(target.provider_model)
            info = {k: found.get(k) for k in self._PRICE_KEYS if found.get(k) is not None}
        except Exception:  # unknown model: only the entry's own figures
            info = {}
        entry = self.settings.find_model(model_name)
        if entry is not None:
            for source in (entry.model_info, entry.litellm_params):
                info.update({k: source[k] for k in self._PRICE_KEYS if source.get(k) is not None})
        self._price_info[model_name] = info
        return info

    def build_call(
        self,
        target: Target,
        messages: list[dict[str, Any]],
        params: dict[str, Any],
        stream: bool,
        *,
        fallbacks: bool = True,
        fallback_messages: list[dict[str, Any]] | None = None,
        fallback_params: dict[str, Any] | None = None,
        about: Any = None,
    ) -> Call:
        """litellm's arguments for `target`, with a call per configured fallback entry.

        `fallback_*`: what the fallbacks get instead (the prompt without the cache
        hints meant for `target`'s provider); by default the same. `about` (the
        pipeline's `RequestPlan`) is read only by the built-in demo model."""
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
        if demo.is_demo(target.params):
            call[demo.FACTS_KEY] = demo.request_facts(about)
        backups = []
        if fallbacks:
            for name in self.settings.fallbacks_for(target.model_name):
                entry = self.settings.find_model(name)
                if entry is not None and entry.missing_env:
                    log.warning("fallback %s skipped: %s", name, missing_env_error(entry).message)
                    continue
                backups.append(
                    self.build_call(
                        self.resolve(name),
                        messages if fallback_messages is None else fallback_messages,
                        params if fallback_params is None else fallback_params,
                        stream,
                        fallbacks=False,
                        about=about,
                    )
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
            if demo.is_demo(entry):
                return demo.complete(entry, entry.model_name)
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
            if demo.is_demo(entry):
                stream: Any = demo.stream(entry, entry.model_name)
            else:
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

    # --- pass-through routes (proxy.http.passthrough) -------------------------------------

    def can_call(self, function: str) -> bool:
        """Whether the installed litellm has `function` (e.g. `aembedding`)."""
        return callable(getattr(self.litellm, function, None))

    def provider_of(self, target: Target) -> str:
        return self._provider(target)

    def passthrough_call(
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
            params["custom_llm_provider"] = self._provider(target) or "openai"
        call: dict[str, Any] = {
            **params,
            **fields,
            "timeout": float(self.settings.server.request_timeout_s),
            "num_retries": self.settings.num_retries,
        }
        if extra and self._provider(target) in _OPENAI_WIRE:
            call["extra_body"] = {**(call.get("extra_body") or {}), **extra}
        else:
            call.update(extra)
        backups = []
        if fallbacks and by_model:
            for name in self.settings.fallbacks_for(target.model_name):
                backups.append(
                    self.passthrough_call(self.resolve(name), fields, extra, fallbacks=False)
                )
        return Call(target.model_name, call, backups)

    async def passthrough(
        self, function: str, route: str, call: Call, *, stream: bool = False
    ) -> tuple[Any, dict[str, Any]]:
        """Run litellm's `function` with retries and fallbacks; a stream waits for its
        first chunk (as `open_stream` does) and comes back as a `RoutedStream`."""
        run = getattr(self.litellm, function)

        async def attempt(entry: Call) -> Any:
            result = await run(**self._litellm_kwargs(entry))
            if not stream:
                return result
            try:
                first = await result.__anext__()
            except StopAsyncIteration:
                first = None
            except BaseException:
                await _close_stream(result)
                raise
            return result, first

        result, log_ = await run_routed(
            call, self.retry_policy, attempt, lambda exc: self.map_passthrough_error(exc, route)
        )
        if stream:
            return RoutedStream(result[0], result[1], log_.record()), log_.record()
        return result, log_.record()

    def passthrough_body(self, result: Any) -> dict[str, Any]:
        """A litellm answer object as the JSON the client gets (OpenAI's field names)."""
        if hasattr(result, "model_dump"):
            data = result.model_dump(by_alias=True, exclude_none=True, warnings=False)
        else:
            data = dict(result)
        return _strip_provider_fields(data)  # type: ignore[no-any-return]

    def passthrough_cost(self, result: Any, function: str) -> float | None:
        known = (getattr(result, "_hidden_params", None) or {}).get("response_cost")
        if isinstance(known, int | float):
            return float(known)
        try:
            return float(self.litellm.completion_cost(result, call_type=function))
        except Exception:  # models without a price (local servers, stubs), binary answers
            return None

    def map_passthrough_error(self, exc: BaseException, route: str) -> ProxyError:
        """501 when litellm itself cannot serve `route` for this provider; otherwise the
        provider's status with its own error object (message, type, param, code)."""
        if _litellm_lacks(exc):
            detail = redact_secrets(str(getattr(exc, "message", None) or exc), self.secrets)
            return ProxyError(
                501,
                f"memproxy cannot serve {route} for this model: litellm has no call for it "
                f"({detail})",
                code="route_not_supported",
                type_="not_implemented_error",
            )
        error = self.map_error(exc)
        provided = _provider_error(exc)
        if provided is not None and error.status == getattr(exc, "status_code", None):
            message = str(provided.get("message") or error.message)
            error.message = redact_secrets(message, self.secrets)
            error.type = str(provided.get("type") or error.type)
            error.param = provided.get("param")
            error.code = provided.get("code")
        return error

    def prices(self, model_name: str) -> dict[str, float] | None:
        """A model_list model's prices per token from litellm's (local) cost map:
        `input`, `output`, `cache_read`, `cache_write`; None when it has no price."""
        try:
            info = self.litellm.get_model_info(self.resolve(model_name).provider_model)
        except Exception:  # unknown model (local servers, stubs)
            return None
        source = {
            "input": "input_cost_per_token",
            "output": "output_cost_per_token",
            "cache_read": "cache_read_input_token_cost",
            "cache_write": "cache_creation_input_token_cost",
        }
        out = {k: info.get(v) for k, v in source.items()}
        if not isinstance(out["input"], int | float) or not isinstance(out["output"], int | float):
            return None
        # A model with no cache price bills cached tokens as ordinary input.
        return {k: float(v if isinstance(v, int | float) else out["input"]) for k, v in out.items()}

    def map_error(self, exc: BaseException) -> ProxyError:
        """Keep the provider's status and message; timeouts → 504, unreachable → 502."""
        litellm = self.litellm
        message = redact_secrets(str(getattr(exc, "message", None) or exc), self.secrets)
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


def missing_env_error(entry: ModelEntry) -> ProxyError:
    """A model whose `os.environ/NAME` was unset at start: 502, and not to be retried.

    502 because the fault is the proxy's configuration, not the client's request
    or key; `x-should-retry: false` because the openai and anthropic SDKs would
    otherwise retry a 502 (twice, by default) although nothing can change until
    memproxy is restarted with the variable set.
    """
    names = ", ".join(sorted({name for _, name in entry.missing_env}))
    keys = ", ".join(f"litellm_params.{key}: os.environ/{name}" for key, name in entry.missing_env)
    return ProxyError(
        502,
        f"model {entry.model_name!r} cannot be called: the environment variable {names} "
        f"({keys}) was not set when memproxy started. Set it and restart memproxy, "
        "or choose another model.",
        param="model",
        code="missing_provider_key",
        headers={"x-should-retry": "false"},
    )


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
