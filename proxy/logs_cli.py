"""`memproxy logs`: the store's request records as Markdown (like simonw's `llm logs`) or JSON.

No server is needed and litellm is never imported, so the command starts in
well under a second.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from proxy.record_text import (
    abbreviate,
    answer_text,
    content_text,
    decision_lines,
    messages_of,
    percent,
    when,
)
from proxy.settings import Settings
from proxy.store.repo import Store

ALL_RECORDS = 1_000_000  # `-n 0` means everything, as in `llm logs`


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
