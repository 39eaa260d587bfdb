"""OpenAI Responses (`POST /v1/responses`) at the edge: in and out of chat form.

The request's items become the internal chat-completions request
(`proxy.responses_request`), which runs through the same pipeline as chat; the
upstream is called on chat completions and the Responses output is built from
its answer (`proxy.responses_answer`, streamed: `proxy.responses_stream`). What
it produced is kept for `previous_response_id` (`proxy.responses_store`).

Why not litellm's `aresponses`: memory works on chat messages, so the request
must be in chat form anyway to be assembled, and litellm's bridge for providers
without a Responses API is itself a chat call; going through chat for every
model gives one path, one budget and one record. The cost: provider-side
Responses features (built-in tools, server-held state) are not used; a
non-function tool is refused with a 400 that says so.

Reasoning items are kept verbatim in the stored conversation (and so come back
unchanged through `previous_response_id` and `GET`), but are not forwarded:
chat completions has no field for them and their encrypted content is only
readable by the provider's Responses API.
"""

from __future__ import annotations

from typing import Any

from fastapi.responses import Response

from proxy.errors import ProxyError
from proxy.ids import new_id
from proxy.responses_answer import FINISH_STATUS, Item, ResponseRequest, answer_items
from proxy.responses_store import ResponseStore, StoredResponse
from proxy.responses_stream import ResponsesStream
from proxy.wire import StreamEncoder


class ResponsesWire:
    """The `WireFormat` of `/v1/responses`; keeps what it produced in the `ResponseStore`."""

    name = "responses"

    def __init__(
        self, request: ResponseRequest, store: ResponseStore, tenant_id: str, items: list[Item]
    ) -> None:
        self.request = request
        self.store = store
        self.tenant_id = tenant_id
        self.items = items  # this request's input items

    def keep(self, response: dict[str, Any]) -> None:
        if self.request.body.get("store", True) is False:
            return
        conversation = [*self.request.history, *self.items, *response["output"]]
        self.store.put(StoredResponse(self.tenant_id, response, conversation))

    def render(self, body: dict[str, Any]) -> dict[str, Any]:
        choice = (body.get("choices") or [{}])[0]
        message = choice.get("message") or {}
        output = answer_items(message, self.request.response_id)
        status = FINISH_STATUS.get(choice.get("finish_reason") or "stop", "completed")
        response = self.request.response(output, status, body.get("usage"))
        self.keep(response)
        return response

    def error(self, error: ProxyError, headers: dict[str, str]) -> Response:
        return error.response(headers)

    def stream(self) -> StreamEncoder:
        return ResponsesStream(self)


def new_response_id() -> str:
    return f"resp_{new_id().lower()}"
