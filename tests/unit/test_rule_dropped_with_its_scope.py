"""A rule dropped together with the scope it was set for: "scrap the formal tone for
supplier emails", "ditch the bullet points for the weekly report". The scope after
"for" names where the rule applied; it does not make the sentence a new plan.
Look-alikes: "drop" in its literal senses ("drop the kids at school for the
morning", "drop the samples for the tasting at noon") is no revocation.
A drop that names its object ("ditch the bullet points") revokes a rule holding it,
never the latest rule by default as a bare "scratch that" does.
"""

from __future__ import annotations

from policies.language.cues import read_cues
from tests.unit.extraction_support import active_values

_FORMAL = "For any emails to suppliers, draft them in a formal tone, we want to look serious."


def test_en_rule_dropped_with_its_scope_is_revoked() -> None:
    values = active_values(
        [
            _FORMAL,
            "Okay, but first: ditch the formal tone for supplier emails. Marco is an old "
            "friend. Keep them relaxed and brief.",
        ]
    )
    assert _FORMAL not in values
    assert any("relaxed and brief" in v for v in values)


def test_en_scoped_drop_is_a_revocation_cue() -> None:
    assert read_cues("Scrap the bullet points for the weekly report.").revoke_span is not None
    assert read_cues("Drop the formal register for client emails, please.").revoke_span


def test_en_literal_drop_with_for_is_no_revocation_cue() -> None:
    assert read_cues("Drop the kids at school for the morning.").revoke_span is None
    assert read_cues("We'll drop the samples for the tasting at noon.").revoke_span is None


def test_en_scoped_drop_of_another_rule_keeps_this_one() -> None:
    values = active_values([_FORMAL, "Ditch the bullet points for the weekly report."])
    assert _FORMAL in values


def test_zh_rule_dropped_with_its_scope_is_revoked() -> None:
    rule = "以后给供应商写邮件都用正式的语气。"
    values = active_values(
        [rule, "先说一件事：给供应商的邮件不用那么正式了，老周是熟人，随意点、短一点就行。"]
    )
    assert rule not in values


def test_en_drop_naming_something_else_is_not_the_latest_rule() -> None:
    # The cue names what goes ("the bullet points"); the latest rule does not hold it.
    assert _FORMAL in active_values([_FORMAL, "Ditch the bullet points."])


def test_en_scratch_that_still_means_the_latest_rule() -> None:
    assert _FORMAL not in active_values([_FORMAL, "Scratch that."])


def test_zh_cue_naming_its_object_is_not_the_latest_rule() -> None:
    # "别用表格了" names tables; the latest rule (a closing summary line) does not hold it.
    rule = "以后每次回答最后都用一句话总结。"
    assert rule in active_values(["你好，我在帮家里做直播卖土蜂蜜。", rule, "以后别用表格了。"])
