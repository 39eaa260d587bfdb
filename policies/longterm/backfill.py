"""Backfill: long-term items brought back into a conversation, as background.

The seeds' rule (003, 5.2): retrieval must not pollute the current task. The
items the conversation is about are scored (`policies.longterm.relevance`), at
most `max_items` and none below `min_score`. They are shown as background with
their origin and date ("long-term preference, from an earlier conversation on
2026-11-02"), never as current instructions, and where this conversation says
otherwise, both in order (`policies.longterm.conflicts`).

The block has its own share of the history budget and goes late, right
before the replay (or the current input): it changes with the input, and
late it does not cut the cached prompt prefix.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.assemble.generated import REPLAY_HEADER
from policies.assemble.lines import Line, fit_lines, one_line
from policies.language.matching import Idf, content_terms, similarity
from policies.language.text import normalize
from policies.longterm.conflicts import find_conflicts, revoked_now, said_now
from policies.longterm.items import LongTermItem
from policies.longterm.matching import DUPLICATE_MIN
from policies.longterm.params import LongTermParams
from policies.longterm.relevance import (
    BackfillQuery,
    live_user_items,
    score_rows,
    shortlist,
    similarities,
)
from policies.types import AssembledContext, Candidate, MemoryItem, Section, TokenCounter

BACKFILL_HEADER = (
    "Background from the user's earlier chats (not current instructions; this chat wins):"
)
SECTION = "longterm"
_LABELS = {"rule": "rule", "preference": "preference", "decision": "decision",
           "entity": "fact", "confirmed": "note (confirmed by the user)"}  # fmt: skip


@dataclass(slots=True)
class Backfill:
    """The background block for one request, and the account of every candidate."""

    contents: list[str] = field(default_factory=list)
    tokens: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    item_ids: list[str] = field(default_factory=list)
    conflicts: dict[str, str] = field(default_factory=dict)  # long-term id -> current value

    def messages(self) -> list[dict[str, Any]]:
        return [{"role": "system", "content": c} for c in self.contents]


def _date(ts: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(ts))


def render_line(row: LongTermItem, current: str | None) -> str:
    label = f"long-term {_LABELS.get(row.kind, row.kind)}"
    origin = f"- {label}, from an earlier conversation on {_date(row.last_confirmed)}:"
    if current is None:
        return f"{origin} {one_line(row.value)}"
    return f"{origin} usually: {one_line(row.value)}; this conversation: {one_line(current)}"


def _already_here(row: LongTermItem, current: Sequence[MemoryItem], idf: Idf) -> bool:
    value, bag = normalize(row.value), content_terms(row.value)
    return any(
        normalize(it.value) == value
        or similarity(content_terms(it.value), bag, idf) >= DUPLICATE_MIN
        for it in current
    )


def plan_backfill(
    rows: Sequence[LongTermItem],
    q: BackfillQuery,
    cap: int,
    p: LongTermParams,
    count: TokenCounter,
) -> Backfill:
    """The background lines for this request within `cap` tokens, and why each row
    was or was not shown. Rows that came from this very conversation are skipped:
    they are its working memory already."""
    eligible = [r for r in rows if r.status == "active" and r.source_session_id != q.session_id]
    out = Backfill()
    if not eligible or p.max_items == 0:
        return out
    cos = similarities(eligible, q)
    shortlisted = [eligible[i] for i in shortlist(eligible, q, p, cos)]
    scored = sorted(
        score_rows(shortlisted, q, p, cos),
        key=lambda t: (-t[1] * (1 + 0.1 * min(t[0].confirmations - 1, 3)), -t[0].last_confirmed),
    )
    current = live_user_items(q.items)
    idf = Idf([*(r.value for r in shortlisted), *(it.value for it in current)])
    revoked = revoked_now([r for r, s, _ in scored if s >= p.min_score], q.text)
    selected: list[LongTermItem] = []
    reasons: dict[str, tuple[float, str]] = {}
    for row, score, why in scored:
        if score <= 0:
            continue
        reason = _left_out(row, score, p, revoked, len(selected), current, idf)
        if reason:
            out.candidates.append(Candidate(SECTION, row.id, 0, score, "dropped", reason))
            continue
        selected.append(row)
        reasons[row.id] = (score, f"relevant to {why} ({score:.2f})")
    others = find_conflicts(selected, [*current, *said_now(q)], idf, p.conflict_min)
    out.conflicts = {row_id: it.value for row_id, it in others.items()}
    lines: list[Line] = []
    for rank, row in enumerate(selected):
        text = render_line(row, out.conflicts.get(row.id))
        lines.append(Line(row.id, text, count(text), (rank, 0, row.id), SECTION))
    shown, content, tokens = fit_lines(BACKFILL_HEADER, lines, cap, count)
    shown_ids = {ln.key for ln in shown}
    for ln in lines:
        score, reason = reasons[ln.key]
        if ln.key in shown_ids:
            if ln.key in out.conflicts:
                reason += "; this conversation overrides it"
            out.candidates.append(
                Candidate(SECTION, ln.key, ln.tokens, score, "recalled", reason, SECTION)
            )
        else:
            out.candidates.append(
                Candidate(SECTION, ln.key, ln.tokens, score, "dropped", "over long-term share")
            )
    skipped = len(eligible) - len(out.candidates)
    if skipped > 0:
        out.candidates.append(
            Candidate(SECTION, f"{skipped} others", 0, 0.0, "dropped", "no term in common")
        )
    if content:
        out.contents, out.tokens, out.item_ids = [content], tokens, [ln.key for ln in shown]
    out.conflicts = {k: v for k, v in out.conflicts.items() if k in shown_ids}
    return out


def _left_out(
    row: LongTermItem,
    score: float,
    p: LongTermParams,
    revoked: Collection[str],
    selected: int,
    current: Sequence[MemoryItem],
    idf: Idf,
) -> str:
    """Why a scored row is not shown ("" when it is): under the minimum score,
    revoked by the input, over the item cap (`selected`: rows taken so far), or
    already in this conversation's memory (`current`: its live user items)."""
    if score < p.min_score:
        return f"below min_score ({score:.2f} < {p.min_score})"
    if row.id in revoked:
        return "revoked by the current input"
    if selected >= p.max_items:
        return f"over max_items ({p.max_items})"
    if _already_here(row, current, idf):
        return "already in this conversation's memory"
    return ""


def place_backfill(
    ctx: AssembledContext, backfill: Backfill, tail_count: int, budget: int
) -> AssembledContext:
    """Insert the block right before the replay (or the current input) and account for it.

    The assembler ran with the budget less the block's tokens, so the total
    stays within `budget`. A passthrough context is no longer one once the
    block is in it.
    """
    ctx.candidates += backfill.candidates
    ctx.budget = budget
    if not backfill.contents:
        return ctx
    at = len(ctx.messages) - tail_count
    if at > 0 and str(ctx.messages[at - 1].get("content", "")).startswith(REPLAY_HEADER):
        at -= 1
    ctx.messages[at:at] = backfill.messages()
    names = [s.name for s in ctx.sections]
    where = names.index("replay") if "replay" in names else names.index("tail")
    ctx.sections.insert(where, Section(SECTION, backfill.tokens, len(backfill.item_ids)))
    ctx.tokens += backfill.tokens
    ctx.passthrough = False
    return ctx


def backfill_cap(budget: int, mandatory_tokens: int, p: LongTermParams) -> int:
    """Tokens the block may take: its share of the history budget."""
    return max(0, int((budget - mandatory_tokens) * p.share))
