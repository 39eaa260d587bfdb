"""What the stub upstream answers: replies queued for a prompt
(`StubUpstream.queue_replies`), then the responder, then the script keyed by the
last user/tool message, else an echo (a tool call when tools are offered).
"""

from __future__ import annotations

import json
from typing import Any

from proxy.stub.state import Reply, StubState


def last_prompt_text(body: dict[str, Any]) -> str:
    for msg in reversed(body.get("messages") or []):
        if isinstance(msg, dict) and msg.get("role") in ("user", "tool"):
            content = msg.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def _default_reply(body: dict[str, Any]) -> Reply:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    if body.get("tools") and isinstance(last, dict) and last.get("role") == "user":
        tool = body["tools"][0]["function"]["name"]
        return {
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{len(messages)}",
                    "type": "function",
                    "function": {"name": tool, "arguments": json.dumps({"q": "stub"})},
                }
            ],
        }
    return {"content": f"echo: {last_prompt_text(body)}"}


def _queued_reply(state: StubState, body: dict[str, Any]) -> Reply | None:
    prompt = last_prompt_text(body)
    with state.lock:
        for text, replies in state.queued:
            if replies and text in prompt:
                return replies.popleft()
    return None


def reply_for(state: StubState, body: dict[str, Any]) -> Reply:
    """The reply to a chat request (queued, responder, script, echo: in that order)."""
    queued = _queued_reply(state, body)
    if queued is not None:
        return queued
    if state.responder is not None:
        reply = state.responder(body)
        if reply is not None:
            return reply
    scripted = state.script.get(last_prompt_text(body))
    return scripted if scripted is not None else _default_reply(body)
