"""Usage as a provider reports it: tokens counted as a provider would (cl100k),
and the prompt cache (`PromptCache`) its `cached_tokens` come from (with
`usage_style = "anthropic"`, Anthropic's cache read / write fields as well).
"""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from policies.assemble.cache_pricing import RULES, CacheRule, cached_prefix
from proxy.records import common_chars as _common_chars
from proxy.records import serialised
from proxy.tokens import TokenCounter

if TYPE_CHECKING:
    from proxy.stub.state import Reply, StubState


@functools.cache
def stub_token_counter() -> TokenCounter:
    """Built on first use: tiktoken loads its BPE file then, not at import."""
    return TokenCounter("cl100k_base")


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def prompt_texts(body: dict[str, Any]) -> list[str]:
    """A request's prompt as a provider caches it: the tools first, then each message
    serialised (role, content, tool calls), so equal prompts give equal texts."""
    texts = []
    if body.get("tools"):
        texts.append("<tools>" + json.dumps(body["tools"], sort_keys=True, ensure_ascii=False))
    texts += [serialised(m) for m in body.get("messages") or [] if isinstance(m, dict)]
    return texts


class PromptCache:
    """The prompts a provider has cached, as an index of their prefixes.

    Every whole-message prefix of every prompt seen (per model) is kept under a
    hash of its texts, with its size in tokens and the next text of the latest
    prompt that continued it; a lookup walks the new prompt's prefixes until one
    is not cached, then counts the text it shares with that next message. The
    cost is one hash per message, however many prompts are cached (the least
    recently used prefixes go first past `max_prefixes`).
    """

    def __init__(self, max_prefixes: int = 100_000) -> None:
        self._prefixes: OrderedDict[int, tuple[int, str | None]] = OrderedDict()
        self._max = max_prefixes
        self._lock = threading.Lock()

    def lookup_and_add(
        self,
        model: str,
        texts: list[str],
        prompt_tokens: int,
        count: Callable[[str], int] | None = None,
        rule: CacheRule = RULES["openai"],
    ) -> int:
        """Tokens of this prompt a provider serves from its cache (0 for a fresh
        prompt or one under the rule's minimum; else the shared prefix rounded down
        to the rule's blocks); then the prompt is cached for the next ones."""
        count = count or stub_token_counter()
        # Python's own hash of (previous key, text): one C pass over each text (a
        # 64-bit collision would only misreport a test's cached tokens).
        keys, key = [], hash(model)
        for text in texts:
            key = hash((key, text))
            keys.append(key)
        with self._lock:
            known: list[int] = []  # tokens through each cached prefix
            following = None
            for key in keys:
                found = self._prefixes.get(key)
                if found is None:
                    break
                known.append(found[0])
                following = found[1]
            matched = len(known)
            whole = known[-1] if known else 0
            shared = whole
            if following is not None and matched < len(texts):
                shared += count(texts[matched][: _common_chars(following, texts[matched])])
            # Only the texts past the cached prefix are counted (usually the new turns).
            total = whole
            for i, key in enumerate(keys):
                if i < matched:
                    through = known[i]
                else:
                    total += count(texts[i])
                    through = total
                self._prefixes[key] = (through, texts[i + 1] if i + 1 < len(texts) else None)
                self._prefixes.move_to_end(key)
            while len(self._prefixes) > self._max:
                self._prefixes.popitem(last=False)
        return min(prompt_tokens, cached_prefix(prompt_tokens, shared, rule))

    def clear(self) -> None:
        with self._lock:
            self._prefixes.clear()


def _usage(body: dict[str, Any], reply: Reply) -> dict[str, Any]:
    """Usage counted as a provider would (cl100k, 4 tokens of framing per
    message), so costs computed from it compare fairly across prompts."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    prompt = sum(stub_token_counter()(_text(m.get("content") or "")) + 4 for m in messages)
    answer = reply if reply.get("tool_calls") else reply.get("content") or ""
    completion = stub_token_counter()(_text(answer))
    return {
        "prompt_tokens": max(1, prompt),
        "completion_tokens": max(1, completion),
        "total_tokens": max(1, prompt) + max(1, completion),
    }


def cached_usage(
    state: StubState, body: dict[str, Any], reply: Reply, model: str
) -> dict[str, Any]:
    """The answer's usage, the prompt looked up in (then added to) the prompt cache."""
    usage = _usage(body, reply)
    prompt = usage["prompt_tokens"]
    cached = state.cache.lookup_and_add(model, prompt_texts(body), prompt)
    usage["prompt_tokens_details"] = {"cached_tokens": cached}
    if state.usage_style == "anthropic":
        # Anthropic's cache: the shared prefix is read, the rest of the prompt written.
        usage["cache_read_input_tokens"] = cached
        usage["cache_creation_input_tokens"] = prompt - cached
    return usage
