"""A stored request record as readable text: shared by `memproxy logs`, `inspect`, the A/B judge.

Plain functions over the record's JSON (no rich, no store): the message text,
the answer, the prompt-cache facts and the memory decisions, each as a short
string. The renderers in `proxy/logs_cli.py` and `proxy/inspect_cli.py` lay
them out; this module only says what each part reads as.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from policies.extract.linking import decision_line

ABBREVIATE_CHARS = 300


def when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def abbreviate(text: str, limit: int = ABBREVIATE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def content_text(message: dict[str, Any]) -> str:
    """A chat message's readable text: string content, text parts, tool calls."""
    content = message.get("content")
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = [
            str(p.get("text", "")) if isinstance(p, dict) and "text" in p else f"[{p.get('type')}]"
            for p in content
            if isinstance(p, dict)
        ]
    else:
        parts = []
    for call in message.get("tool_calls") or ():
        fn = call.get("function") or {}
        parts.append(f"→ {fn.get('name')}({fn.get('arguments')})")
    return "\n".join(p for p in parts if p)


def answer_text(record: dict[str, Any]) -> str | None:
    response = record.get("response")
    if not isinstance(response, dict):
        return None
    choices = response.get("choices") or []
    if choices and isinstance(choices[0], dict) and isinstance(choices[0].get("message"), dict):
        return content_text(choices[0]["message"])
    return None


def messages_of(record: dict[str, Any]) -> list[dict[str, Any]] | None:
    forwarded = record.get("forwarded")
    return forwarded if isinstance(forwarded, list) else None  # None: content not stored


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "–"


def prefix_text(share: float | None) -> str:
    """The recorded prefix share: what of this prompt repeats the previous one's start."""
    if share is None:
        return "- (first request of the session)"
    return f"{100 * share:.0f}% of the tokens repeat the previous request's prompt"


def cache_text(cache: dict[str, Any] | None) -> str | None:
    """The provider's prompt cache for this request: tokens read / written, money."""
    if not cache or cache.get("prompt_tokens") is None:
        return None
    prompt, cached = cache["prompt_tokens"], cache.get("cached_tokens") or 0
    text = f"{cached} of {prompt} input tokens cached ({percent(cached, prompt)})"
    if cache.get("written_tokens"):
        text += f", {cache['written_tokens']} written"
    if cache.get("input_cost") is not None:
        text += (
            f" · input ${cache['input_cost']:.6f} (uncached ${cache['input_cost_uncached']:.6f})"
        )
    return text + f" · rule {cache.get('rule')}"


def cache_notes(cache: dict[str, Any] | None) -> list[tuple[str, str]]:
    """Cache hints added and the raw-when-cheaper decision, as fact rows."""
    rows: list[tuple[str, str]] = []
    hints = (cache or {}).get("hints") or {}
    if hints.get("cache_control") is not None:
        marks = ", ".join(f"#{i}" for i in hints["cache_control"]) or "none"
        rows.append(("cache hints", f"cache_control on {marks} (client's own: "
                     f"{hints.get('client_breakpoints', 0)})"))  # fmt: skip
    elif hints.get("prompt_cache_key"):
        rows.append(("cache hints", f"prompt_cache_key from the {hints['prompt_cache_key']}"))
    decision = (cache or {}).get("decision")
    if decision:
        rows.append((
            "decision",
            f"{decision['decision']}: estimated raw {decision['estimate_raw']:.0f} vs managed "
            f"{decision['estimate_managed']:.0f} (input-token units, rule {decision['rule']})",
        ))  # fmt: skip
    return rows


def decision_lines(record: dict[str, Any]) -> list[str]:
    """ "#4 m2 → m7 revised by value_only: same kind of value, 120 → 150": each memory
    decision the request's messages caused, with the linker that made it."""
    lines = []
    for operation in record.get("operations") or []:
        for d in operation.get("decisions") or []:
            ids = f"{d['old']} → {d['new']}" if d.get("new") else d.get("old", "")
            lines.append(f"#{operation['ordinal']} {ids} {decision_line(d)}")
    return lines
