"""`memproxy logs`, `memproxy inspect ID`, `memproxy ab-report`: read the store directly.

No server is needed and litellm is never imported, so these commands start in
well under a second. `logs` prints Markdown (like simonw's `llm logs`) or JSON;
`inspect` draws one request's context with rich; `ab-report` prints the
per-mode totals that `GET /memory/ab` returns.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from rich.console import Console, Group, JustifyMethod
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from policies.extract.linking import decision_line
from proxy.config import Settings
from proxy.store.repo import Store

ABBREVIATE_CHARS = 300
ALL_RECORDS = 1_000_000  # `-n 0` means everything, as in `llm logs`
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


# --- logs ------------------------------------------------------------------------------


def passthrough_markdown(row: dict[str, Any], record: dict[str, Any]) -> str:
    """A pass-through call (embeddings, files...): no context, no content kept."""
    usage = record.get("usage") or {}
    cost = record.get("cost")
    lines = [
        f"# {when(row['created_at'])}    {row['id']}",
        "",
        f"- {record.get('route') or row.get('route')} · model: `{row['model']}`"
        f" · status: {row['status']}",
        f"- usage: {usage.get('total_tokens', '–')} tokens"
        + (f" · cost ${cost:.6f}" if isinstance(cost, int | float) else ""),
        "",
    ]
    if record.get("error"):
        lines += ["## Error", "", str(record["error"]), ""]
    return "\n".join(lines)


def record_markdown(row: dict[str, Any], record: dict[str, Any]) -> str:
    if row.get("mode") == "passthrough":
        return passthrough_markdown(row, record)
    raw, sent = row["raw_tokens"], row["context_tokens"]
    lines = [
        f"# {when(row['created_at'])}    {row['id']}",
        "",
        f"- session: `{row['session_id'] or '-'}`",
        f"- mode: {row['mode']} · policy: {row['policy']} · model: `{row['model']}`"
        f" · status: {row['status']}",
        f"- tokens: {raw} raw → {sent} forwarded ({percent(sent, raw)})"
        + (f" · budget {row['budget']}" if row["budget"] is not None else ""),
        "",
    ]
    messages = messages_of(record)
    if messages is None:
        lines += ["## Forwarded", "", "_(content not stored: log.store_content is false)_", ""]
    else:
        lines += [f"## Forwarded ({len(messages)} messages)", ""]
        for message in messages:
            text = abbreviate(content_text(message)).replace("\n", " ")
            lines.append(f"- **{message.get('role')}**: {text}")
        lines.append("")
    decided = decision_lines(record)
    if decided:
        lines += ["## Memory decisions", "", *(f"- {line}" for line in decided), ""]
    answer = answer_text(record)
    if answer is not None:
        lines += ["## Answer", "", answer.strip(), ""]
    elif record.get("error"):
        lines += ["## Error", "", str(record["error"]), ""]
    return "\n".join(lines)


async def show_logs(settings: Settings, args: argparse.Namespace) -> int:
    limit = args.n if args.n and args.n > 0 else ALL_RECORDS
    store = await Store.open(settings.memory.database_url)
    try:
        session = args.session
        if session is not None and await store.get_session(session) is None:
            # The name a client gave (X-Memory-Session): every session of that name.
            named = [s.id for s in await store.sessions_named(session)]
            rows = []
            for session_id in named or [session]:
                rows += await store.list_requests(
                    session_id=session_id, limit=limit, contains=args.q
                )
            rows = sorted(rows, key=lambda r: str(r["id"]), reverse=True)[:limit]
        else:
            rows = await store.list_requests(session_id=session, limit=limit, contains=args.q)
    finally:
        await store.close()
    rows.reverse()  # oldest first, like a transcript
    out = sys.stdout
    if args.json:
        records = [{**_columns(r), "record": json.loads(r["record_json"])} for r in rows]
        out.write(json.dumps(records, ensure_ascii=False, indent=2) + "\n")
        return 0
    out.write("\n".join(record_markdown(r, json.loads(r["record_json"])) for r in rows))
    return 0


def _columns(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "record_json"}


# --- inspect ---------------------------------------------------------------------------


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


def _turn_ordinal(candidate: dict[str, Any]) -> int | None:
    try:
        return int(candidate["ref"]) if candidate["kind"] == "turn" else None
    except (TypeError, ValueError):
        return None


def _turn_range(candidate: dict[str, Any]) -> dict[str, Any]:
    """A candidate the assembler already folded (kind "turns", ref "a-b"), labelled."""
    first, _, last = str(candidate["ref"]).partition("-")
    if not (first.isdigit() and last.isdigit()):
        return candidate
    return {**candidate, "ref": f"{first}–{last} ({int(last) - int(first) + 1} turns)"}


def grouped_candidates(candidates: Sequence[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Candidates, each run of consecutive turns with one decision and reason folded into
    one row: a long conversation's dropped (or kept) history reads as a single line."""
    run: list[dict[str, Any]] = []

    def fold() -> Iterator[dict[str, Any]]:
        if len(run) == 1:
            yield run[0]
        elif run:
            first, last = _turn_ordinal(run[0]), _turn_ordinal(run[-1])
            yield {
                **run[0],
                "kind": "turns",
                "ref": f"{first}–{last} ({len(run)} turns)",
                "tokens": sum(c["tokens"] for c in run),
            }
        run.clear()

    for cand in candidates:
        ordinal = _turn_ordinal(cand)
        extends = (
            run
            and ordinal is not None
            and cand["decision"] == run[-1]["decision"]
            and cand["reason"] == run[-1]["reason"]
            and ordinal == (_turn_ordinal(run[-1]) or 0) + 1
        )
        if extends:
            run.append(cand)
            continue
        yield from fold()
        if ordinal is not None and cand["decision"] != "mandatory":
            run.append(cand)
        elif cand["kind"] == "turns":
            yield _turn_range(cand)
        else:
            yield cand
    yield from fold()


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


def decision_lines(record: dict[str, Any]) -> list[str]:
    """ "#4 m2 → m7 revised by value_only: same kind of value, 120 → 150": each memory
    decision the request's messages caused, with the linker that made it."""
    lines = []
    for operation in record.get("operations") or []:
        for d in operation.get("decisions") or []:
            ids = f"{d['old']} → {d['new']}" if d.get("new") else d.get("old", "")
            lines.append(f"#{operation['ordinal']} {ids} {decision_line(d)}")
    return lines


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


# --- A/B -------------------------------------------------------------------------------


def ab_table(arms: Sequence[dict[str, Any]]) -> Table:
    table = Table(title="A/B by mode", title_justify="left")
    columns = (
        "mode",
        "requests",
        "sessions",
        "raw tokens",
        "forwarded",
        "ratio",
        "cost $",
        "p50 ms",
        "p95 ms",
        "errors",
    )
    for name in columns:
        table.add_column(name, justify="left" if name == "mode" else "right")
    for a in arms:
        table.add_row(
            a["mode"],
            str(a["requests"]),
            str(a["sessions"]),
            str(a["raw_tokens"]),
            str(a["forwarded_tokens"]),
            f"{a['forwarded_ratio']:.2f}" if a["forwarded_ratio"] is not None else "–",
            f"{a['cost']:.4f}" if a["cost"] is not None else "–",
            f"{a['latency_p50_ms']:.0f}" if a["latency_p50_ms"] is not None else "–",
            f"{a['latency_p95_ms']:.0f}" if a["latency_p95_ms"] is not None else "–",
            str(a["errors"]),
        )
    return table


def cache_table(arms: Sequence[dict[str, Any]]) -> Table:
    """The provider's prompt cache per arm: input tokens, the cached part, input cost."""
    table = Table(title="Prompt cache by mode", title_justify="left")
    for name in ("mode", "input tokens", "cached", "written", "input cost $"):
        table.add_column(name, justify="left" if name == "mode" else "right")
    for a in arms:
        cached, prompt = a.get("cached_tokens", 0), a.get("input_tokens", 0)
        table.add_row(
            a["mode"],
            str(prompt),
            f"{cached} ({percent(cached, prompt)})",
            str(a.get("cache_write_tokens", 0)),
            f"{a['input_cost']:.6f}" if a.get("input_cost") is not None else "–",
        )
    return table


async def show_ab(settings: Settings, args: argparse.Namespace) -> int:
    store = await Store.open(settings.memory.database_url)
    try:
        arms = await store.ab_stats()
    finally:
        await store.close()
    if getattr(args, "json", False):
        print(json.dumps(arms, indent=2))
    elif not arms:
        print("no request records yet")
    else:
        Console().print(ab_table(arms))
        Console().print(cache_table(arms))
    return 0
