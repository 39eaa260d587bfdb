"""A change the speaker only fears ("不要勾调剂，怕调到护理", "in case they move us to
the late slot") decides nothing, so a new rule on the same subject does not replace
an older one; and how a group is split ("分三批" → "分四批", "in three batches" →
"four batches") is a count that a later split replaces."""

from __future__ import annotations

from policies.language.cues import read_cues
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def test_feared_change_is_no_change_cue() -> None:
    assert read_cues("这几个专业组不要勾调剂，怕调到护理专业。").change == 0
    assert read_cues("Book the hall early in case they move us to the late slot.").change == 0
    # "恐怕" is "I'm afraid that…": the change it announces is real
    assert read_cues("恐怕要改到周五了。").change >= 2
    assert read_cues("Move the rehearsal to Friday.").change >= 2


def test_new_rule_beside_a_feared_change_keeps_the_older_rule() -> None:
    first = "宿舍楼里，东区和南区都可以，北区不要，他嫌远。"
    second = "南区的那几栋楼不要选一楼，怕被换到北区，他说宁可晚点入住。"
    lines = active_values([first, second])
    assert first in lines
    assert second in lines


def test_split_into_batches_is_a_count() -> None:
    assert [(v.kind, v.unit) for v in extract_values("分三批，每批间隔半小时")] == [("qty", "批")]
    assert ("qty", "batch") in [
        (v.kind, v.unit) for v in extract_values("We'll go in three batches.")
    ]
    # an ordinal batch is no count
    assert not extract_values("第一批下周到。")


def test_new_split_replaces_the_old_one() -> None:
    lines = active_values(
        ["签到从8点开始，分三批入场，每批间隔20分钟。",
         "入场那块改一下，人太多了，那就分五批吧，每批不超过30人。"]
    )  # fmt: skip
    out = "\n".join(lines)
    assert "分五批" in out
    assert "分三批" not in out
    assert "20分钟" in out  # what the split did not change still holds
