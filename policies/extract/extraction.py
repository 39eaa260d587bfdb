"""Rule-based memory extraction (zh + en): deterministic, offline, cheap.

For each incoming message the extractor decides which of its sentences are
requirements, facts or setting worth remembering (`statements`), and what
each does to the session's live items (`revision`): add, supersede (a
revised value or rule), revoke, flag a conflict for confirmation, or
confirm. Assistant replies and tool results only ever add low-ranked data
(`observations`).

Context the extractor relies on (`ExtractionContext`):
- `items`: every item of the session, all statuses, oldest first; only
  active/pending ones are considered as targets.
- `user_turn_index`: 0 for the session's first user message, whose
  sentences set the scene (goal, setting) and are kept more liberally.
- `system_prompt`: used, with live user items, as the conversation's topic,
  so that a number in an off-topic aside is not remembered as a fact.
- `new_id`: called once per new item.
"""

from __future__ import annotations

from collections.abc import Sequence

from policies.extract.choices import list_options, picked
from policies.extract.embedded import without_embedded
from policies.extract.linking import link_statements, named
from policies.extract.observations import extract_assistant, extract_tool
from policies.extract.recount import recount_replacements
from policies.extract.relative import Relative, relative_changes
from policies.extract.statements import Statement, read_statements
from policies.extract.tentative import estimate_replacements, tentative_replacements
from policies.extract.weekdays import weekday_moves
from policies.language.dates import strip_markers
from policies.language.matching import key_terms
from policies.language.social import CONFIRM, REJECT
from policies.types import (
    Add,
    Confirm,
    Conflict,
    Extraction,
    ExtractionContext,
    MemoryItem,
    MemoryOp,
    Operation,
    Revoke,
    Supersede,
    Turn,
)

_LIVE = frozenset({"active", "pending"})


class RuleExtractor:
    """The default `extraction` policy."""

    name = "rules"

    def extract(self, turn: Turn, ctx: ExtractionContext) -> Extraction:
        live = [it for it in ctx.items if it.status in _LIVE]
        if turn.role == "user":
            return self._user(turn, ctx, live)
        if turn.role == "assistant":
            return extract_assistant(turn, live, ctx.new_id)
        if turn.role == "tool":
            return extract_tool(turn, live, ctx.new_id)
        return Extraction("irrelevant", reason=f"{turn.role} message")

    def _user(self, turn: Turn, ctx: ExtractionContext, live: list[MemoryItem]) -> Extraction:
        # A transcript's "[date: …]" marker says when, not what: see `policies.language.dates`.
        # Pasted material (a page, a quoted mail, code) is not the user's own rule.
        text = without_embedded(strip_markers(turn.text)).strip()
        if not text:
            return Extraction("irrelevant", reason="empty message or pasted material only")
        answer = _answer_to_conflict(text, live)
        if answer is not None:
            return answer
        topic = _topic(ctx.system_prompt, live)
        options = list_options(ctx.previous) if ctx.previous else []
        statements = read_statements(text, topic, opening=ctx.user_turn_index == 0, options=options)
        relative = _restated_values(text, live, statements, turn.ordinal, ctx)
        statements = [st for st in statements if not relative.used(st.text)]
        if not statements and not relative.ops:
            return _reply_only(text, turn.ordinal, live)
        rest = [it for it in live if it.id not in relative.targets]
        ops = (
            link_statements(statements, rest, text, turn.ordinal, ctx.new_id, history=ctx.items)
            if statements
            else []
        )
        ops += named(_rejected_options(ops, options, rest), "rejected_option", _PASSED_OVER, rest)
        ops += relative.ops
        if not ops:
            return Extraction("irrelevant", reason="nothing new")
        return Extraction(operation_of(ops), tuple(ops), reason=_reason(ops))


def _restated_values(
    text: str,
    live: list[MemoryItem],
    statements: Sequence[Statement],
    ordinal: int,
    ctx: ExtractionContext,
) -> Relative:
    """Values the message restates on the items that hold them; such a sentence is
    no item of its own, and an item one reader took is no other reader's."""
    # "Add two more", "首播往后推一周": worked out on the quantity it changes.
    out = _named(relative_changes(text, live, ordinal, ctx.new_id, ctx.items), "relative", live)
    # "周二那节课换到周三": one day of a listed weekly schedule.
    out.absorb(
        _named(weekday_moves(text, out.untouched(live), ordinal, ctx.new_id), "weekday_move", live)
    )
    # "开工先定3月2日" … "3月4日进场的材料你帮我列一下": the provisional value replaced.
    out.absorb(
        _named(
            tentative_replacements(text, out.untouched(live), ordinal, ctx.new_id),
            "tentative",
            live,
        )
    )
    # "估分620分左右" … "成绩出来了！628分": the estimate replaced by the outcome.
    out.absorb(
        _named(
            estimate_replacements(text, out.untouched(live), ordinal, ctx.new_id), "estimate", live
        )
    )
    # "下个月9个人的排班表你帮我弄一下" after "现在一共8个人": the head count told again.
    said = [st.text for st in statements]
    recounts = recount_replacements(text, out.untouched(live), said, ordinal, ctx.new_id)
    out.absorb(_named(recounts, "recount", live))
    return out


# What each reader of restated values says when it replaces one.
_READERS = {
    "relative": "a relative change",
    "weekday_move": "one day of a weekly schedule moved",
    "tentative": "the provisional value settled",
    "estimate": "the estimate replaced by the outcome",
    "recount": "the head count told again",
}
_PASSED_OVER = "another option of the list picked"


def _named(found: Relative, linker: str, live: Sequence[MemoryItem]) -> Relative:
    """A reader's replacements named after it (see `policies.extract.linking.named`)."""
    found.ops = named(found.ops, linker, _READERS[linker], live)
    return found


def _rejected_options(
    ops: list[MemoryOp], options: Sequence[str], live: Sequence[MemoryItem]
) -> list[MemoryOp]:
    """Picking one option of a list passes over the others: an earlier statement of the
    user's that names one of those ("I found a listing: 2019 Outback Premium…") is no
    longer the plan once "the second one" (the RAV4) is chosen."""
    chosen = [
        (op.item, option) for op in ops
        if isinstance(op, (Add, Supersede)) for option in (picked(op.item.value),) if option
    ]  # fmt: skip
    if not chosen or len(options) < 2:
        return []
    choice, option_chosen = chosen[0]
    out: list[MemoryOp] = []
    for option in options:
        if option == option_chosen:
            continue
        words = {t for t in key_terms(option) if not t.isdigit()}
        if len(words) < 2:
            continue
        for it in live:
            if it.source != "user" or it.type not in ("fact", "entity", "preference"):
                continue
            if len(words & key_terms(it.value)) >= max(2, len(words) - 1):
                out.append(Supersede(it.id, choice))
    return out


def _topic(system_prompt: str, live: Sequence[MemoryItem]) -> frozenset[str]:
    """What the conversation is about: terms of the system prompt and the user's items."""
    return key_terms(system_prompt).union(
        *(key_terms(it.value) for it in live if it.source == "user")
    )


def _answer_to_conflict(text: str, live: list[MemoryItem]) -> Extraction | None:
    """A short yes/no right after a conflict was flagged settles it."""
    pending = [it for it in live if it.status == "pending"]
    if not pending or len(text) > 60:
        return None
    if REJECT.match(text):
        kept = Confirm(pending[-1].id, linker="conflict_answer", why="kept the earlier rule")
        return Extraction("confirm", (kept,), reason="kept the earlier rule")
    challenger = _challenger(pending[-1], live)
    if challenger is not None and CONFIRM.match(text):
        changed = Confirm(challenger.id, linker="conflict_answer", why="confirmed the change")
        return Extraction("confirm", (changed,), reason="confirmed the change")
    return None


def _reply_only(text: str, ordinal: int, live: list[MemoryItem]) -> Extraction:
    """A message with nothing to remember: a confirmation, or chit-chat."""
    if not (len(text) <= 60 and CONFIRM.match(text)):
        return Extraction("irrelevant", reason="no requirement, fact or confirmation")
    recent = [it for it in live if it.source_ordinal >= ordinal - 2]
    if recent:
        latest = max(recent, key=lambda it: it.source_ordinal)
        confirmed = Confirm(latest.id, linker="confirmation", why="confirmed the latest item")
        return Extraction("confirm", (confirmed,), reason="confirmed the latest item")
    return Extraction("irrelevant", reason="confirmation with nothing to confirm")


def _challenger(pending: MemoryItem, live: list[MemoryItem]) -> MemoryItem | None:
    for version in reversed(pending.versions):
        if version.note.startswith("conflict:"):
            new_id = version.note.split()[0].removeprefix("conflict:")
            return next((it for it in live if it.id == new_id), None)
    return None


def operation_of(ops: list[MemoryOp]) -> Operation:
    """What a message's ops amount to, as one operation: the strongest change among
    them (an update, then a revoke, then an add), else a confirmation."""
    if any(isinstance(op, Supersede | Conflict) for op in ops):
        return "update"
    if any(isinstance(op, Revoke) for op in ops):
        return "revoke"
    if any(isinstance(op, Add) for op in ops):
        return "add"
    return "confirm"


def _reason(ops: list[MemoryOp]) -> str:
    names = {Add: "add", Supersede: "supersede", Revoke: "revoke", Conflict: "conflict",
             Confirm: "confirm"}  # fmt: skip
    counts: dict[str, int] = {}
    for op in ops:
        key = names[type(op)]
        counts[key] = counts.get(key, 0) + 1
    return ", ".join(f"{n} {k}" for k, n in counts.items())
