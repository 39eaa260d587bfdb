"""litellm's arguments for one routed call (`Upstream.build_call`).

It never imports litellm: the provider of a target comes from `Upstream.provider`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from proxy import demo
from proxy.errors import ProxyError
from proxy.routing import Call
from proxy.settings import ModelEntry
from proxy.upstream_wire import OPENAI_WIRE, Target, log

if TYPE_CHECKING:
    from proxy.upstream import Upstream

# Fields litellm consumes for itself instead of forwarding.
_LITELLM_SWALLOWS = frozenset({"user", "metadata"})
# Request fields we handle ourselves.
_OWN_FIELDS = frozenset({"model", "messages", "stream"})


class CallBuilder:
    """Builds the `Call` for a target and its configured fallbacks."""

    def __init__(self, upstream: Upstream) -> None:
        self._upstream = upstream

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
        settings = self._upstream.settings
        server = settings.server
        httpx_timeout = _timeout(server.request_timeout_s, server.connect_timeout_s)
        call: dict[str, Any] = {
            **target.params,
            "messages": messages,
            "stream": stream,
            "timeout": httpx_timeout,
            # Read by `proxy.routing`; litellm itself is told not to retry.
            "num_retries": settings.num_retries,
        }
        openai_wire = self._upstream.provider(target) in OPENAI_WIRE
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
            for name in settings.fallbacks_for(target.model_name):
                entry = settings.find_model(name)
                if entry is not None and entry.missing_env:
                    log.warning("fallback %s skipped: %s", name, missing_env_error(entry).message)
                    continue
                backups.append(
                    self.build_call(
                        self._upstream.resolve(name),
                        messages if fallback_messages is None else fallback_messages,
                        params if fallback_params is None else fallback_params,
                        stream,
                        fallbacks=False,
                        about=about,
                    )
                )
        return Call(target.model_name, call, backups)


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


def _timeout(total: float, connect: float) -> Any:
    import httpx

    return httpx.Timeout(total, connect=connect)
