"""The routes memproxy serves, in one place: the unknown-route 404 names them.

A test checks this list against the app's real routes, so a route added to the
app without a line here (or the other way round) fails the build.
"""

from __future__ import annotations

from fastapi import Request
from fastapi.responses import JSONResponse

from proxy.errors import error_response

# The OpenAI-compatible API, "METHOD path". Each `/v1/...` route is also served
# without the `/v1` prefix (clients whose base_url lacks it).
SERVED_ROUTES: tuple[str, ...] = (
    "POST /v1/chat/completions",
    "POST /v1/responses",
    "GET /v1/responses/{response_id}",
    "GET /v1/responses/{response_id}/input_items",
    "DELETE /v1/responses/{response_id}",
    "POST /v1/messages",
    "POST /v1/messages/count_tokens",
    "GET /v1/models",
    "GET /v1/models/{model}",
    "POST /v1/embeddings",
    "POST /v1/completions",
    "POST /v1/moderations",
    "POST /v1/images/generations",
    "POST /v1/images/edits",
    "POST /v1/images/variations",
    "POST /v1/audio/transcriptions",
    "POST /v1/audio/translations",
    "POST /v1/audio/speech",
    "POST /v1/files",
    "GET /v1/files",
    "GET /v1/files/{file_id}",
    "DELETE /v1/files/{file_id}",
    "GET /v1/files/{file_id}/content",
    "POST /v1/batches",
    "GET /v1/batches",
    "GET /v1/batches/{batch_id}",
    "POST /v1/batches/{batch_id}/cancel",
)
# Served too, outside the OpenAI API.
OTHER_ROUTES = "/health, /health/live, /metrics, the admin API under /memory/ and the inspector /ui"


def unknown_route(request: Request) -> JSONResponse:
    """404 in OpenAI's shape for a path no route matches, naming what is served."""
    return error_response(
        404,
        f"Unknown route: {request.method} {request.url.path}. memproxy serves "
        f"{', '.join(SERVED_ROUTES)}; and {OTHER_ROUTES}.",
        code="unknown_route",
    )
