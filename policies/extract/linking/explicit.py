"""A change cue ("actually", "改成") and the item its words name."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.linking.duplicate import confirm_duplicate
from policies.extract.linking.subjects import shares_only_names, shares_subject
from policies.extract.linking.thresholds import EXPLICIT_MIN, SUBJECT_ONLY_MIN, VALUE_TARGET_MIN
from policies.extract.linking.value_only import VALUE_ONLY
from policies.extract.revision import VALUE_ONLY_KINDS, quotes_another_old_value, same_named_slot
from policies.extract.statements import Statement
from policies.language.matching import opposed
from policies.language.values import extract_values
from policies.memory.slots import (
    NAMED_SLOTS,
    REVISABLE_KINDS,
    comparable,
    different_subjects,
    named_slot,
    value_change,
)
from policies.types import MemoryItem


class Explicit:
    """A change cue ("actually", "改成") and the item its words name."""

    name = "explicit"
    phrase = "change cue on the same subject"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        target, score = ctx.targets.best(st, ctx.user_items(), with_message=True)
        if target is None or score < EXPLICIT_MIN:
            return False
        if quotes_another_old_value(st, target):
            return False
        if st.change < 2 and (
            not value_change(st.strong_values, extract_values(target.value))[0]
            or (ctx.targets.lexical(st, target) < EXPLICIT_MIN and not same_named_slot(st, target))
        ):
            return False  # a weak cue needs a changed value *and* the same subject
        if st.change < 2 and not st.correction and different_subjects(st.text, target.value):
            return False  # "actually, tennis practice is Wednesdays" beside guitar practice
        if (
            not value_change(st.strong_values, extract_values(target.value))[0]
            and not shares_subject(st.text, target.value)
            and not opposed(st.text, target.value)
            and not (target.slot in NAMED_SLOTS and named_slot(st.text) == target.slot)
        ):
            # "帮我改一下这段…" shares a word or two with its message, not with the item.
            return False
        if (
            comparable(st.strong_values)
            and not st.correction  # "是我记错了" may fix a value written in a way not parsed
            and not any(
                v.kind in REVISABLE_KINDS or v.kind == "time" for v in extract_values(target.value)
            )
            and not same_named_slot(st, target)
            and not opposed(st.text, target.value)
            and ctx.targets.lexical(st, target) < VALUE_TARGET_MIN
        ):
            # The reverse: a new value ("签售控制在半小时", "the code is OOPS15 now, 15%
            # off") revises an item holding some value to replace, or one its words
            # clearly name; not one that only shares a name with it ("经纪人陶可的电话是…").
            return False
        if (
            not st.strong_values
            and comparable(extract_values(target.value))
            and ctx.targets.lexical(st, target) < SUBJECT_ONLY_MIN
        ):
            # "这周开始吃希尔斯了" shares only the subject ("年糕") with "年糕现在4.2公斤":
            # a new value for something else, not a revision of the weight.
            return False
        if (
            comparable(st.strong_values)
            and not value_change(st.strong_values, extract_values(target.value))[0]
            and shares_only_names(st.text, target.value)
        ):
            # "Dana wants to cut the break to ten minutes" beside "our director is Dana,
            # ten years now": a new value for something the person asked about, no
            # revision of what was said about the person.
            return False
        if confirm_duplicate(ctx, st, target):
            return True
        if _holds_no_such_value(st, target) and ctx.run(VALUE_ONLY, st):
            # "Change of plan: make it June 8–9 instead" shares a word with "help me
            # firm up the plan", but revises the dates said before.
            return True
        ctx.supersede(target, st, st.text, st.type)
        return True


EXPLICIT = Explicit()


def _holds_no_such_value(st: Statement, target: MemoryItem) -> bool:
    """The statement brings a date, a time or an amount; the item chosen by its words
    holds no such value at all to revise (a limit on an amount counts as one)."""
    if not any(v.kind in VALUE_ONLY_KINDS for v in st.strong_values):
        return False
    return not any(
        v.kind in VALUE_ONLY_KINDS or v.kind == "bound" for v in extract_values(target.value)
    )
