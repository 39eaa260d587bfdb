"""A recurring day moved, the same word right beside the old day in one item."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.rivals import marks_adjustment
from policies.extract.statements import Statement
from policies.language.values import Value, extract_values, value_signature
from policies.memory.slots import different_subjects, same_neighbours
from policies.rulebook import Joined
from policies.types import MemoryItem

# "Hold the rehearsals on Wednesday nights then, 7 to 9": "then" closing the clause that
# decides, as a consequence of news just told (not "back then", "until then").
_CLAUSE_THEN = Joined("revision", "clause_then")


class Weekday:
    """A recurring day moved, the same word right beside the old day in one item."""

    name = "weekday"
    phrase = "recurring day moved"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """ "Hold the rehearsals on Wednesday nights then" after "…, with rehearsals on
        Sunday afternoons": a recurring day moved. A bare weekday is too vague to
        revise by its value alone ("piano on Tuesdays" beside "swimming on Thursdays"
        are two things), so it takes both a sentence that says it adjusts the plan
        and the same word right beside the old day, in exactly one item."""
        if " → " in st.text or not (
            marks_adjustment(st.text, st.change) or _CLAUSE_THEN.search(st.text)
        ):
            return False
        days = [v for v in st.strong_values if v.kind == "date" and v.number is None]
        found: list[tuple[MemoryItem, Value, Value]] = []
        for it in ctx.user_items():
            if it.value == st.text or different_subjects(st.text, it.value):
                continue
            pairs = [
                (nv, ov) for nv in days for ov in extract_values(it.value)
                if ov.kind == "date" and ov.number is None
                and value_signature(ov) != value_signature(nv)
                and same_neighbours(st.text, nv, it.value, ov)
            ]  # fmt: skip
            if pairs:
                found.append((it, *pairs[0]))
        if len(found) != 1:
            return False
        item, nv, ov = found[0]
        if any(value_signature(v) == value_signature(ov) for v in st.values):
            return False  # "Tuesday as well as Saturday": both days hold
        ctx.supersede(item, st, st.text, st.type, pair=(nv, ov))
        return True


WEEKDAY = Weekday()
