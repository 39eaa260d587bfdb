"""The user's own plan or target, stated and then put to the assistant for an opinion.

"We're planning to seat 120 in the east hall, is that too many?" asks about the
plan, but the plan is the user's: it is kept as said, as a settled premise is.
A supposition ("If we plan to…") or a question about someone else's plan is not.
"""

from __future__ import annotations

import pytest

from tests.unit.extraction_support import active_values

SYSTEM_EN = "You help a small team plan events and sales."
SYSTEM_ZH = "你是一个帮小团队筹备活动和做销售的助手。"


@pytest.mark.parametrize(
    ("opening", "message", "kept"),
    [
        (
            "We're organising a neighbourhood film night in October.",
            "We're planning to seat 120 people in the east hall, is that too many for one exit?",
            "120 people",
        ),
        (
            "I'm launching a small online shop for hand-made soap.",
            "My goal is 300 orders in the first quarter, does that sound realistic?",
            "300 orders",
        ),
        (
            "我在筹备社区的春节联欢会。",
            "联欢会我们想放在街道礼堂二楼，那边能坐150人左右，够不够？",
            "150人",
        ),
        (
            "我开了个卖茶叶的网店。",
            "我自己有个小目标：第一个季度卖到500单，你觉得现实吗？",
            "500单",
        ),
    ],
)
def test_an_own_plan_put_up_for_an_opinion_is_kept(opening: str, message: str, kept: str) -> None:
    values = active_values([opening, message], SYSTEM_ZH if "我" in opening else SYSTEM_EN)
    assert any(kept in v for v in values), values


@pytest.mark.parametrize(
    ("opening", "message", "absent"),
    [
        (
            "We're organising a neighbourhood film night in October.",
            "If we plan to seat 120 people, how many volunteers do we need?",
            "120 people",
        ),
        (
            "I'm launching a small online shop for hand-made soap.",
            "My cousin wants to sell 300 bars a month, is that crazy?",
            "300 bars",
        ),
        (
            "我在筹备社区的春节联欢会。",
            "如果我们想放在街道礼堂二楼，能坐150人的话，够不够？",
            "150人",
        ),
        (
            "我开了个卖茶叶的网店。",
            "我想问一下，一般网店第一个季度能卖500单吗？",
            "500单",
        ),
    ],
)
def test_a_supposition_or_a_question_about_numbers_is_not_a_plan(
    opening: str, message: str, absent: str
) -> None:
    values = active_values([opening, message], SYSTEM_ZH if "我" in opening else SYSTEM_EN)
    assert not any(absent in v for v in values), values
