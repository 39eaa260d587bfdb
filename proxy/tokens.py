"""Token counting with the model's tokenizer, each distinct text counted once.

tiktoken's BPE files ship inside litellm; we point tiktoken at them without
importing litellm (which costs seconds and may try the network).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

_LOCK = threading.Lock()


def bundled_tiktoken_dir() -> str | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return str(path) if path.is_dir() else None


def _encoding(name: str) -> Any:
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        bundled = bundled_tiktoken_dir()
        if bundled:
            os.environ["TIKTOKEN_CACHE_DIR"] = bundled
    import tiktoken

    return tiktoken.get_encoding(name)


def encoding_for_model(model: str) -> str:
    """o200k for the GPT-4o / o-series family, cl100k for everything else."""
    bare = model.rsplit("/", 1)[-1].lower()
    if bare.startswith(("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4", "chatgpt-4o")):
        return "o200k_base"
    return "cl100k_base"


class TokenCounter:
    """Counts tokens of texts, caching by text (an LRU bounded in entries and in bytes).

    The bytes bound is what keeps a few long texts (pasted documents, tool
    outputs) from holding far more memory than `cache_size` short ones would:
    the texts' own sizes (`sys.getsizeof`) count, and a text over the whole
    budget is counted but not kept.
    """

    def __init__(
        self,
        encoding: str = "cl100k_base",
        cache_size: int = 50_000,
        cache_bytes: int = 32 * 1024 * 1024,
    ) -> None:
        self.encoding_name = encoding
        self._enc: Any = None
        self._cache: OrderedDict[str, int] = OrderedDict()
        self._cache_size = cache_size
        self._cache_bytes = cache_bytes
        self._held = 0  # sys.getsizeof of the cached texts

    def _enc_ready(self) -> Any:
        if self._enc is None:
            with _LOCK:
                if self._enc is None:
                    self._enc = _encoding(self.encoding_name)
        return self._enc

    def __call__(self, text: str) -> int:
        if not text:
            return 0
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return cached
        n = len(self._enc_ready().encode(text, disallowed_special=()))
        size = sys.getsizeof(text)
        if size > self._cache_bytes:
            return n
        self._cache[text] = n
        self._held += size
        while len(self._cache) > self._cache_size or self._held > self._cache_bytes:
            old, _ = self._cache.popitem(last=False)
            self._held -= sys.getsizeof(old)
        return n

    def cached(self) -> tuple[int, int]:
        """(texts, bytes of text) held by the cache."""
        return len(self._cache), self._held

    def decode(self, tokens: list[int]) -> str:
        """The text of a token array (the stub takes them as embedding input, as OpenAI does)."""
        return str(self._enc_ready().decode(tokens))


class TokenCounters:
    """One counter per encoding, shared by all requests of the app."""

    def __init__(self) -> None:
        self._by_encoding: dict[str, TokenCounter] = {}

    def for_model(self, model: str) -> TokenCounter:
        name = encoding_for_model(model)
        counter = self._by_encoding.get(name)
        if counter is None:
            counter = self._by_encoding[name] = TokenCounter(name)
        return counter
