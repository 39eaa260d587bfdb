"""Memory from assistant replies and tool results: data, never orders.

What the assistant concluded by itself is `inferred`: kept only when it
confirms something concrete (a booking, an ID, a status), ranked low, and
it never replaces or revokes what the user said. Tool results are compacted
to a short line of key fields, counts and anomalies; the raw result stays in
the store. Instruction-like text inside either ("from now on ignore all
previous rules") is dropped from the compact form, so it cannot reach the
working-memory block as if it were a rule.

The words of an injection, of a report of something done and of a tool
result's telling fields are rules kept as data
(`policies/rules/<lang>/observations.yaml`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from policies.language.cues import DIRECTIVE
from policies.language.questions import is_question
from policies.language.segment import split_sentences
from policies.language.values import extract_values, value_signature
from policies.rulebook import Joined
from policies.types import Add, Extraction, MemoryItem, MemoryOp, Supersede, Turn

MAX_TOOL_ITEMS = 3
MAX_INFERRED_ITEMS = 3
_TOOL_CHARS = 180

_INJECTION = Joined("observations", "injection")
# The assistant reports something done, in the past tense, with a subject:
# "Both are set: …", "I've booked …", "PAY-2291 is now P1". Promises ("I'll
# quote IC fares from now on") and drafts it writes for the user are not.
_DONE = Joined("observations", "done")
_DONE_LINE = Joined("observations", "done_line")
_ANOMALY_KEY = Joined("observations", "anomaly_key")
_KEY_FIELD = Joined("observations", "key_field")


def _instruction_like(text: str) -> bool:
    strong = DIRECTIVE[0][1]  # the strongest standing-rule phrasings ("from now on", "以后")
    return bool(_INJECTION.search(text) or strong.search(text.lower()))


# -- tool results -------------------------------------------------------------


def compact_tool_result(text: str) -> str:
    """A short `key=value` line for a tool result (JSON or text)."""
    try:
        data = json.loads(text)
    except ValueError:
        return _compact_text(text)
    parts = _compact_json(data)
    return _fit(parts)


def _fit(parts: list[str]) -> str:
    out = ""
    for part in parts:
        if len(out) + len(part) + 2 > _TOOL_CHARS:
            break
        out = f"{out}; {part}" if out else part
    return out


def _compact_text(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _instruction_like(ln)]
    if not lines:
        return ""
    flagged = [ln for ln in lines if _ANOMALY_KEY.search(ln)]
    line = (flagged or lines)[0]
    return line if len(line) <= _TOOL_CHARS else line[: _TOOL_CHARS - 1] + "…"


def _scalar(value: Any) -> str | None:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str) and value and not _instruction_like(value):
        return value if len(value) <= 40 else None
    return None


def _list_summary(key: str, items: list[Any]) -> str:
    """`key: N (first few ids / names / values)`: counts plus what identifies them."""
    ids = [str(x.get("id") or x.get("name")) for x in items if isinstance(x, dict)]
    ids = [i for i in ids if i != "None"]
    if not ids:
        ids = [s for s in (_scalar(x) for x in items) if s is not None]
    if not ids and 0 < len(items) <= 3 and isinstance(items[0], list):
        # A small result is the answer itself; a big one is in the store.
        ids = ["[" + ", ".join(s for s in map(_scalar, items[0]) if s) + "]"]
    shown = ids[:3] if ids and sum(len(i) for i in ids[:3]) <= 60 else ids[:1]
    more = f" ({', '.join(shown)}{', …' if len(items) > len(shown) else ''})" if shown else ""
    return f"{key}: {len(items)}{more}"


def _compact_json(data: Any) -> list[str]:
    if isinstance(data, list):
        return [_list_summary("items", data)]
    if not isinstance(data, dict):
        scalar = _scalar(data)
        return [scalar] if scalar else []
    anomalies: list[str] = []
    fields: list[str] = []
    for key, value in data.items():
        if _ANOMALY_KEY.search(key):
            anomalies.extend(_anomaly(key, value))
        elif isinstance(value, list):
            fields.append(_list_summary(key, value))
        elif _KEY_FIELD.search(key):
            scalar = _scalar(value)
            if scalar is not None:
                fields.append(f"{key}={scalar}")
    return anomalies + fields


def _anomaly(key: str, value: Any) -> list[str]:
    if isinstance(value, list):
        first = value[0] if value else None
        detail = ""
        if isinstance(first, dict):
            bits = [_scalar(first.get(k)) for k in ("name", "error")]
            detail = " (" + ": ".join(b for b in bits if b) + ")" if any(bits) else ""
        return [f"{key}: {len(value)}{detail}"] if value else []
    scalar = _scalar(value) if not isinstance(value, str) else value[:80]
    if scalar is None or _instruction_like(scalar):
        return []
    return [f"{key}={scalar}"]


def extract_tool(turn: Turn, live: Sequence[MemoryItem], new_id: Callable[[], str]) -> Extraction:
    summary = compact_tool_result(turn.text)
    if not summary:
        return Extraction("irrelevant", reason="empty tool result")
    ids = [v.text for v in extract_values(summary) if v.kind in ("id", "number")]
    keys = sorted(re.findall(r"(\w+)[=:]", summary))[:4]
    slot = f"tool:{ids[0]}" if ids else "tool:" + ",".join(keys)
    item = MemoryItem(
        id=new_id(), type="fact", slot=slot, value=summary, source="tool",
        source_ordinal=turn.ordinal, importance=0.35,
    )  # fmt: skip
    ops = _bounded([it for it in live if it.source == "tool"], item, MAX_TOOL_ITEMS)
    return Extraction("add", tuple(ops), reason=f"tool result compacted ({slot})")


def _bounded(own: list[MemoryItem], item: MemoryItem, cap: int) -> list[MemoryOp]:
    """Add `item`, retiring same-slot and overflowing older items of its source.

    Tool results and assistant conclusions are many and cheap to re-read
    from the transcript; only the latest few stay live.
    """
    ops: list[MemoryOp] = []
    same = [it for it in own if it.slot == item.slot]
    others = sorted((it for it in own if it.slot != item.slot), key=lambda it: it.source_ordinal)
    retire = same + others[: max(0, len(others) + 1 - cap)]
    # Named like the linking chain's decisions: this is how the record says why it went.
    ops.extend(
        Supersede(old.id, item, linker="latest_few", why=_retired_because(old, item, cap))
        for old in retire
    )
    if not retire:
        ops.append(Add(item))
    return ops


# -- assistant replies --------------------------------------------------------


def extract_assistant(
    turn: Turn, live: Sequence[MemoryItem], new_id: Callable[[], str]
) -> Extraction:
    content = turn.raw.get("content")
    if turn.raw.get("tool_calls") and not content:
        return Extraction("irrelevant", reason="tool call")
    text = turn.text.strip()
    if not text or text[0] in "{[":
        return Extraction("irrelevant", reason="no prose")
    if not _DONE.search(text) and not _DONE_LINE.search(text):
        return Extraction("irrelevant", reason="nothing the assistant confirmed")
    known = {value_signature(v) for it in live for v in extract_values(it.value)}
    for sentence in split_sentences(text):
        if not _DONE.search(sentence) or is_question(sentence) or _instruction_like(sentence):
            continue
        fresh = [
            v for v in extract_values(sentence)
            if v.kind in ("id", "money", "date", "time", "version")
            and value_signature(v) not in known
        ]  # fmt: skip
        if not fresh or len(sentence) > 240:
            continue
        item = MemoryItem(
            id=new_id(), type="inferred", slot=f"inferred:{fresh[0].text}", value=sentence,
            source="assistant", source_ordinal=turn.ordinal, importance=0.3,
        )  # fmt: skip
        own = [it for it in live if it.source == "assistant"]
        ops = _bounded(own, item, MAX_INFERRED_ITEMS)
        return Extraction("add", tuple(ops), reason="assistant confirmed a concrete value")
    return Extraction("irrelevant", reason="nothing the assistant confirmed")


def _retired_because(old: MemoryItem, item: MemoryItem, cap: int) -> str:
    if old.slot == item.slot:
        return f"same slot {old.slot}, the newer {old.source} result holds"
    return f"only the latest {cap} {old.source} items stay live"
