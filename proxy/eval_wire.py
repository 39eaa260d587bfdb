"""`memproxy eval --api`: the same replayed request on each conversational wire API.

A chat-completions body is rewritten as the client of the Responses or the
Anthropic Messages API would send it (full history, no server-side state), so
that the three runs differ only in the wire adapter they go through.
"""

from __future__ import annotations

from typing import Any

from proxy.responses_request import chat_to_items
from proxy.wire_messages import chat_to_anthropic

APIS = ("chat", "responses", "messages")
# Anthropic requires max_tokens; the stub ignores it and the budget is set by header.
_MAX_TOKENS = 1024


def _responses_tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function") or {}
    return {"type": "function", **fn}


def _anthropic_tool(tool: dict[str, Any]) -> dict[str, Any]:
    fn = tool.get("function") or {}
    out = {"name": fn.get("name"), "input_schema": fn.get("parameters") or {"type": "object"}}
    if fn.get("description"):
        out["description"] = fn["description"]
    return out


def wire_request(api: str, body: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(path, body) of the chat body `body` on `api`."""
    if api == "chat":
        return "/v1/chat/completions", body
    tools = body.get("tools") or []
    if api == "responses":
        instructions, items = chat_to_items(body["messages"])
        out: dict[str, Any] = {"model": body["model"], "input": items, "store": False}
        if instructions is not None:
            out["instructions"] = instructions
        if tools:
            out["tools"] = [_responses_tool(t) for t in tools]
        return "/v1/responses", out
    if api == "messages":
        out = {
            "model": body["model"],
            "max_tokens": _MAX_TOKENS,
            **chat_to_anthropic(body["messages"]),
        }
        if tools:
            out["tools"] = [_anthropic_tool(t) for t in tools]
        return "/v1/messages", out
    raise ValueError(f"unknown api {api!r}; expected one of {', '.join(APIS)}")
