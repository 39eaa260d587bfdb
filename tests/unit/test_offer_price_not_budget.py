"""A price someone puts on a thing for sale is no revision of the user's own amount.

"A guy at work is selling his road bike for $600" says what that bike costs; it
leaves "I'm budgeting $1,500 for the bike stuff" as it was (and is kept as a fact of
its own). The user changing their own amount still revises it.
"""

from __future__ import annotations

from policies.language.value_roles import is_offer_price
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def _offers(text: str) -> list[bool]:
    return [is_offer_price(text, v) for v in extract_values(text) if v.kind == "money"]


def test_offer_price_is_read() -> None:
    assert _offers("My cousin is selling her old piano for $900.") == [True]
    assert _offers("The garage quoted me $450 for the brakes.") == [True]
    assert _offers("楼下那家店的二手洗衣机卖800元。") == [True]
    assert _offers("闲鱼上有人挂了一台投影仪，要价1500块。") == [True]
    # Spending words are the user's own amount.
    assert _offers("We'll spend $900 on the piano instead.") == [False]
    assert _offers("洗衣机预算改成800元。") == [False]


def test_offer_leaves_the_budget() -> None:
    en = active_values(
        [
            "I've put aside $2,000 for the piano lessons and gear.",
            "My cousin is selling her old piano for $900.",
        ]
    )
    assert "I've put aside $2,000 for the piano lessons and gear." in en
    assert "My cousin is selling her old piano for $900." in en
    zh = active_values(["洗衣机的预算是3000元。", "楼下那家店的二手洗衣机卖800元。"])
    assert "洗衣机的预算是3000元。" in zh
    assert "楼下那家店的二手洗衣机卖800元。" in zh


def test_model_number_beside_an_offer_is_no_amount() -> None:
    values = active_values(
        [
            "I've set aside $1,200 total for the camera kit.",
            "A lady at the fair was selling a Canon 550 with two lenses, barely used, at $300.",
        ]
    )
    assert "I've set aside $1,200 total for the camera kit." in values


def test_own_amount_still_revises() -> None:
    en = active_values(
        ["I'm budgeting $2,000 for the piano stuff.", "We'll spend $900 on the piano instead."]
    )
    assert en == ["We'll spend $900 on the piano instead."]
    zh = active_values(["洗衣机的预算是3000元。", "洗衣机预算改成800元。"])
    assert zh == ["洗衣机预算改成800元。"]
    # A price first heard as an offer is updated by a later plain price.
    later = active_values(
        ["My cousin is selling her old piano for $900.", "She dropped the piano price to $800."]
    )
    assert later == ["She dropped the piano price to $800."]
