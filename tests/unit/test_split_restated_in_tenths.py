"""A split restated whole, in tenths or percent: "报价三成、方案七成" after "报价占40%，
方案占60%", "price 30%, service plan 70%" after "price 40% and the plan 60%".

- Tenths named after what they weigh ("技术六成、报价四成来") are shares, as after
  a verb ("首付三成"); not when 一成 runs on into a word ("一成不变", "统一成").
- Every share of the old split is replaced, not just the first; a single other
  percent ("a 10% discount") leaves the split alone.
"""

from __future__ import annotations

from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def _shares(text: str) -> list[float | None]:
    return [v.number for v in extract_values(text) if v.kind == "percent"]


def test_tenths_named_after_their_part_are_shares() -> None:
    assert _shares("评分按技术六成、报价四成来。") == [60.0, 40.0]
    assert _shares("预算里人工占两成，材料八成。") == [20.0, 80.0]


def test_tenths_running_into_a_word_are_no_shares() -> None:
    assert _shares("一成不变的流程。") == []
    assert _shares("统一成一个模板。") == []
    assert _shares("万一成了呢？") == []


def test_zh_split_restated_in_tenths_replaces_every_share() -> None:
    values = active_values(
        [
            "你好，我们小区业委会在搞保洁外包的招标。",
            "打分办法我们定的是报价占40%，保洁方案占60%。",
            "打分就按报价三成、方案七成来，大家都觉得方案更要紧。",
        ]
    )
    assert not any("40%" in v or "60%" in v for v in values)
    assert any("三成" in v for v in values)


def test_en_split_restated_replaces_every_share() -> None:
    values = active_values(
        [
            "Hi, our residents' committee is tendering the cleaning contract.",
            "For scoring, price counts for 40% and the service plan for 60%.",
            "Let's score it price 30%, service plan 70%, everyone said service matters most.",
        ]
    )
    assert not any("40%" in v or "60%" in v for v in values)


def test_single_other_percent_leaves_the_split() -> None:
    values = active_values(
        [
            "Hi, our residents' committee is tendering the cleaning contract.",
            "For scoring, price counts for 40% and the service plan for 60%. "
            "A 5% discount applies to local firms.",
            "Local firms get a 10% discount instead.",
        ]
    )
    assert any("60%" in v for v in values)
