"""A new choice on the same subject, without a value or a change cue."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.linking.thresholds import CHOICE_MIN
from policies.extract.statements import Statement
from policies.language.cues import DECISION, negated
from policies.language.matching import key_terms
from policies.language.values import extract_values
from policies.memory.slots import comparable


class Choice:
    """A new choice on the same subject, without a value or a change cue."""

    name = "choice"
    phrase = "new choice on the same subject"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        """A new choice on the same subject, without a value or a change cue:
        "The lowers are going navy." after "I'm thinking sage green lowers",
        "还是让她上公立小学" after "我们想让她上国际学校"."""
        if (
            st.strong_values
            or st.type not in ("preference", "fact")
            or not DECISION.search(st.text)
        ):
            return False
        pool = [
            it for it in ctx.user_items(frozenset({"preference", "fact", "goal"}))
            if not comparable(extract_values(it.value)) and DECISION.search(it.value)
        ]  # fmt: skip
        target, _ = ctx.targets.best(st, pool, with_message=False)
        if target is None or ctx.targets.lexical(st, target) < CHOICE_MIN:
            return False
        new, old = key_terms(st.text), key_terms(target.value)
        if not (new - old) or not (old - new) or negated(st.text) != negated(target.value):
            return False
        ctx.supersede(target, st, st.text, st.type)
        return True


CHOICE = Choice()
