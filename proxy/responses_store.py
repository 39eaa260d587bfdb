"""Where `/v1/responses` keeps its answers: a response is the conversation so far for the
next request that names it."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from proxy.errors import ProxyError
from proxy.responses_answer import Item


@dataclass(slots=True)
class StoredResponse:
    tenant_id: str
    response: dict[str, Any]
    conversation: list[Item]  # every item up to and including this response's output


class ResponseStore:
    """The responses this process produced, for `previous_response_id` and `GET`.

    Bounded (oldest first out) and per process: a response is found by the
    replica that produced it. `store: false` responses are never kept.
    """

    def __init__(self, capacity: int = 10_000) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, StoredResponse] = OrderedDict()

    def put(self, stored: StoredResponse) -> None:
        self._items[stored.response["id"]] = stored
        self._items.move_to_end(stored.response["id"])
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)

    def get(self, tenant_id: str, response_id: str) -> StoredResponse:
        stored = self._items.get(response_id)
        if stored is None or stored.tenant_id != tenant_id:
            raise ProxyError(
                404,
                f"Response with id '{response_id}' not found.",
                param="response_id" if stored is None else None,
                code="response_not_found",
            )
        return stored

    def delete(self, tenant_id: str, response_id: str) -> None:
        self.get(tenant_id, response_id)
        del self._items[response_id]
