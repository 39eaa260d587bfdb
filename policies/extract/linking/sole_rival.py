"""A plan adjusted, with only one live value it can adjust."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.revision import asserted_values, plays_other_role
from policies.extract.rivals import marks_adjustment, sole_rival_pair
from policies.extract.statements import Statement
from policies.memory.slots import different_subjects


class SoleRival:
    """A plan adjusted, with only one live value it can adjust."""

    name = "sole_rival"
    phrase = "the only rival value"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """ "Book the van for Saturday March 14 then" after "move day is Saturday March 7":
        a plan adjusted, and only one live value it can adjust (`policies.extract.rivals`)."""
        if " → " in st.text or not marks_adjustment(st.text, st.change):
            return False  # a choice among options is settled by `policies.extract.choices`
        pool = [
            it for it in ctx.user_items()
            if it.type != "directive" and not plays_other_role(st, it)
            and not different_subjects(st.text, it.value)
        ]  # fmt: skip
        found = sole_rival_pair(st.text, asserted_values(st), pool)
        if found is None or found[0].value == st.text:
            return False
        ctx.supersede(found[0], st, st.text, st.type, pair=found[1])
        return True


SOLE_RIVAL = SoleRival()
