"""A value corrected mid-sentence (an ID, code, phone number, time; zh and en):
kept, shown with the corrected value only, ranked like a concrete fact."""

from __future__ import annotations

from policies.language.segment import drop_retracted, self_fixed
from policies.memory.reducer import render_item
from policies.memory.scoring import ScoringParams, score_item
from policies.types import MemoryItem
from tests.unit.extraction_support import active_values as _active


def test_self_fixed_codes_phone_numbers_and_times() -> None:
    assert self_fixed("The invoice prefix is INV-OLD — scratch that, INV-NEW.")
    assert self_fixed("My VAT number is 19-5537201 — sorry, no, 19-5573201.")
    assert self_fixed("Call me on 07700 900123, I mean 07700 900132.")
    assert self_fixed("快递单号SF12345，说错了，是SF12354。")
    assert self_fixed("门禁密码是4721，应该是4712。")
    assert self_fixed("周日上午10点到下午4点，哦不对，周日只开到中午12点。")
    assert not self_fixed("We need 3 rooms, sorry I mean the big ones.")
    assert not self_fixed("The budget is 500, I mean roughly, maybe less.")


def test_display_keeps_only_the_corrected_value() -> None:
    assert (
        drop_retracted("My VAT number is 19-5537201 — sorry, no, 19-5573201, they look alike.")
        == "My VAT number is 19-5573201, they look alike."
    )
    assert drop_retracted("The invoice prefix is INV-OLD — scratch that, INV-NEW.") == (
        "The invoice prefix is INV-NEW."
    )
    assert (
        drop_retracted("仓库电话是02188371920，不对，是02188371290。") == "仓库电话是02188371290。"
    )
    assert (
        drop_retracted("周一到周五早上8点开门，周日上午10点到下午4点，哦不对，周日只开到中午12点。")
        == "周一到周五早上8点开门，周日只开到中午12点。"
    )
    # A bare number put for a count is not spliced in: the unit would be lost.
    assert drop_retracted("We have 12 laptops, no wait, 14.") == "We have 12 laptops, no wait, 14."


def test_self_fixed_statement_is_kept_and_rendered_without_the_retracted_value() -> None:
    active = _active(
        [
            "I'm organising the library's book sale.",
            "Every donated box gets a code starting with BX-ARC — sorry, no, BX-DON, for donated.",
        ]
    )
    held = [v for v in active if "BX-DON" in v]
    assert held
    item = MemoryItem(id="m1", type="fact", value=held[0], source="user", source_ordinal=2, slot="")
    line = render_item(item)
    assert "BX-DON" in line
    assert "BX-ARC" not in line


def test_self_fixed_zh_phone_is_kept() -> None:
    active = _active(
        [
            "我在帮小区组织跳蚤市场。",
            "场地联系人电话是13905551287，不对，是13905551827，我老记混。",
        ]
    )
    assert any("13905551827" in v for v in active)


def test_self_fixed_statement_ranks_like_a_concrete_fact() -> None:
    params = ScoringParams()

    def score(value: str) -> float:
        item = MemoryItem(
            id="m1",
            type="fact",
            value=value,
            source="user",
            source_ordinal=2,
            importance=0.65,
            slot="",
        )
        return score_item(item, current_ordinal=20, query_terms=(), params=params)

    fixed = score("The gate code is 4471 — wait no, 4417, the digits swap.")
    plain = score("The gate code is the usual one, the digits swap.")
    with_id = score("The ticket is REQ-55120 and it's open.")
    assert fixed > plain
    assert fixed >= with_id
