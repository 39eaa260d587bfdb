"""The completion callable the LLM-backed policies get, and the policies themselves.

`memory.extractor: llm` / `memory.summarizer: llm` ask `memory.llm_model` (a
model_list name, so it is routed, authenticated and priced like any client
request) through `proxy.upstream`; the policies in `policies.llm` never see
litellm or the config.
"""

from __future__ import annotations

from typing import Any

from policies.base import ExtractionPolicy
from policies.llm import Complete, LLMExtractor, LLMReply, LLMSummarizer
from policies.summary import RuleSummarizer
from proxy.config import Settings
from proxy.longterm import Embed, EmbeddingReply
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
            cost=upstream.cost(completion.response_obj),
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


class LLMPolicies:
    """The configured LLM-backed policies (each None when the rules are configured)."""

    def __init__(self, upstream: Upstream, settings: Settings) -> None:
        memory = settings.memory
        self._complete: Complete | None = None
        if "llm" in (memory.extractor, memory.summarizer):
            self._complete = make_completion(upstream, settings)
        self.timeout_s = memory.llm_timeout_s
        self.extract = memory.extractor == "llm"
        self.summarize = memory.summarizer == "llm"

    def extractor(self, fallback: ExtractionPolicy | None) -> LLMExtractor | None:
        if not self.extract or fallback is None or self._complete is None:
            return None
        return LLMExtractor(self._complete, fallback, self.timeout_s)

    def summarizer(self, fallback: RuleSummarizer | None) -> LLMSummarizer | None:
        if not self.summarize or fallback is None or self._complete is None:
            return None
        return LLMSummarizer(self._complete, fallback, self.timeout_s)
