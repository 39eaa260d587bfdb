"""What the speaker says about their own telling ("just a reminder", "I always mix
up those digits", "我老是把后两位记反") holds no requirement: an item's line drops
it, while the value, the rule and any clause with digits stay. Our own sentences."""

from __future__ import annotations

import pytest

from policies.assemble.compact import compact_value, core_value


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        (
            "The venue code is QX-4471 — no wait, QX-4417, I always mix up those digits.",
            "mix up",
            "QX-4417",
        ),
        ("Her mobile is 0455 120 978, I keep swapping the last two.", "swapping", "0455 120 978"),
        ("The plumber quoted $840 for the boiler, I misread my notes earlier.", "misread", "$840"),
        (
            "Quick reminder, the stroller thing: every path has to be step-free, no exceptions.",
            "reminder",
            "step-free",
        ),
        ("仓库门禁码是58213，不对，是58231，我老是把后两位记反。", "记反", "58231"),
        ("场地合同编号是HT-2209-17，我刚才抄错了一位。", "抄错", "HT-2209-17"),
        ("再强调一下，所有海报都不能出现酒精饮料，这是赞助方的硬性要求。", "强调", "不能出现酒精"),
    ],
)
def test_the_speakers_aside_leaves_the_line(text: str, gone: str, kept: str) -> None:
    for short in (compact_value(text), core_value(text)):
        assert gone not in short
        assert kept in short


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # A rule that reads like an admission: it says what to do, keep it.
        (
            "Always swap the two columns when you export the sheet, the bank wants it that way.",
            "Always swap the two columns",
        ),
        # An admission with digits of its own is a value, not an aside.
        ("The gate code is 7712, I wrote 7721 on the fridge by mistake.", "7721"),
        # The reminder names the topic of the rule: the topic stays.
        ("提醒一下报名费的事：每人收80元，学生半价。", "报名费"),
        ("我老是搞混这两个供应商，所以以后每次都写全称。", "每次都写全称"),
    ],
)
def test_look_alikes_keep_their_clauses(text: str, kept: str) -> None:
    assert kept in compact_value(text)
