"""The same kind of value, a different number, the same subject: no cue needed."""

from __future__ import annotations

from policies.extract.linking.context import LinkContext
from policies.extract.linking.duplicate import DUPLICATE
from policies.extract.linking.same_measure import (
    estimate_settled,
    same_floor,
    same_rate,
    same_threshold_rule,
    settled_pair,
    shares_split,
)
from policies.extract.linking.thresholds import IMPLICIT_MIN
from policies.extract.recount import recounted_pair, sole_count
from policies.extract.revision import (
    plays_other_role,
    renamed_title,
    same_named_slot,
    value_clause_shared,
)
from policies.extract.statements import Statement
from policies.language.values import Value, extract_values
from policies.memory.slots import different_subjects, local_context_match, value_change
from policies.types import RULE_TYPES, MemoryItem


class Implicit:
    """The same kind of value, a different number, the same subject: no cue needed."""

    name = "implicit"
    phrase = "same measure"

    def link(self, ctx: LinkContext, st: Statement) -> bool:
        if not st.strong_values:
            return ctx.run(DUPLICATE, st)
        # A plain fact does not silently rewrite a rule that quotes a value
        # ("timestamps must be UTC, like 2024-05-01T13:05:00Z").
        pool = [
            it
            for it in ctx.user_items()
            if value_change(st.strong_values, extract_values(it.value), precise=True)[0]
            # A floor is often put as the case it is met in ("出到两百九我就签"): a
            # condition that is the rule itself, not another role of the amount.
            and (not plays_other_role(st, it) or same_floor(st, it))
            and (
                st.type in RULE_TYPES
                or it.type not in RULE_TYPES
                or same_threshold_rule(st, it)  # "we can go to $14,500 max" is a cap too
                or same_rate(st, it)  # "get a gig symmetrical" revises "we need 500 Mbps"
                or same_floor(st, it)  # "给到一百八我就租，再低不谈" after "底价185"
                or estimate_settled(st, it)  # "最后确认14个队" after "大概16支队"
                # A plan stated as a wish ("opening night Friday March 13") is re-set by a
                # plain new value next to the same words ("with March 20 as opening night").
                or (it.type == "preference" and local_context_match(st.text, it.value))
            )
        ]
        # The only cap (or floor) on the same measure: "最多10万元吧" after "预算不超过8万元"
        # needs no shared word. With two such rules live, the words must decide.
        # So does the only other rate of the same sort ("一周更五条" after "每周发3篇").
        thresholds = [it for it in pool if same_threshold_rule(st, it)]
        rates = [it for it in pool if same_rate(st, it) or same_floor(st, it)]
        splits = [it for it in pool if shares_split(st, it)]
        sole = (
            thresholds if len(thresholds) == 1
            else rates if len(rates) == 1
            else splits if len(splits) == 1
            else []
        )  # fmt: skip
        recount = _sole_recount(ctx, st)
        if recount is not None and not sole:
            # A head count told again as the whole group: no shared word needed.
            ctx.supersede(recount[0], st, st.text, st.type, pair=recount[1])
            return True
        target, _ = (sole[0], 1.0) if sole else ctx.targets.best(st, pool, False)
        if target is None:
            return ctx.run(DUPLICATE, st)
        # The value bonus got it chosen; the words alone must still say it is
        # the same subject, and the numbers must be of a comparable size.
        _, closeness = value_change(st.strong_values, extract_values(target.value))
        same_subject = (
            (
                ctx.targets.lexical(st, target) >= IMPLICIT_MIN
                or local_context_match(st.text, target.value)
            )
            and (st.change > 0 or value_clause_shared(st, target))
        ) or (
            estimate_settled(st, target)
            or same_named_slot(st, target)
            or same_threshold_rule(st, target)
            or same_rate(st, target)
            or same_floor(st, target)
            or shares_split(st, target)
            or renamed_title(st.strong_values, extract_values(target.value))
        )
        if not same_subject or closeness <= 0 or different_subjects(st.text, target.value):
            return ctx.run(DUPLICATE, st)
        ctx.supersede(target, st, st.text, st.type, pair=settled_pair(st, target))
        return True


IMPLICIT = Implicit()


def _sole_recount(ctx: LinkContext, st: Statement) -> tuple[MemoryItem, tuple[Value, Value]] | None:
    """The item a recount of people replaces (`policies.extract.recount`)."""
    item = sole_count(ctx.user_items(), exclude=st.text)
    if item is None or plays_other_role(st, item) or different_subjects(st.text, item.value):
        return None
    pair = recounted_pair(st.text, st.strong_values, item.value)
    return (item, pair) if pair is not None else None
