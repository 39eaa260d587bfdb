"""The completion (and embedding) callables the proxy injects into policies.

`memory.extractor: llm` / `hybrid` and `memory.summarizer: llm` ask `memory.llm_model` (a
model_list name, so it is routed, authenticated and priced like any client
request) through `proxy.upstream`; `policies.registry` builds the policies
by name around this callable, so they never see litellm or the config.
"""

from __future__ import annotations

from typing import Any

from policies.llm.calls import Complete, LLMReply
from policies.registry import Injected
from proxy.longterm import Embed, EmbeddingReply
from proxy.settings import Settings
from proxy.upstream import Upstream


def make_completion(upstream: Upstream, settings: Settings) -> Complete:
    """`complete(messages) -> LLMReply` against `memory.llm_model`, temperature 0."""
    memory = settings.memory
    assert memory.llm_model is not None

    async def complete(messages: list[dict[str, Any]]) -> LLMReply:
        target = upstream.resolve(memory.llm_model or "")
        params: dict[str, Any] = {"temperature": 0}
        if memory.llm_json_mode:
            params["response_format"] = {"type": "json_object"}
        call = upstream.build_call(target, messages, params, stream=False)
        # The policy has its own deadline and a fallback: no retries here.
        call["num_retries"] = call["max_retries"] = 0
        completion = await upstream.complete(call)
        choices = completion.body.get("choices") or [{}]
        message = choices[0].get("message") or {}
        usage = completion.usage or {}
        return LLMReply(
            text=str(message.get("content") or ""),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            cost=upstream.pricing.cost(completion.response_obj),
        )

    return complete


def make_embedder(upstream: Upstream, settings: Settings) -> Embed | None:
    """`embed(texts) -> vectors` against `memory.long_term.embedding_model` (None: unset)."""
    long_term = settings.memory.long_term
    model = long_term.embedding_model
    if not model:
        return None

    async def embed(texts: list[str]) -> EmbeddingReply:
        done = await upstream.embed(model, texts, long_term.embedding_timeout_s)
        return EmbeddingReply(done.vectors, done.prompt_tokens, done.cost)

    return embed


class Completion:
    """The `complete` the registry injects into the LLM-backed policies.

    The policies are built (and their config validated) in `create_app`; the
    upstream they ask exists only once the lifespan has started, so this is
    bound to it then. A call before that is a programming error.
    """

    def __init__(self, settings: Settings, override: Complete | None = None) -> None:
        self._settings = settings
        # A completion of the caller's instead of `memory.llm_model` through the
        # upstream (`memproxy eval --llm-replies`: recorded replies).
        self._override = override
        self._complete: Complete | None = override

    def bind(self, upstream: Upstream) -> None:
        if self._override is None and self._settings.memory.llm_model is not None:
            self._complete = make_completion(upstream, self._settings)

    async def __call__(self, messages: list[dict[str, Any]]) -> LLMReply:
        if self._complete is None:
            raise RuntimeError("the completion is used before the upstream was bound")
        return await self._complete(messages)


def injected(settings: Settings, completion: Completion) -> Injected:
    """What the registry hands the LLM-backed policies under these settings."""
    memory = settings.memory
    wanted = memory.llm_model is not None and (
        "llm" in (memory.extractor, memory.summarizer) or memory.extractor == "hybrid"
    )
    return Injected(completion if wanted else None, memory.llm_timeout_s)
