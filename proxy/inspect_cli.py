"""`memproxy inspect ID`: one request's context drawn with rich, read from the store directly.

No server is needed and litellm is never imported, so the command starts in
well under a second. The facts panel, the token bar per section, the
candidates table (rows folded by `proxy/candidate_rows.py`), the memory
decisions and the forwarded messages; the text of each part comes from
`proxy/record_text.py`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group, JustifyMethod
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from proxy.candidate_rows import grouped_candidates
from proxy.record_text import (
    abbreviate,
    answer_text,
    cache_notes,
    cache_text,
    content_text,
    decision_lines,
    messages_of,
    percent,
    prefix_text,
    when,
)
from proxy.settings import Settings
from proxy.store.repo import Store

BAR_WIDTH = 60
SECTION_COLOURS = {
    "system": "bright_blue",
    "anchors": "magenta",
    "working_memory": "bright_magenta",
    "summary": "cyan",
    "recalled": "bright_cyan",
    "recent": "green",
    "in_place": "bright_green",  # earlier late sections, forwarded again where they went
    "memory_delta": "bright_magenta",
    "replay": "yellow",
    "tail": "bright_red",
}
DECISION_STYLES = {
    "kept": "green",
    "mandatory": "bold green",
    "replayed": "yellow",
    "recalled": "cyan",
    "compressed": "blue",
    "dropped": "dim red",
}


def token_bar(sections: Sequence[dict[str, Any]], width: int = BAR_WIDTH) -> Text:
    """One coloured segment per non-empty section, proportional to its tokens."""
    shown = [s for s in sections if s["tokens"] > 0]
    total = sum(s["tokens"] for s in shown)
    bar = Text()
    if not total:
        return bar
    # Every non-empty section gets at least one cell so it stays visible.
    cells = [max(1, round(width * s["tokens"] / total)) for s in shown]
    while sum(cells) > width and max(cells) > 1:
        cells[cells.index(max(cells))] -= 1
    for section, n in zip(shown, cells, strict=True):
        bar.append("█" * n, style=SECTION_COLOURS.get(section["name"], "white"))
    return bar


def legend(sections: Sequence[dict[str, Any]]) -> Text:
    text = Text()
    for s in sections:
        if s["tokens"] <= 0:
            continue
        text.append("■ ", style=SECTION_COLOURS.get(s["name"], "white"))
        text.append(f"{s['name']} {s['tokens']} ({s['count']})   ")
    return text


def candidates_table(candidates: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="Candidates", title_justify="left", expand=False)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("kind", "left"),
        ("ref", "left"),
        ("tokens", "right"),
        ("score", "right"),
        ("decision", "left"),
        ("reason", "left"),
    )
    for name, justify in columns:
        table.add_column(name, justify=justify)
    for c in grouped_candidates(candidates):
        style = DECISION_STYLES.get(c["decision"], "")
        table.add_row(
            c["kind"],
            str(c["ref"]),
            str(c["tokens"]),
            f"{c['score']:.2f}" if c["score"] else "",
            Text(c["decision"], style=style),
            Text(c["reason"]),
        )
    return table


def messages_table(messages: Sequence[dict[str, Any]]) -> Table:
    table = Table(
        title=f"Forwarded messages ({len(messages)})", title_justify="left", show_lines=True
    )
    table.add_column("#", justify="right")
    table.add_column("role")
    table.add_column("content", overflow="fold")
    for i, message in enumerate(messages):
        role = str(message.get("role"))
        style = "bold" if role == "user" else "dim" if role in ("system", "developer") else ""
        table.add_row(str(i), Text(role, style=style), Text(abbreviate(content_text(message), 600)))
    return table


def request_view(row: dict[str, Any], record: dict[str, Any]) -> Group:
    """Everything `memproxy inspect` prints, as one rich renderable."""
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="bold")
    facts.add_column()
    raw, sent = row["raw_tokens"], row["context_tokens"]
    latency = (row["proxy_ms"] or 0) + (row["upstream_ms"] or 0)
    for name, value in (
        ("request", row["id"]),
        ("time", when(row["created_at"])),
        ("session", f"{row['session_id'] or '-'}  ({record.get('session_kind') or '-'})"),
        ("mode · policy", f"{row['mode']} · {row['policy']}"),
        ("model · status", f"{row['model']} · {row['status']}"),
        ("tokens", f"raw {raw} → forwarded {sent} ({percent(sent, raw)} of raw)"),
        ("budget", str(row["budget"]) if row["budget"] is not None else "-"),
        ("prefix share", prefix_text(row.get("prefix_share"))),
        ("prompt cache", cache_text(record.get("cache")) or "- (no usage reported)"),
        *cache_notes(record.get("cache")),
        ("latency", f"{latency:.0f} ms (proxy {row['proxy_ms'] or 0:.1f} ms)"),
    ):
        facts.add_row(name, Text(value))
    parts: list[Any] = [Panel(facts, title="memproxy inspect", title_align="left")]
    context = record.get("managed") or record.get("shadow")
    if context:
        label = "Sections" if record.get("managed") else "Sections (shadow: computed, not sent)"
        flags = [f for f in ("over_budget", "passthrough") if context.get(f)]
        title = f"{label}: {context['tokens']} / {context['budget']} tokens"
        if flags:
            title += "  [" + ", ".join(flags) + "]"
        parts += [
            Text(title, style="bold"),
            token_bar(context["sections"]),
            legend(context["sections"]),
            Text(""),
            candidates_table(context["candidates"]),
        ]
    else:
        parts.append(Text("No managed context: the client's messages were forwarded as sent."))
    decided = decision_lines(record)
    if decided:
        parts += [Text(""), Text("Memory decisions", style="bold"), Text("\n".join(decided))]
    messages = messages_of(record)
    if messages is None:
        parts.append(Text("Forwarded messages not stored (log.store_content is false)."))
    else:
        parts.append(Text(""))
        parts.append(messages_table(messages))
    # Message text is shown as plain Text: "[constraint]" must not be read as markup.
    answer = answer_text(record)
    if answer is not None:
        parts.append(Panel(Text(abbreviate(answer, 600)), title="answer", title_align="left"))
    elif record.get("error"):
        error = Text(str(record["error"]))
        parts.append(Panel(error, title="error", title_align="left", style="red"))
    return Group(*parts)


async def show_request(settings: Settings, request_id: str) -> int:
    store = await Store.open(settings.memory.database_url)
    try:
        row = await store.get_request(request_id)
    finally:
        await store.close()
    if row is None:
        print(f"memproxy: no request record {request_id!r}", file=sys.stderr)
        return 1
    Console().print(request_view(row, json.loads(row["record_json"])))
    return 0
