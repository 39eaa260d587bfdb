"""The least the user will take, re-set as the case it is met in ("买家要是给到两百一我就卖，
再低就免谈", "If they offer 290, I'll sign, anything lower and I walk") replaces the
floor said before ("底价220万", "floor price is $300k"), its 万 or thousands often
dropped once the scale is known. Our own sentences, and look-alikes that must not
trigger: an offer merely considered, and another sale's price."""

from __future__ import annotations

from policies.language.values import extract_values, numeric_closeness
from tests.unit.extraction_support import active_values

_ZH = "你帮我卖临街的商铺，出主意、算账、写材料。"
_EN = "You help me sell my condo: pricing, paperwork, negotiation."
_ZH_BEFORE = ["商铺挂牌价230万。", "底价定在220万，低于这个数不卖。", "中介说有个买家很有诚意。"]
_EN_BEFORE = [
    "We listed at $315k.",
    "My floor price is $300k, I won't go under that.",
    "The agent says a buyer is keen.",
]


def test_amount_offered_without_its_scale_is_read_in_the_scale_before() -> None:
    offered = extract_values("买家要是给到两百一我就卖")
    assert [(v.kind, v.number) for v in offered] == [("money", 210.0)]
    floor = extract_values("底价220万")[0]
    assert numeric_closeness(offered[0], floor) == 1.0
    # a bare amount far from any scale stays as it is
    assert numeric_closeness(extract_values("他开价九")[0], floor) == 0.0


def test_floor_reset_as_a_condition_replaces_the_old_floor_zh() -> None:
    values = active_values([*_ZH_BEFORE, "买家要是给到两百一我就卖，再低就免谈。"], _ZH)
    assert any("两百一" in v for v in values)
    assert not any("220万" in v for v in values)
    assert any("230万" in v for v in values)


def test_floor_reset_as_a_condition_replaces_the_old_floor_en() -> None:
    values = active_values(
        [*_EN_BEFORE, "If they offer 290, I'll sign, anything lower and I walk."], _EN
    )
    assert any("290" in v for v in values)
    assert not any("$300k" in v for v in values)


def test_offer_only_considered_keeps_the_floor() -> None:
    values = active_values([*_ZH_BEFORE, "买家要是给到两百一，我再考虑考虑。"], _ZH)
    assert any("220万" in v for v in values)
    values = active_values([*_EN_BEFORE, "If they offer 290, I'll think about it."], _EN)
    assert any("$300k" in v for v in values)


def test_another_sale_price_keeps_the_floor() -> None:
    values = active_values([*_ZH_BEFORE[:2], "中介说隔壁那间上个月卖了两百一。"], _ZH)
    assert any("220万" in v for v in values)


def test_what_bounded_the_old_amount_goes_with_it() -> None:
    # "低于这个不卖" / "I won't go under that" only spoke of the old floor
    values = active_values([*_ZH_BEFORE, "买家要是给到两百一我就卖，再低就免谈。"], _ZH)
    assert not any(v.startswith("低于这个") for v in values)
    values = active_values(
        [*_EN_BEFORE, "If they offer 290, I'll sign, anything lower and I walk."], _EN
    )
    assert not any("go under that" in v for v in values)
