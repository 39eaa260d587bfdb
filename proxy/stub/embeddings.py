"""The stub upstream's `/v1/embeddings`: vectors that carry real similarity
(`embed_text`), for strings or cl100k token arrays.
"""

from __future__ import annotations

import base64
import hashlib
import math
import re
import unicodedata
from array import array
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from proxy.stub.recorder import Recorder
from proxy.stub.usage import stub_token_counter

EMBEDDING_DIMENSIONS = 512
_WORD_RE = re.compile(r"[a-z0-9]+|[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CJK_START = "\u3400"
_STOPWORDS = frozenset(
    "a an the and or of to in on at for with from by as is are was be it this that i me my we "
    "our you your do does please can could would will just am any".split()
)


def _features(text: str) -> dict[str, float]:
    """Features of `text`: the character trigrams of each word (sharing one weight per
    word), so "allergic" and "allergies" are near though no whole word is shared;
    for Chinese, characters and bigrams, no segmentation needed. Word identity on
    top would only add weight to exact repeats, which lexical retrieval finds anyway."""
    out: dict[str, float] = {}
    for token in _WORD_RE.findall(unicodedata.normalize("NFKC", text).casefold()):
        if token[0] >= _CJK_START:
            grams = [*token, *(token[i : i + 2] for i in range(len(token) - 1))]
            for gram in grams:
                out[f"z:{gram}"] = out.get(f"z:{gram}", 0.0) + (1.0 if len(gram) == 2 else 0.5)
            continue
        if token in _STOPWORDS:
            continue
        padded = f"<{token}>"
        trigrams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        for gram in trigrams:
            out[f"c:{gram}"] = out.get(f"c:{gram}", 0.0) + 1.0 / math.sqrt(len(trigrams))
    return out


def embed_text(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic L2-normalised vector (signed feature hashing): texts sharing
    words or parts of words are close, unrelated texts are near orthogonal."""
    vector = [0.0] * dimensions
    for feature, weight in _features(text).items():
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "little") % dimensions
        vector[slot] += weight if digest[4] & 1 else -weight
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


def _embedding_inputs(body: dict[str, Any]) -> list[str] | None:
    """The texts to embed: strings, or token arrays (cl100k, as OpenAI takes them, e.g.
    from LangChain's length check), decoded back to text; None: neither."""
    value = body.get("input")
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, int) for v in value):
        value = [value]
    if all(isinstance(v, str) for v in value):
        return list(value)
    if all(isinstance(v, list) and all(isinstance(t, int) for t in v) for v in value):
        return [stub_token_counter().decode(tokens) for tokens in value]
    return None


class EmbeddingRoutes:
    """Embeddings that carry real similarity (`embed_text`)."""

    def __init__(self, recorder: Recorder) -> None:
        self.recorder = recorder

    async def embeddings(self, request: Request) -> Response:
        received = await self.recorder.received(request)
        if isinstance(received, Response):
            return received
        body = received[0]
        texts = _embedding_inputs(body)
        if texts is None:
            err = {"message": "input must be a string or a list of strings",
                   "type": "invalid_request_error", "param": "input", "code": None}  # fmt: skip
            return JSONResponse({"error": err}, status_code=400)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = embed_text(text)
            encoded: Any = (
                base64.b64encode(array("f", vector).tobytes()).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = max(1, sum(stub_token_counter()(text) for text in texts))
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "stub-embedding"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )
