"""A restatement of a live item: confirmed instead of copied."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.linking.thresholds import DUPLICATE_MIN
from policies.extract.statements import Statement
from policies.language.cues import negated
from policies.language.matching import similarity, weighted_terms
from policies.language.values import extract_values
from policies.memory.slots import value_change
from policies.types import Confirm, MemoryItem


class Duplicate:
    """A restatement of a live item: confirmed instead of copied."""

    name = "duplicate"
    phrase = "restated"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        target, _ = ctx.targets.best(st, ctx.user_items(), with_message=False)
        return target is not None and confirm_duplicate(ctx, st, target)


DUPLICATE = Duplicate()


def confirm_duplicate(ctx: LinkContext, st: Statement, item: MemoryItem) -> bool:
    """A restatement of a live item: confirm it instead of adding a copy."""
    sim = similarity(weighted_terms(st.text), weighted_terms(item.value), ctx.targets.idf)
    changed, _ = value_change(st.strong_values, extract_values(item.value))
    if sim < DUPLICATE_MIN or changed or negated(st.text) != negated(item.value):
        return False
    ctx.claimed.add(item.id)
    ctx.emit(Confirm(item.id), why=f"restated, similarity {sim:.2f}", linker=DUPLICATE.name)
    return True
