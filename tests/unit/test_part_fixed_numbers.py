"""A number or ID fixed mid-sentence by restating only its end ("sorry, 0392 at the end",
"不对，尾号是5687") or restating it whole after a bare "哦不": the item keeps the full
corrected number, and the number taken back is not shown."""

from __future__ import annotations

from policies.language.segment import drop_retracted, self_fixed
from tests.unit.extraction_support import active_values as _active


def test_fix_of_the_trailing_digits_rewrites_the_number() -> None:
    assert (
        drop_retracted("The locksmith's number is 415-555-0293, sorry, 0392 at the end.")
        == "The locksmith's number is 415-555-0392."
    )
    assert (
        drop_retracted("My locker code is 7720-1486, no wait, the last four are 1468, oddly.")
        == "My locker code is 7720-1468, oddly."
    )
    assert (
        drop_retracted("房东电话是139 8765 4321，不对，尾号是4312。") == "房东电话是139 8765 4312。"
    )
    assert (
        drop_retracted("快递柜取件码是820417，说错了，后两位是71，今天要取。")
        == "快递柜取件码是820471，今天要取。"
    )
    assert self_fixed("The locksmith's number is 415-555-0293, sorry, 0392 at the end.")
    assert self_fixed("房东电话是139 8765 4321，不对，尾号是4312。")


def test_whole_restatement_after_a_bare_oh_no() -> None:
    assert drop_retracted("退货单号是R-55810，哦不，是R-55801。") == "退货单号是R-55801。"
    assert self_fixed("退货单号是R-55810，哦不，是R-55801。")


def test_look_alikes_are_left_alone() -> None:
    # "at the end of" names a place, not the end of the number.
    text = "Seat 40217, sorry, 12 at the end of the row."
    assert drop_retracted(text) == text
    # A count is no number to patch digit by digit.
    assert not self_fixed("We have 3 dogs, sorry, the last one is 5.")
    # "哦不错" is praise, not a correction.
    assert not self_fixed("哦不错，这家店人均是120元。")
    # All the digits restated "at the end": the whole number, without the phrase.
    assert drop_retracted("PIN 4821, sorry, 4812 at the end.") == "PIN 4812."


def test_part_fixed_phone_is_kept_whole() -> None:
    active = _active(
        [
            "I'm putting together a contact sheet for the school play.",
            "The costume lady is Priya, her number is 212-555-0186, sorry, 0168 at the end.",
        ]
    )
    held = [v for v in active if "Priya" in v]
    assert held
    assert "212-555-0168" in drop_retracted(held[0])
    assert "0186" not in drop_retracted(held[0])
