"""Item lines without chatter: whole clauses dropped, protected content never."""

from __future__ import annotations

from policies.assemble.compact import compact_value
from policies.assemble.item_lines import render_item_line
from policies.types import MemoryItem


def test_chatter_clauses_are_dropped_en() -> None:
    text = "The venue deposit is $450, paid by card, by the way."
    assert compact_value(text) == "The venue deposit is $450, paid by card."
    text = "We can go up to $3,200 for the sofa, and that's final, I mean it this time."
    assert compact_value(text) == "We can go up to $3,200 for the sofa, and that's final."


def test_chatter_clauses_are_dropped_zh() -> None:
    assert compact_value("装修队的负责人叫老陈，电话是139 0000 1111，你记一下。") == (
        "装修队的负责人叫老陈，电话是139 0000 1111。"
    )


def test_a_clause_taken_back_in_the_same_sentence_goes() -> None:
    text = (
        "窗帘在宜家订了，订单号IK-20931，订的是米色的——不对，我刚看了邮件，是浅灰色的，周五到货。"
    )
    assert compact_value(text) == "窗帘在宜家订了，订单号IK-20931，是浅灰色的，周五到货。"
    text = (
        "Paint is booked with Ortiz, color code SW-7008, the shade is Alabaster"
        " — no wait, they called, it's Snowbound now."
    )
    out = compact_value(text)
    assert "Snowbound" in out
    assert "SW-7008" in out
    assert "Alabaster" not in out


def test_protected_clauses_stay_whatever_they_start_with() -> None:
    # Reasons, negations, values and names are never dropped.
    text = "Keep the kitchen budget at 9,000 euros, because the boiler also needs replacing."
    assert compact_value(text) == text
    text = "灯具统一用暖光，反正客厅和卧室都不要冷白光，哈哈。"
    assert compact_value(text) == "灯具统一用暖光，反正客厅和卧室都不要冷白光。"
    assert compact_value("No pets, lol.") == "No pets, lol."  # too short to touch


def test_the_rendered_line_is_compact_the_item_is_not() -> None:
    value = "Sign every email as 'The Brightwell Team', honestly, by the way."
    it = MemoryItem("a", "directive", "sign", value, "user", 3, importance=0.85)
    line = render_item_line(it)
    assert line == "- [directive] Sign every email as 'The Brightwell Team'."
    assert it.value == value
    inferred = MemoryItem("b", "inferred", "x", value, "assistant", 4, importance=0.3)
    assert value in render_item_line(inferred)
