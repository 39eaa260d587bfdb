"""What the store-fault tests share: how a fail-closed refusal must look."""

from __future__ import annotations

from typing import Any

# Never in a refusal: SQL, the database URL, the provider key of the test config.
LEAKS = ("INSERT", "SELECT", "postgresql+asyncpg", "sk-provider-secret")


def answer_of(resp: Any) -> dict[str, Any]:
    """The assistant turn a client appends to its history from `resp`."""
    return {"role": "assistant", "content": resp.json()["choices"][0]["message"]["content"]}


def assert_store_unavailable(resp: Any, reasons: tuple[str, ...] = ()) -> None:
    """A fail-closed 503 in OpenAI's error shape, naming one of `reasons` when given."""
    assert resp.status_code == 503, resp.text
    error = resp.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert (error["type"], error["code"]) == ("service_unavailable", "store_unavailable")
    assert "memory store is unavailable" in error["message"]
    assert "memory.on_store_error: closed" in error["message"]
    if reasons:
        assert any(reason in error["message"] for reason in reasons), error["message"]
    for leak in LEAKS:
        assert leak not in resp.text
    assert resp.headers["retry-after"] == "1"
    assert "X-Memory-Degraded" not in resp.headers
