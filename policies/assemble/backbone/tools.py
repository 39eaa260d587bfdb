"""Tool rounds in the frozen part: each call clipped, each result cut to its key
fields, an older result about the same object replaced by the newer one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from policies.assemble.backbone.knowledge import repeats_changed
from policies.assemble.backbone.params import BackboneParams
from policies.assemble.digest import call_keys, clip_call, digest_assistant, digest_tool
from policies.memory.staleness import StaleFilter
from policies.types import Turn


def tool_group(
    group: list[Turn],
    level: int,
    replaced_ids: frozenset[str],
    stale: StaleFilter | None,
    p: BackboneParams,
) -> list[dict[str, Any]]:
    """The messages of one tool round (an assistant call and its results) at `level`."""
    head = group[0]
    results = group[1:]
    replaced = [t for t in results if (t.tool_call_id or "") in replaced_ids]
    if level < 2 and len(replaced) == len(results):
        return []  # every result has a newer one: the pair goes whole
    # A shortened call is the proxy's text: one whose arguments still name
    # a value the user changed since would read as current, so such a call
    # stays as the client sent it (the record of what was done).
    calls = head.raw.get("tool_calls") or []
    verbatim = (
        stale is not None
        and bool(stale)
        and any(repeats_changed(stale, call_text(c)) for c in calls)
    )
    call = dict(head.raw)
    if calls and not verbatim:
        call["tool_calls"] = [clip_call(c) for c in calls]
    content = call.get("content")
    if not verbatim and isinstance(content, str) and len(content) > p.assistant_max_chars:
        call["content"] = (
            digest_assistant(content, "", p.assistant_sentences, p.assistant_max_chars) or None
        )
    out: list[dict[str, Any]] = [call]
    for t in results:
        if t in replaced:
            text = "(replaced by a later result)"
        else:
            text = digest_tool(t.text)
            if stale and repeats_changed(stale, text):
                text = "(superseded by a later result)"
        msg: dict[str, Any] = {"role": "tool", "tool_call_id": t.tool_call_id, "content": text}
        if "name" in t.raw:
            msg["name"] = t.raw["name"]
        out.append(msg)
    return out


def call_text(call: Any) -> str:
    fn = call.get("function") if isinstance(call, dict) else None
    return str(fn.get("arguments", "")) if isinstance(fn, dict) else ""


def replaced_calls(turns: Sequence[Turn]) -> frozenset[str]:
    """Ids of tool calls asked again later about the same object: only the
    newest result of each stands."""
    last: dict[str, str] = {}
    ids: list[tuple[str, str]] = []
    for t in turns:
        if t.role == "assistant" and t.tool_call_ids:
            for call_id, key in call_keys(t.raw).items():
                last[key] = call_id
                ids.append((call_id, key))
    return frozenset(call_id for call_id, key in ids if last[key] != call_id)
