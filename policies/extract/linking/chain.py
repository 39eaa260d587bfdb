"""The linking chain: which linker gets a statement first, in one place.

Order matters: revocations first (they say what goes away, and a sentence
right after often states the replacement), then restores and values fixed
within the message, then the placement chain — contrasts and explicit
revisions, revisions by value alone, implicit ones (same kind of value,
different number, same subject), the narrower links (a sole rival value, a
recurring day, a choice), conflicts (a rule that seems to contradict an older
rule without saying it replaces it) — and only then plain additions.

A step runs only when its gate lets the statement through (a contrast needs a
denial or a correction, an explicit revision a change cue); the first linker
that decides ends the statement's turn. Targets are chosen by IDF-weighted
lexical similarity plus value bonuses (`TargetFinder.best`); thresholds keep a
generic new rule from replacing anything at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from policies.extract.linking.choice import CHOICE
from policies.extract.linking.complete import COMPLETE
from policies.extract.linking.conflict import CONFLICT
from policies.extract.linking.context import LinkContext, Linker
from policies.extract.linking.contrast import CONTRAST
from policies.extract.linking.correction import CORRECTION
from policies.extract.linking.explicit import EXPLICIT
from policies.extract.linking.implicit import IMPLICIT
from policies.extract.linking.replacement import SWITCH
from policies.extract.linking.restore import RESTORE
from policies.extract.linking.revocation import REVOCATION
from policies.extract.linking.self_fix import SELF_FIX
from policies.extract.linking.sole_rival import SOLE_RIVAL
from policies.extract.linking.value_only import VALUE_ONLY
from policies.extract.linking.weekday import WEEKDAY
from policies.extract.statements import Statement
from policies.language.values import extract_values
from policies.memory.slots import comparable
from policies.rulebook import Joined
from policies.types import Add, MemoryItem, MemoryOp, Supersede

# How things were, told as a story: "Back then the workshops were on Mondays", "以前
# 我们都是周一开会". Not when it also says how things are now.
_PAST_FRAME = Joined("revision", "past_frame")
_NOW = Joined("revision", "now")


def _past_account(text: str) -> bool:
    return bool(_PAST_FRAME.search(text)) and not _NOW.search(text)


def _cued(st: Statement) -> bool:
    """A clear change cue, or a weak one ("actually", ", not 16") with a value beside it."""
    return st.change >= 2 or (st.change >= 1 and bool(st.strong_values))


@dataclass(frozen=True, slots=True)
class Step:
    """A linker and the gate a statement passes before the linker sees it."""

    linker: Linker
    gate: Callable[[Statement], bool]


PLACEMENT: tuple[Step, ...] = (
    Step(CONTRAST, lambda st: st.correction or bool(st.contrast)),
    Step(EXPLICIT, lambda st: _cued(st) or st.correction),
    Step(VALUE_ONLY, lambda st: _cued(st) or st.correction),
    Step(COMPLETE, _cued),
    Step(CORRECTION, lambda st: True),
    Step(IMPLICIT, lambda st: True),
    Step(SOLE_RIVAL, lambda st: True),
    Step(WEEKDAY, lambda st: True),
    Step(CHOICE, lambda st: True),
    Step(CONFLICT, lambda st: st.type in ("directive", "constraint")),
)

# Every linker by name, the ones the chain reaches through another included
# (`duplicate` through explicit and implicit; `propagate` is a decision's echo).
LINKERS: tuple[str, ...] = (
    REVOCATION.name,
    RESTORE.name,
    SELF_FIX.name,
    *(step.linker.name for step in PLACEMENT),
    "duplicate",
    "propagate",
)


def link_statements(
    statements: list[Statement],
    live: Sequence[MemoryItem],
    message: str,
    ordinal: int,
    new_id: Callable[[], str],
    history: Sequence[MemoryItem] = (),
) -> list[MemoryOp]:
    """What a message's statements do to the live items: the ops, each decision named.

    `history`: every item of the session, superseded ones too (a restore brings
    an old value back)."""
    ctx = LinkContext(live, message, ordinal, new_id, history=history, statements=statements)
    for st in statements:
        if st.revoke and not st.consumed:
            ctx.run(REVOCATION, st)
    for st in statements:
        if not st.consumed:
            place(ctx, st)
    _settle_denials(ctx)
    return ctx.ops


def place(ctx: LinkContext, st: Statement) -> None:
    if st.restore:
        ctx.run(RESTORE, st)
        return
    if ctx.run(SELF_FIX, st):
        return
    place_plain(ctx, st)


def place_plain(ctx: LinkContext, st: Statement) -> None:
    """The placement chain, then a plain addition when no linker decides."""
    if st.reported and not st.cues.agreement:
        # Another party's position never replaces the user's; what they approved
        # or confirmed ("finance approved 95k for media") is news that does.
        ctx.emit(Add(ctx.new_item(st, st.text, st.type)))
        return
    if _past_account(st.text):
        # "Back then the workshops were on Monday evenings": how things were, which
        # sets nothing now and so replaces nothing.
        ctx.emit(Add(ctx.new_item(st, st.text, st.type)))
        return
    for step in PLACEMENT:
        if step.gate(st) and ctx.run(step.linker, st):
            return
    ctx.emit(Add(ctx.new_item(st, st.text, st.type)))


def _settle_denials(ctx: LinkContext) -> None:
    """What a revocation named but no item held ("Scratch the trade-in. He's buying
    the Civic for $3,200") is remembered as replaced by the next statement, so that
    quotes of it elsewhere (a recalled question, the summary) read as outdated."""
    for st, token in ctx.denials:
        successor = next(
            (
                op.item for op in ctx.ops
                if isinstance(op, (Add, Supersede))
                and ctx.sources.get(op.item.id) == st.index + 1
                and op.item.status == "active"
                # what replaces it is concrete: a value, or a switch ("we'll … instead")
                and (comparable(extract_values(op.item.value)) or SWITCH.search(op.item.value))
            ),
            None,
        )  # fmt: skip
        if successor is not None:
            ctx.emit(Add(ctx.denied(st, token, successor.id)))
