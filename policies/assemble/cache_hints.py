"""Prompt-cache hints a provider understands, added to the forwarded prompt.

Anthropic-family models cache only up to explicit `cache_control` breakpoints
(at most 4 per request): one goes on the system prompt, one on the last
message of the stable prefix (the lead's layout says where it ends:
`stable_upto`; without it, the last message before the current input), and,
if asked, one at the end of the prompt so the next request reads all of it.
A client's own breakpoints count against the 4 and are never touched.
OpenAI-family models route requests with the same `prompt_cache_key` to the
same cache: the session's id, unless the client sent one of its own.

Pure functions: they return new message dicts where they add a hint and leave
the caller's lists and dicts unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

EPHEMERAL: dict[str, str] = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """The prompt with our breakpoints added, and where they went."""

    messages: list[dict[str, Any]]
    added: list[int] = field(default_factory=list)  # message indices we marked
    client: int = 0  # breakpoints the client had set itself (messages and tools)

    def record(self) -> dict[str, Any]:
        return {"cache_control": self.added, "client_breakpoints": self.client}


def _has_breakpoint(message: Mapping[str, Any]) -> bool:
    if message.get("cache_control") is not None:
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("cache_control") is not None for p in content
    )


def count_breakpoints(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None = None
) -> int:
    """`cache_control` markers already in a request: on messages, content parts, tools."""
    n = 0
    for message in messages:
        if message.get("cache_control") is not None:
            n += 1
        content = message.get("content")
        if isinstance(content, list):
            n += sum(
                1 for p in content if isinstance(p, dict) and p.get("cache_control") is not None
            )
    for tool in tools or ():
        if isinstance(tool, dict) and (
            tool.get("cache_control") is not None
            or (tool.get("function") or {}).get("cache_control") is not None
        ):
            n += 1
    return n


def current_input_start(messages: Sequence[Mapping[str, Any]]) -> int:
    """Index of the current input: the trailing run of user / tool messages."""
    i = len(messages)
    while i > 0 and messages[i - 1].get("role") in ("user", "tool"):
        i -= 1
    return i


def _marked(message: Mapping[str, Any]) -> dict[str, Any]:
    """`message` with a breakpoint: on the message itself for text content (litellm
    carries it to the block), on the last part of a list content."""
    content = message.get("content")
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": EPHEMERAL}]}
    return {**message, "cache_control": dict(EPHEMERAL)}


def add_breakpoints(
    messages: Sequence[dict[str, Any]],
    *,
    stable_upto: int | None = None,
    end: bool = False,
    tools: Sequence[Any] | None = None,
    limit: int = MAX_BREAKPOINTS,
) -> Breakpoints:
    """Breakpoints on the stable prefix of `messages`, within `limit` in total.

    Candidates, in order: the last leading system message, the last stable
    message (`stable_upto`, else the one before the current input) and, with
    `end`, the last message. A message that already carries a breakpoint is
    left as it is.
    """
    out = list(messages)
    client = count_breakpoints(messages, tools)
    room = max(0, limit - client)
    candidates: list[int] = []
    system = 0
    while system < len(out) and out[system].get("role") in ("system", "developer"):
        system += 1
    if system:
        candidates.append(system - 1)
    stable = stable_upto if stable_upto is not None else current_input_start(out) - 1
    if 0 <= stable < len(out):
        candidates.append(stable)
    if end and out:
        candidates.append(len(out) - 1)
    added: list[int] = []
    for index in dict.fromkeys(candidates):  # in order, once each
        if room <= 0:
            break
        if _has_breakpoint(out[index]):
            continue
        out[index] = _marked(out[index])
        added.append(index)
        room -= 1
    return Breakpoints(out, added, client)


def client_cache_key(params: Mapping[str, Any]) -> bool:
    """Whether the client sent a `prompt_cache_key` (top level or in `extra_body`)."""
    extra = params.get("extra_body")
    return params.get("prompt_cache_key") is not None or (
        isinstance(extra, Mapping) and extra.get("prompt_cache_key") is not None
    )


def session_cache_key(params: Mapping[str, Any], session_id: str | None) -> str | None:
    """The `prompt_cache_key` to add for a session: None when the client set its own."""
    if session_id is None or client_cache_key(params):
        return None
    return f"memproxy-{session_id}"
