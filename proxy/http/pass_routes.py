"""The OpenAI routes memproxy passes through, as data: one `PassRoute` row per route.

Each row names its litellm call, how its body arrives (JSON, multipart form,
or none), how it is routed (by `model`, or by provider for files and batches:
`proxy/http/pass_request.py`), what its answer is, and the fields it requires.
`proxy/http/passthrough.py` mounts one endpoint per row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Body = Literal["json", "form", "none"]
Answer = Literal["json", "bytes", "transcript"]


@dataclass(frozen=True, slots=True)
class PassRoute:
    """One pass-through route: `call` is litellm's function for it."""

    method: str
    path: str
    call: str
    body: Body = "json"
    by_model: bool = True  # False: files and batches (the provider rule above)
    # Fields litellm must see as arguments; the client's others ride in
    # `extra_body` on an OpenAI-wire provider. None: every field is an argument.
    core: frozenset[str] | None = None
    answer: Answer = "json"
    streams: bool = False  # `stream: true` is honoured (completions)
    required: tuple[str, ...] = ()  # missing: a 400 here, not a failure inside litellm

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


def _core(*names: str) -> frozenset[str]:
    return frozenset(names)


PASS_ROUTES: tuple[PassRoute, ...] = (
    PassRoute(
        "POST",
        "/v1/embeddings",
        "aembedding",
        core=_core("input", "encoding_format"),
        required=("model", "input"),
    ),
    PassRoute(
        "POST",
        "/v1/completions",
        "atext_completion",
        core=_core("prompt", "stream", "stream_options"),
        required=("model", "prompt"),
        streams=True,
    ),
    PassRoute(
        "POST", "/v1/moderations", "amoderation", core=_core("input"), required=("model", "input")
    ),
    PassRoute(
        "POST",
        "/v1/images/generations",
        "aimage_generation",
        core=_core("prompt"),
        required=("model", "prompt"),
    ),
    PassRoute("POST", "/v1/images/edits", "aimage_edit", "form", required=("model", "image")),
    PassRoute(
        "POST", "/v1/images/variations", "aimage_variation", "form", required=("model", "image")
    ),
    PassRoute(
        "POST",
        "/v1/audio/transcriptions",
        "atranscription",
        "form",
        answer="transcript",
        required=("model", "file"),
    ),
    # litellm has no translation call (yet): this route answers 501 until it has.
    PassRoute(
        "POST",
        "/v1/audio/translations",
        "atranslation",
        "form",
        answer="transcript",
        required=("model", "file"),
    ),
    PassRoute(
        "POST", "/v1/audio/speech", "aspeech", answer="bytes", required=("model", "input", "voice")
    ),
    PassRoute("POST", "/v1/files", "acreate_file", "form", False, required=("file", "purpose")),
    PassRoute("GET", "/v1/files", "afile_list", "none", False),
    PassRoute("GET", "/v1/files/{file_id}", "afile_retrieve", "none", False),
    PassRoute("DELETE", "/v1/files/{file_id}", "afile_delete", "none", False),
    PassRoute("GET", "/v1/files/{file_id}/content", "afile_content", "none", False, answer="bytes"),
    PassRoute(
        "POST",
        "/v1/batches",
        "acreate_batch",
        "json",
        False,
        required=("input_file_id", "endpoint", "completion_window"),
    ),
    PassRoute("GET", "/v1/batches", "alist_batches", "none", False),
    PassRoute("GET", "/v1/batches/{batch_id}", "aretrieve_batch", "none", False),
    PassRoute("POST", "/v1/batches/{batch_id}/cancel", "acancel_batch", "none", False),
)
