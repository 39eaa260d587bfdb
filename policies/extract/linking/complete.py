"""A revision split over two sentences, the old value quoted first."""

from __future__ import annotations

import re

from policies.extract.linking.context import LinkContext
from policies.extract.statements import Statement
from policies.language.values import extract_values, value_signature
from policies.memory.slots import value_change
from policies.types import Add, Supersede


class CompleteRevision:
    """A revision split over two sentences, the old value quoted first."""

    name = "complete"
    phrase = "revision finished in the next sentence"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """A revision split over two sentences the other way round: "On second thought,
        10pm is too late. Make it 9:30 instead.", "10点太晚了。改成9点半吧。": the
        sentence before already replaced the item quoting the old value; the new value
        joins that replacement instead of standing as a rule of its own."""
        for k, op in enumerate(ctx.ops):
            if not isinstance(op, (Add, Supersede)) or ctx.sources.get(op.item.id) != st.index - 1:
                continue
            if op.item.status != "active":
                continue
            quoted = extract_values(op.item.value)
            changed, closeness = value_change(st.strong_values, quoted)
            if not changed or closeness <= 0:
                continue
            sep = "" if re.search(r"[\u3000-\u9fff]$", op.item.value) else " "
            joined = op.item.value + sep + st.text
            if isinstance(op, Add):
                # The sentence before quoted the old value ("6am is too early"): the
                # item holding it is what the two sentences revise.
                sigs = {value_signature(v) for v in quoted}
                holders = [
                    it for it in ctx.user_items()
                    if any(value_signature(v) in sigs for v in extract_values(it.value))
                ]  # fmt: skip
                if holders:
                    del ctx.ops[k]
                    target = max(holders, key=lambda it: it.source_ordinal)
                    ctx.supersede(target, st, joined, st.type)
                    return True
            op.item.value = joined
            return True
        return False


COMPLETE = CompleteRevision()
