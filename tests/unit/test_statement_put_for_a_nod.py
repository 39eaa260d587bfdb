"""A statement put up for a nod ("…, right?", "…，这样对吧？") is what the user takes
to be so, kept so a later change can replace it, but not a rule they set: it
ranks with facts and never anchors the block. "If they cancel" inside it names a
case; it withdraws nothing. A standing rule asked back ("from now on…, right?")
stays a rule. Our own sentences."""

from __future__ import annotations

import pytest

from policies.extract.statements import read_statements


def only(text: str) -> tuple[str, bool]:
    (st,) = read_statements(text, set(), False)
    return st.type, st.revoke


@pytest.mark.parametrize(
    "text",
    [
        "Members can cancel a class up to 12 hours before and get the credit back, right?",
        "既然押金是入住前7天退，那客人如果要取消，提前一周说就能拿回全款，这样对吧？",
        "Refunds go back to the original card within 5 days, correct?",
    ],
)
def test_a_statement_for_a_nod_is_a_fact(text: str) -> None:
    assert only(text) == ("fact", False)


@pytest.mark.parametrize(
    "text",
    [
        "From now on you always reply in Spanish, right?",
        "以后每次报价都要含税，对吧？",
    ],
)
def test_a_standing_rule_asked_back_stays_a_rule(text: str) -> None:
    kind, _ = only(text)
    assert kind in ("directive", "constraint")


def test_a_plain_conditional_rule_is_untouched() -> None:
    kind, _ = only("如果客人要取消订单，一律全额退款。")
    assert kind in ("directive", "constraint")
