""" "I meant X, not Y": the item holding what is now denied is the one revised."""

from __future__ import annotations

import re

from policies.extract.linking.context import LinkContext
from policies.extract.linking.denials import denied_token_pattern, denied_value, names_something
from policies.extract.linking.effects import keep_rest
from policies.extract.linking.subjects import other_subject
from policies.extract.statements import Statement
from policies.language.values import Value, extract_values, value_signature
from policies.memory.slots import REVISABLE_KINDS, changed_pair
from policies.types import MemoryItem


class Contrast:
    """ "I meant X, not Y": the item holding what is now denied is the one revised."""

    name = "contrast"
    phrase = "denies what the item holds"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """ "I meant Paulina, not Priyanka", "不是蓝卡，是ICT卡", "no more quartz":
        the item holding what is now denied is the one revised.

        When no item holds it (it was said in passing, as a one-off), the
        corrected statement is added and the denied value is remembered as a
        superseded item of its own, so that text quoting it elsewhere (the
        summary, recalled turns) is marked as changed.
        """
        return any(
            _revise_holder(ctx, st, token)
            for token in (denied_value(st.text, t) for t in st.contrast)
            if names_something(token)
        )


CONTRAST = Contrast()


def _revise_holder(ctx: LinkContext, st: Statement, token: str) -> bool:
    """Revise the item that holds `token`, if one does.

    A token holding a value ("不要75公斤这个目标了") names the item holding that
    value, however it is written there ("目标是减到75公斤").
    """
    named = {
        value_signature(v) for v in extract_values(token)
        if v.kind in REVISABLE_KINDS or v.kind == "id"
    }  # fmt: skip
    # A bare number ("forget the 400 cap") names an amount however it is written
    # in the item ("$400", "400元").
    # So does an amount denied as a cap ("forget $2,300 as the max") an item
    # holding it as a plain amount ("Max rent is $2,300"), and the reverse.
    bare = {
        v.number for v in extract_values(token)
        if v.number is not None
        and (
            v.kind in ("money", "bound")
            or (v.kind == "number"
                and re.fullmatch(r"[$€£]?\d{1,3}(?:,?\d{3})+|[$€£]?\d{3,}", token))
        )
    }  # fmt: skip
    hits: list[tuple[MemoryItem, Value]] = []
    for it in ctx.user_items():
        if named or bare:
            held = [
                v for v in extract_values(it.value)
                if value_signature(v) in named
                or (v.kind in ("money", "bound") and v.number in bare)
            ]  # fmt: skip
            if held:
                hits.append((it, held[0]))
            continue
        m = denied_token_pattern(token).search(it.value)
        if m is not None:
            hits.append((it, Value("word", "", m.group(0), None, m.start(), m.end())))
    if not named and not bare and not re.fullmatch(r"[\d.]+", token):
        # A plain word denied in a sentence about something else ("the work laptop
        # stays on ethernet, not wifi") is no correction of a fact using that word
        # ("sort out the wifi in the house").
        hits = [(it, v) for it, v in hits if not other_subject(st.text, token, it.value)]
    if not hits:
        return False
    holders = [it for it, _ in hits]
    best, _ = ctx.targets.best(st, holders, with_message=True)
    target = best or max(holders, key=lambda it: it.source_ordinal)
    if target.value == st.text:
        return False
    ctx.supersede(target, st, st.text, st.type)
    held_value = next(v for it, v in hits if it is target)
    if not changed_pair(st.text, target.value):
        keep_rest(ctx, target, held_value, st)
    return True
