"""The provider side: the only module that imports litellm.

litellm is imported lazily (it costs seconds and, unless told otherwise, tries
to download a model-cost map), once, when the app starts. Everything the
client sent besides the messages goes to the provider unchanged; litellm's
exceptions become `ProxyError`s that keep the provider's status and message.
Retryable failures are retried and then sent to the configured fallbacks
(`proxy.routing`); litellm's and the OpenAI SDK's own retries are turned off so
that there is one retry loop, and it is the one that records what it did.

Beside it, calling the litellm this module loaded without importing it:
`proxy.pricing` (`Upstream.pricing`: prices and costs), `proxy.upstream_passthrough`
(`Upstream.passthrough`: the raw pass-through routes' calls) and
`proxy.upstream_wire` (targets, answers, streams, litellm's objects made plain).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import os
import threading
import time
from typing import Any

from proxy import demo
from proxy.config import ModelEntry, Settings
from proxy.errors import ProxyError
from proxy.pricing import Pricing, remember_pricing_failures
from proxy.redaction import redact_secrets
from proxy.routing import Call, RetryPolicy, run_routed
from proxy.upstream_passthrough import Passthrough
from proxy.upstream_wire import (
    OPENAI_WIRE,
    Completion,
    Embeddings,
    RoutedStream,
    Target,
    field_of,
    first_chunk,
    litellm_kwargs,
    log,
    strip_provider_fields,
)

# Fields litellm consumes for itself instead of forwarding.
_LITELLM_SWALLOWS = frozenset({"user", "metadata"})
# Request fields we handle ourselves.
_OWN_FIELDS = frozenset({"model", "messages", "stream"})
# Providers that serve Claude models with Anthropic's message format.
_CLAUDE_HOSTS = frozenset({"bedrock", "vertex_ai", "vertex_ai_beta", "azure_ai"})
_SECRET_KEYS = ("api_key", "aws_secret_access_key", "vertex_credentials")


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
        self.pricing = Pricing(self)
        self.passthrough = Passthrough(self)

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
        openai_wire = self._provider(target) in OPENAI_WIRE
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

    async def complete(self, call: dict[str, Any]) -> Completion:
        started = time.perf_counter()

        async def attempt(entry: Call) -> Any:
            if demo.is_demo(entry):
                return demo.complete(entry, entry.model_name)
            return await self.litellm.acompletion(**litellm_kwargs(entry))

        response, route = await run_routed(
            _as_call(call), self.retry_policy, attempt, self.map_error
        )
        body = strip_provider_fields(response.model_dump())
        usage = body.get("usage")
        elapsed = (time.perf_counter() - started) * 1000
        return Completion(body, usage, elapsed, response, route.record())

    async def open_stream(self, call: dict[str, Any]) -> RoutedStream:
        """Open the stream and wait for its first chunk; retry or fall back until then."""

        async def attempt(entry: Call) -> tuple[Any, Any]:
            if demo.is_demo(entry):
                stream: Any = demo.stream(entry, entry.model_name)
            else:
                stream = await self.litellm.acompletion(**litellm_kwargs(entry))
            return await first_chunk(stream)

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
                self.litellm.aembedding(**litellm_kwargs(call)), timeout_s
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
        cost = self.pricing.embedding_cost(response)
        return Embeddings(vectors, tokens, cost, (time.perf_counter() - started) * 1000)

    def chunk_dict(self, chunk: Any) -> dict[str, Any]:
        data = chunk.model_dump(exclude_none=True) if hasattr(chunk, "model_dump") else dict(chunk)
        return strip_provider_fields(data)  # type: ignore[no-any-return]

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


def skip_repeated_pricing_failures() -> bool:
    """Price a model litellm cannot price once per process (`proxy.pricing`)."""
    module: Any = importlib.import_module("litellm.litellm_core_utils.litellm_logging")
    return remember_pricing_failures(module.Logging)


def _as_call(call: dict[str, Any]) -> Call:
    return call if isinstance(call, Call) else Call(str(call.get("model", "")), call)


def _timeout(total: float, connect: float) -> Any:
    import httpx

    return httpx.Timeout(total, connect=connect)
