"""A clear revision that names no subject: the latest item holding that kind of value."""

from __future__ import annotations

from policies.extract.linking.complete import COMPLETE
from policies.extract.linking.context import LinkContext
from policies.extract.revision import VALUE_ONLY_KINDS, quotes_another_old_value
from policies.extract.statements import Statement
from policies.language.values import extract_values
from policies.memory.slots import different_subjects, value_change


class ValueOnly:
    """A clear revision that names no subject: the latest item holding that kind of value."""

    name = "value_only"
    phrase = "same kind of value"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """A clear revision that names no subject ("换成10月27号的航班", "sorry, make
        that the 13th"): the latest item holding a value of the same kind, if close."""
        if st.change < 2 and not st.correction:
            return False
        # Only values precise enough to compare ("10月20号", "$38,000"), not "Tuesday".
        # A clock time counts here, under a clear change cue ("改到晚上9点吧", "move it
        # to 7am"): it names the one time said before, whatever words went with it.
        revisable = [
            v for v in st.strong_values
            if v.kind in VALUE_ONLY_KINDS and (v.number is not None or v.kind == "title")
        ]  # fmt: skip
        if not revisable:
            return False
        if all(v.kind == "time" for v in revisable) and ctx.run(COMPLETE, st):
            return True  # "6am is too early. Make it 7:15 instead.": one revision
        pool = []
        for it in ctx.user_items():
            if it.type == "directive":
                continue
            # With nothing but the value to go on, only the very same kind of value counts.
            kinds = {v.kind for v in revisable}
            precise = [
                v for v in extract_values(it.value)
                if v.kind in kinds and (v.number is not None or v.kind == "title")
            ]  # fmt: skip
            changed, closeness = value_change(revisable, precise)
            if (
                changed
                and closeness >= 0.5
                and not different_subjects(st.text, it.value)
                and not quotes_another_old_value(st, it)
            ):
                pool.append(it)
        if not pool:
            return False
        target = max(pool, key=lambda it: it.source_ordinal)
        ctx.supersede(target, st, st.text, st.type)
        return True


VALUE_ONLY = ValueOnly()
