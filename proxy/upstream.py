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
(`Upstream.passthrough`: the raw pass-through routes' calls),
`proxy.upstream_build` (`Upstream.build_call`: litellm's arguments for a call),
`proxy.upstream_calls` (`Upstream.complete`, `open_stream`, `embed`, `map_error`)
and `proxy.upstream_wire` (targets, answers, streams, litellm's objects made plain).
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from proxy.errors import ProxyError
from proxy.pricing import Pricing, remember_pricing_failures
from proxy.routing import RetryPolicy
from proxy.settings import ModelEntry, Settings
from proxy.upstream_build import CallBuilder, missing_env_error
from proxy.upstream_calls import ProviderCalls
from proxy.upstream_passthrough import Passthrough
from proxy.upstream_wire import Target

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
        self.builder = CallBuilder(self)
        self.calls = ProviderCalls(self)
        # The call building and the calls, on their own (`proxy.upstream_build`,
        # `proxy.upstream_calls`); the callers keep calling them here.
        self.build_call = self.builder.build_call
        self.complete = self.calls.complete
        self.open_stream = self.calls.open_stream
        self.embed = self.calls.embed
        self.chunk_dict = self.calls.chunk_dict
        self.map_error: Callable[[BaseException], ProxyError] = self.calls.map_error

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
        skip_unused_stream_rebuild()
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


def skip_unused_stream_rebuild() -> bool:
    """litellm rebuilds a whole response from a finished stream only when it is used.

    At the end of every stream litellm joins its chunks into one response
    (`stream_chunk_builder`, in a worker thread, counting the prompt's tokens
    when the provider reported none), deep-copies it and hands it to its cache
    and its success logging. memproxy rebuilds the answer itself
    (`proxy.chat.stream.AnswerAccumulator`), uses no litellm cache and has no
    success logging (`drop_success_logging`): what is left of that rebuild is
    the usage chunk of a stream whose caller asked for one (`stream_options:
    include_usage`), and a stream with a cache (`litellm.cache`, which memproxy
    never sets) or a deferred callback (litellm's own proxy). Any other
    stream ends without it: litellm's end of stream takes a missing rebuild
    (None) as it comes. Returns whether it is in place (False: litellm renamed it).
    """
    litellm: Any = importlib.import_module("litellm")
    module: Any = importlib.import_module("litellm.litellm_core_utils.streaming_handler")
    wrapper = module.CustomStreamWrapper
    rebuild = getattr(wrapper, "_async_build_complete_streaming_response", None)
    if rebuild is None:
        return False
    if getattr(rebuild, "_memproxy_when_used", False):
        return True

    async def rebuild_when_used(self: Any) -> Any:
        # Every call has a caching handler; it stores only with `litellm.cache` set.
        if (
            getattr(self, "send_stream_usage", True)
            or getattr(litellm, "cache", None) is not None
            or getattr(getattr(self, "logging_obj", None), "_on_deferred_stream_complete", None)
            is not None
        ):
            return await rebuild(self)
        return None

    rebuild_when_used._memproxy_when_used = True  # type: ignore[attr-defined]
    wrapper._async_build_complete_streaming_response = rebuild_when_used
    return True


def skip_repeated_pricing_failures() -> bool:
    """Price a model litellm cannot price once per process (`proxy.pricing`)."""
    module: Any = importlib.import_module("litellm.litellm_core_utils.litellm_logging")
    return remember_pricing_failures(module.Logging)
