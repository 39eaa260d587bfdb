"""A spending standard per head is often restated without its currency once the
currency is known ("人均就二百五吧", "每人压到280", "per head is 75 now", "75 a head"):
the amount is money, and a new amount per head replaces the old one even with no
other word shared ("a conversation rarely tracks two spending standards per head").
Our own sentences, and look-alikes that must not trigger."""

from __future__ import annotations

from policies.language.values import extract_values
from tests.unit.extraction_support import active_values

_ZH = "你是公司行政助理，帮同事筹办部门聚餐和团建。"
_EN = "You help an office manager plan team dinners and offsites."


def _money(text: str) -> list[float | None]:
    return [v.number for v in extract_values(text) if v.kind == "money"]


def test_amount_per_head_without_currency_is_money() -> None:
    assert _money("那人均就二百五吧。") == [250.0]
    assert _money("每人压到280，酒水另算。") == [280.0]
    assert _money("OK, per head is 75 now.") == [75.0]
    assert _money("We trimmed it to 75 a head.") == [75.0]


def test_counts_per_head_are_no_money() -> None:
    assert _money("每人2个粽子，每人一份菜单") == []
    assert _money("人均3次打卡") == []
    assert _money("per head 2 drink tickets") == []


def test_new_amount_per_head_replaces_the_old_zh() -> None:
    values = active_values(
        ["聚餐预算人均300块，含包间。", "乐队报价5000块。", "人多了标准得降，那每人就二百五吧。"],
        _ZH,
    )
    assert any("二百五" in v for v in values)
    assert not any("人均300块" in v for v in values)
    assert any("5000块" in v for v in values)


def test_new_amount_per_head_replaces_the_old_en() -> None:
    values = active_values(
        [
            "Dinner budget is $90 per head, room included.",
            "The band quoted $1,200.",
            "Headcount went up, so we trim: 75 a head, I'll tell the restaurant.",
        ],
        _EN,
    )
    assert any("75 a head" in v for v in values)
    assert not any("$90 per head" in v for v in values)
    assert any("$1,200" in v for v in values)


def test_other_amount_does_not_replace_the_amount_per_head() -> None:
    values = active_values(["聚餐预算人均300块，含包间。", "乐队那边砍到4000块了。"], _ZH)
    assert any("人均300块" in v for v in values)
    values = active_values(
        ["Dinner budget is $90 per head, room included.", "The band came down to $1,000."], _EN
    )
    assert any("$90 per head" in v for v in values)


def test_item_prices_each_are_no_standard_per_head() -> None:
    values = active_values(
        ["The team T-shirts are $15 each from the print shop.", "Mugs come to $8 each."], _EN
    )
    assert any("$15 each" in v for v in values)
