"""Backfill: long-term items brought back into a conversation, as background.

The seeds' rule (003, 5.2): retrieval must not pollute the current task.
Items are retrieved lexically for the current input and the conversation's
working memory (BM25 from `policies.assemble.recall` as a pre-filter for users with
many items, then a rerank by the share of each item's terms the conversation
mentions), at most `max_items` and none below `min_score`. With an embedding
model, items whose vector is close to the input's join the candidates, and
the rerank takes the stronger of the two signals plus a bonus when both agree
(`_hybrid`). A rule on the same kind of choice as the input (a courier, a
payment method: `policies.language.value_kinds`) is relevant though no word is shared,
and so is a standing rule for the kind of task the input asks for ("whenever
you book a hotel…" / "find a hotel in…": `policies.longterm.task_scope`). They are shown as
background with their origin and date ("long-term preference, from an
earlier conversation on 2026-11-02"), never as current instructions.

Conflicts (5.3): when this conversation says something else on the same
subject, this conversation wins and the line shows both, in order:
"usually: standard shipping; this conversation: express". Another alternative
of the same kind of choice counts ("平时都寄顺丰" / "这次发EMS就行"). A
long-term rule the current input revokes is not shown at all.

The block has its own share of the history budget and goes late, right
before the replay (or the current input): it changes with the input, and
late it does not cut the cached prompt prefix.
"""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from policies.assemble.generated import REPLAY_HEADER
from policies.assemble.lines import Line, fit_lines, one_line
from policies.assemble.recall import RecallIndex
from policies.extract.linking import link_statements
from policies.extract.statements import read_statements
from policies.language.cues import negated, read_cues
from policies.language.matching import (
    Idf,
    content_terms,
    covered,
    key_terms,
    merge_terms,
    opposed,
    similarity,
)
from policies.language.questions import is_question
from policies.language.text import normalize, term_set
from policies.language.value_kinds import choices, other_choice, shared_kinds
from policies.language.values import extract_values
from policies.longterm.items import LongTermItem
from policies.longterm.matching import DUPLICATE_MIN, as_memory_item, same_family, semantic_slot
from policies.longterm.params import LongTermParams
from policies.longterm.task_scope import shared_task
from policies.memory.slots import value_change
from policies.types import (
    RULE_TYPES,
    AssembledContext,
    Candidate,
    Conflict,
    MemoryItem,
    Revoke,
    Section,
    Supersede,
    TokenCounter,
)

BACKFILL_HEADER = (
    "Background from the user's earlier chats (not current instructions; this chat wins):"
)
SECTION = "longterm"
_CONTEXT_WEIGHT = 0.75  # working memory and system prompt count a bit less than the input
_LIVE = frozenset({"active", "pending"})
_CURRENT_RULES = RULE_TYPES | {"goal"}
# The revision rules are the costly check: only this many latest items go through it.
_RESOLVER_ITEMS = 20
# What agreement of the lexical and the vector signal adds to the stronger one.
_AGREEMENT = 0.25
# Long-term kinds that choose among alternatives (a rule, a final decision).
_CHOOSING = frozenset({"rule", "preference", "decision"})
_LABELS = {"rule": "rule", "preference": "preference", "decision": "decision",
           "entity": "fact", "confirmed": "note (confirmed by the user)"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class BackfillQuery:
    """What the current conversation is about."""

    text: str  # the current input (the user's words of the tail)
    items: Sequence[MemoryItem]  # this conversation's working memory, all statuses
    system: str
    session_id: str
    # The input's vector and the model that made it (None: lexical retrieval only).
    vector: tuple[float, ...] | None = None
    vector_model: str | None = None


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


def _user_live(items: Sequence[MemoryItem]) -> list[MemoryItem]:
    return [it for it in items if it.status in _LIVE and it.source == "user"]


def _norm(v: Sequence[float]) -> float:
    return math.sqrt(sum(map(operator.mul, v, v)))


def cosine(a: Sequence[float], b: Sequence[float], a_norm: float | None = None) -> float:
    """Cosine similarity (0 for vectors of other sizes, or zero vectors). On the
    request path for every embedded row: `map(operator.mul)` is ~4x `fsum`'s speed."""
    if len(a) != len(b):
        return 0.0
    norm = (_norm(a) if a_norm is None else a_norm) * _norm(b)
    return sum(map(operator.mul, a, b)) / norm if norm else 0.0


def similarities(rows: Sequence[LongTermItem], q: BackfillQuery) -> dict[str, float]:
    """Row id -> cosine with the input, for rows embedded by the input's model."""
    if q.vector is None:
        return {}
    q_norm = _norm(q.vector)
    return {
        r.id: cosine(q.vector, r.embedding, q_norm)
        for r in rows
        if r.embedding is not None and r.embedding_model == q.vector_model
    }


def _hybrid(lexical: float, cos: float | None, p: LongTermParams) -> float:
    """One score from both signals. A vector at `embedding_min_similarity` just
    clears `min_score` and one at 1.0 scores 1; agreement adds a bonus."""
    if cos is None or cos < p.embedding_min_similarity:
        return lexical
    floor = p.embedding_min_similarity
    by_vector = p.min_score + (1 - p.min_score) * (cos - floor) / (1 - floor)
    return min(1.0, max(lexical, by_vector) + _AGREEMENT * min(lexical, by_vector))


def _shortlist(
    rows: Sequence[LongTermItem], q: BackfillQuery, p: LongTermParams, cos: Mapping[str, float]
) -> list[int]:
    """Indexes of the rows worth reranking: all, or for very large stores BM25's best
    and the rows close by meaning."""
    if len(rows) <= p.prefilter:
        return list(range(len(rows)))
    index = RecallIndex()
    for i, row in enumerate(rows):
        index.add(i, row.value)
    query = term_set(q.text) | term_set(q.system)
    for it in _user_live(q.items):
        query |= term_set(it.value)
    hits = {i for i, _ in index.search(query, limit=p.prefilter)}
    hits |= {i for i, r in enumerate(rows) if r.slot in p.global_slots}
    hits |= {i for i, r in enumerate(rows) if cos.get(r.id, 0.0) >= p.embedding_min_similarity}
    return sorted(hits)


def _relevance(
    rows: Sequence[LongTermItem], q: BackfillQuery, p: LongTermParams, cos: Mapping[str, float]
) -> list[tuple[LongTermItem, float, str]]:
    idf = Idf(r.value for r in rows)
    input_bag = content_terms(q.text) if q.text else {}
    context = merge_terms(
        (content_terms(q.system), 1.0),
        *((content_terms(it.value), 1.0) for it in _user_live(q.items)),
    )
    out = []
    for row in rows:
        bag = content_terms(row.value)
        by_input = covered(input_bag, bag, idf) if input_bag else 0.0
        by_context = _CONTEXT_WEIGHT * covered(context, bag, idf) if context else 0.0
        score, why = (
            (by_input, "current input")
            if by_input >= by_context
            else (by_context, "this conversation")
        )
        similar = cos.get(row.id)
        hybrid = _hybrid(score, similar, p)
        if hybrid > score:
            meaning = f"meaning (cosine {similar:.2f})"
            why = meaning if score == 0 else f"{why} and {meaning}"
            score = hybrid
        if row.slot in p.global_slots and row.type in RULE_TYPES and score < p.min_score:
            score, why = p.min_score, f"applies to every conversation ({row.slot})"
        kinds = shared_kinds(row.value, q.text) if row.kind in _CHOOSING else []
        if kinds and score < p.min_score:
            score, why = p.min_score, f"a {kinds[0]} the input names"
        task = shared_task(row.value, q.text) if row.type in RULE_TYPES else None
        if task and score < p.min_score:
            score, why = p.min_score, f"a standing rule for this kind of task ({task})"
        out.append((row, score, why))
    return out


def _already_here(row: LongTermItem, current: Sequence[MemoryItem], idf: Idf) -> bool:
    value, bag = normalize(row.value), content_terms(row.value)
    return any(
        normalize(it.value) == value
        or similarity(content_terms(it.value), bag, idf) >= DUPLICATE_MIN
        for it in current
    )


def _revoked_now(rows: Sequence[LongTermItem], text: str) -> set[str]:
    """Long-term rules the current input revokes ("no need for non-smoking this time")."""
    statements = [s for s in read_statements(text, key_terms(text), False) if s.revoke]
    if not statements or not rows:
        return set()
    ops = link_statements(statements, [as_memory_item(r) for r in rows], text, 1, lambda: "new")
    return {op.old_id for op in ops if isinstance(op, Revoke)}


def _differs(old: str, new: str) -> bool:
    """Does `new` say something else than `old` on a shared subject? A change cue
    ("instead", "改用"), a negation on one side only ("never express" / "use express"),
    opposite choices, or another value of the same kind."""
    return (
        read_cues(new).change > 0
        or negated(old) != negated(new)
        or opposed(old, new)
        or value_change(extract_values(new), extract_values(old))[0]
    )


def _other_choice(old: str, new: str) -> bool:
    """Does `new` choose otherwise on a kind of choice `old` settles: another
    alternative ("顺丰" -> "EMS"), or the same one the other way round ("never
    by train" -> "let's take the train")? A rule against one alternative is not
    contradicted by choosing another."""
    if other_choice(old, new) is not None:
        return not negated(old)
    before, now = choices(old), choices(new)
    same = any(before[kind] == now[kind] for kind in shared_kinds(old, new))
    return same and negated(old) != negated(new)


def _conflicts(
    rows: Sequence[LongTermItem], current: Sequence[MemoryItem], idf: Idf, conflict_min: float
) -> dict[str, MemoryItem]:
    """For each row, the latest item of this conversation that says something else on its
    subject: the same slot; a rule or request about the same subject that differs
    (`_differs`); or one the revision rules read as replacing it."""
    found: dict[str, MemoryItem] = {}
    latest_first = sorted(current, key=lambda i: -i.source_ordinal)
    for row in rows:
        bag = content_terms(row.value)
        for it in latest_first:
            # This conversation's request (its goal) overrides a standing rule as much
            # as a rule does.
            rules = it.type in _CURRENT_RULES and row.type in RULE_TYPES
            about = rules and covered(content_terms(it.value), bag, idf) >= conflict_min
            slot = semantic_slot(row.slot) and it.slot == row.slot
            if (
                # A question on the subject ("any allergies to flag?") asks, it does
                # not restate: it overrides nothing unless it says something else.
                (slot and same_family(it.type, row.type) and not is_question(it.value))
                or (about and _differs(row.value, it.value))
                or (rules and _other_choice(row.value, it.value))
            ):
                found[row.id] = it
                break
    rest = [r for r in rows if r.id not in found]
    if not rest:
        return found
    live = [as_memory_item(r) for r in rest]
    terms = frozenset().union(*(key_terms(r.value) for r in rest))
    # One pass of the revision rules per item, all rows at once, for the latest items.
    for it in latest_first[:_RESOLVER_ITEMS]:
        if not key_terms(it.value) & terms:
            continue
        statements = read_statements(it.value, key_terms(it.value), opening=True)
        ops = link_statements(statements, live, it.value, 1, lambda: "new") if statements else []
        for op in ops:
            if isinstance(op, Supersede | Conflict) and op.old_id not in found:
                found[op.old_id] = it
    return found


def _said_now(q: BackfillQuery) -> list[MemoryItem]:
    """The current input as a request of this conversation, when no item holds it:
    the extractor keeps nothing of "这单用韵达寄吧" after another request, yet it is
    what the user says now, and it wins over any long-term rule."""
    text = q.text.strip()
    if not text or any(normalize(it.value) == normalize(text) for it in q.items):
        return []
    latest = max((it.source_ordinal for it in q.items), default=0)
    return [MemoryItem("input", "goal", "input", text, "user", latest + 1)]


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
    shortlisted = [eligible[i] for i in _shortlist(eligible, q, p, cos)]
    scored = sorted(
        _relevance(shortlisted, q, p, cos),
        key=lambda t: (-t[1] * (1 + 0.1 * min(t[0].confirmations - 1, 3)), -t[0].last_confirmed),
    )
    current = _user_live(q.items)
    idf = Idf([*(r.value for r in shortlisted), *(it.value for it in current)])
    revoked = _revoked_now([r for r, s, _ in scored if s >= p.min_score], q.text)
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
    others = _conflicts(selected, [*current, *_said_now(q)], idf, p.conflict_min)
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
