"""The built-in demo model: try memproxy without a provider key.

A `model_list` entry with `litellm_params: {model: memproxy/demo}` is answered
here, inside memproxy, instead of by a provider: the answer is a short account
of what memproxy did with the request (tokens the client sent against tokens
forwarded, the sections of the managed context, the last user message). It is
deterministic — the same request gets the same words — and costs nothing; the
usage it reports is memproxy's own token count of what was forwarded and of
the answer, not an estimate of some provider's.

The demo goes through the same pipeline as any model (session, memory,
assembly, the request record, retries and fallbacks); only the provider call
is replaced, so everything the inspector shows about it is real.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

DEMO_MODEL = "memproxy/demo"
# The key under which `Upstream.build_call` hands the request's facts to the demo.
FACTS_KEY = "memproxy_demo_facts"
_CHUNK_WORDS = 4  # words per streamed chunk
_QUOTE_CHARS = 120


def is_demo(params: dict[str, Any]) -> bool:
    return params.get("model") == DEMO_MODEL


def request_facts(about: Any) -> dict[str, Any]:
    """What the demo answer reports, read from the pipeline's `RequestPlan` (duck-typed)."""
    if about is None:
        return {}
    facts: dict[str, Any] = {
        "raw_tokens": getattr(about, "raw_tokens", None),
        "context_tokens": getattr(about, "context_tokens", None),
        "mode": getattr(about, "mode", None),
        "budget": getattr(about, "budget", None),
        "policy": getattr(getattr(about, "preset", None), "name", None),
        "turns": len(getattr(about, "turns", ()) or ()),
    }
    assembled = getattr(about, "assembled", None)
    if assembled is not None:
        facts["sections"] = [
            (s.name, s.tokens, s.count) for s in assembled.sections if s.tokens or s.count
        ]
        facts["passthrough"] = bool(assembled.passthrough)
    counter = getattr(about, "counter", None)
    if counter is not None:
        facts["counter"] = counter
    return facts


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return " ".join(p for p in parts if isinstance(p, str))
    return ""


def demo_answer(messages: list[dict[str, Any]], facts: dict[str, Any]) -> str:
    """The answer's text: an honest account of this request, the same for the same input."""
    last = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    quote = " ".join(_text_of(last).split()) if last is not None else ""
    if len(quote) > _QUOTE_CHARS:
        quote = quote[: _QUOTE_CHARS - 1] + "…"
    lines = ["memproxy demo model: no provider was called; this answer describes the request."]
    raw, sent = facts.get("raw_tokens"), facts.get("context_tokens")
    if isinstance(raw, int) and isinstance(sent, int):
        mode = facts.get("mode") or "managed"
        lines.append(
            f"- Your conversation is {raw} tokens; memproxy forwarded {sent} tokens "
            f"in {len(messages)} messages ({mode} mode, policy {facts.get('policy')}, "
            f"budget {facts.get('budget')})."
        )
    else:
        lines.append(f"- memproxy forwarded {len(messages)} messages.")
    if facts.get("turns"):
        n = facts["turns"]
        lines.append(f"- This session holds {n} turn{'' if n == 1 else 's'} so far.")
    sections = facts.get("sections")
    if sections:
        shown = ", ".join(f"{name} {tokens} tokens ({count})" for name, tokens, count in sections)
        how = " (the client's messages, unchanged)" if facts.get("passthrough") else ""
        lines.append(f"- Sections sent{how}: {shown}.")
    if quote:
        lines.append(f'- Your last message: "{quote}"')
    lines.append(
        "Open /ui to see this request's record; put a provider model in config.yaml's "
        "model_list for real answers."
    )
    return "\n".join(lines)


def _count(facts: dict[str, Any], text: str) -> int:
    counter = facts.get("counter")
    return int(counter(text)) if counter is not None else max(1, len(text) // 4)


def _usage(facts: dict[str, Any], messages: list[dict[str, Any]], text: str) -> dict[str, Any]:
    sent = facts.get("context_tokens")
    prompt = sent if isinstance(sent, int) else _count(facts, json.dumps(messages))
    completion = _count(facts, text)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _response_id(messages: list[dict[str, Any]]) -> str:
    digest = hashlib.blake2b(
        json.dumps(messages, sort_keys=True, ensure_ascii=False).encode(), digest_size=12
    ).hexdigest()
    return f"chatcmpl-demo-{digest}"


class DemoResponse:
    """A chat completion in the shape `Upstream.complete` reads from litellm's objects."""

    def __init__(self, body: dict[str, Any]) -> None:
        self._body = body
        self._hidden_params = {"response_cost": 0.0}  # nothing was billed

    def model_dump(self, **_: Any) -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(json.dumps(self._body))
        return copied


def complete(call: dict[str, Any], model_name: str) -> DemoResponse:
    messages = call.get("messages") or []
    facts = call.get(FACTS_KEY) or {}
    text = demo_answer(messages, facts)
    return DemoResponse(
        {
            "id": _response_id(messages),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model_name,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(facts, messages, text),
        }
    )


async def stream(call: dict[str, Any], model_name: str) -> AsyncIterator[dict[str, Any]]:
    """The same answer as chunks of a few words; usage last when the client asked for it."""
    messages = call.get("messages") or []
    facts = call.get(FACTS_KEY) or {}
    text = demo_answer(messages, facts)
    base = {
        "id": _response_id(messages),
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model_name,
    }
    words = text.split(" ")
    for i in range(0, len(words), _CHUNK_WORDS):
        piece = " ".join(words[i : i + _CHUNK_WORDS])
        if i + _CHUNK_WORDS < len(words):
            piece += " "
        delta: dict[str, Any] = {"content": piece}
        if i == 0:
            delta["role"] = "assistant"
        yield {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    yield {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    options = call.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage"):
        yield {**base, "choices": [], "usage": _usage(facts, messages, text)}
