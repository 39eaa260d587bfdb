"""Ruling an option out ("海边的不考虑", "the Algarve is ruled out") and saying who pays
("家属要来的话费用自理", "partners join at their own expense") are rules of the plan,
often given while turning a suggestion down. Past habits and suggestions are not."""

from __future__ import annotations

import pytest

from policies.language.cues import read_cues
from tests.unit.extraction_support import active_values

_TRIP = "你是一名旅行规划助手。"


@pytest.mark.parametrize(
    "rule",
    [
        "海边的城市也不考虑，太晒了，孩子容易过敏。",
        "民宿一律不予考虑。",
        "包车不在考虑范围内。",
        "The Algarve is ruled out, too crowded in May.",
        "We've ruled out anything with a layover.",
        "We're not considering cruises at all.",
    ],
)
def test_ruling_an_option_out_is_a_constraint(rule: str) -> None:
    assert read_cues(rule).constraint >= 3
    lines = active_values(["我们全家五一想去云南玩五天。", rule], _TRIP)
    assert rule in lines


@pytest.mark.parametrize(
    "rule",
    [
        "家属要来的话费用自理，按团购价就行。",
        "门票大家各自出钱，公司只管大巴。",
        "Partners can join at their own expense.",
        "Anyone upgrading their room pays for their own upgrade.",
    ],
)
def test_who_pays_is_a_constraint(rule: str) -> None:
    assert read_cues(rule).constraint >= 3
    lines = active_values(["我们部门年底聚餐，大概20人。", rule])
    assert rule in lines


@pytest.mark.parametrize(
    "text",
    [
        "要不考虑一下民宿？",  # a suggestion, asked
        "我以前不考虑这些细节。",  # a past habit
        "我上次自费去了趟日本，玩得很开心。",  # a story
        "We can't rule out rain in May, right?",
        "She paid out of pocket back then.",
    ],
)
def test_look_alikes_set_no_rule(text: str) -> None:
    lines = active_values(["我们全家五一想去云南玩五天。", text], _TRIP)
    assert text not in lines
