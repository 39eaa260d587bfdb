"""A rule that seems to contradict a live rule without saying it replaces it."""

from __future__ import annotations

from policies.extract.contradiction import contradicts, settles
from policies.extract.linking.context import LinkContext, reason
from policies.extract.linking.thresholds import CONFLICT_MIN
from policies.extract.statements import Statement
from policies.language.cues import PERMISSION, negated
from policies.language.matching import content_terms, opposed
from policies.language.segment import shorten
from policies.language.values import extract_values
from policies.memory.slots import NAMED_SLOTS, derive_slot, value_change
from policies.types import Conflict, MemoryItem


class ConflictLinker:
    """A rule that seems to contradict a live rule without saying it replaces it."""

    name = "conflict"
    phrase = "contradicts the earlier rule"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """A rule that seems to contradict a live rule without saying it replaces it.

        Contradiction: opposite polarity ("never use emojis" / "use emojis"),
        opposite choices ("简短" / "详细"), or another value for the same thing.
        """
        negative = negated(st.text)
        pool = [
            it
            for it in ctx.user_items(frozenset({"directive", "constraint"}))
            if negated(it.value) != negative
            or opposed(st.text, it.value)
            or value_change(st.strong_values, extract_values(it.value))[0]
        ]
        target = _same_slot_opposite(st, pool) or _lexical_conflict(ctx, st, pool)
        if target is None or not contradicts(st.text, st.strong_values, target.value):
            return False
        if settles(st.text, target.value):
            # "口语化一点就行" after "用书面语", "from here on, friendly and chatty" after
            # "keep it strictly formal", "you can mention the council now" after "don't
            # mention the council": the opposite, said as what holds now, replaces the
            # rule. Said bare ("回答详细一点" after "回答要简短") it may be a slip or a
            # one-off: kept as a conflict to confirm.
            ctx.phrase = "the opposite, said as what holds now"
            ctx.supersede(target, st, st.text, st.type)
            return True
        item = ctx.new_item(st, st.text, st.type)
        note = (
            f'The user said "{shorten(st.text, 60)}", which may contradict the earlier rule '
            f'"{shorten(target.value, 60)}"; confirm with the user which one applies.'
        )
        ctx.claimed.add(target.id)
        ctx.emit(Conflict(target.id, item, note), why=reason(ctx.phrase, target.value, st.text))
        return True


CONFLICT = ConflictLinker()


def _same_slot_opposite(st: Statement, pool: list[MemoryItem]) -> MemoryItem | None:
    """Opposite choices on a named slot, even across languages ("English only" / "用中文")."""
    slot = derive_slot(st.type, st.text, ())
    if slot not in NAMED_SLOTS:
        return None
    hits = [it for it in pool if it.slot == slot and opposed(st.text, it.value)]
    return hits[-1] if hits else None


def _lexical_conflict(ctx: LinkContext, st: Statement, pool: list[MemoryItem]) -> MemoryItem | None:
    target, _ = ctx.targets.best(st, pool, with_message=False)
    if target is None:
        return None
    own, old = content_terms(st.text), content_terms(target.value)
    shared = [t for t, w in own.items() if w >= 1 and old.get(t, 0) >= 1]
    # Opposite choices and permissions ("you can use requests now" after
    # "no external libraries") need less overlap than a plain contradiction.
    loose = opposed(st.text, target.value) or bool(PERMISSION.search(st.text))
    needed = (1, CONFLICT_MIN / 2) if loose else (2, CONFLICT_MIN)
    if len(shared) < needed[0] or ctx.targets.lexical(st, target) < needed[1]:
        return None
    return target
