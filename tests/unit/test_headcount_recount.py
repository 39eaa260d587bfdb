"""A head count told again as the whole group now, in another wording and with no
change cue ("报名收齐了，54人" after "全校大概50人"; "we're at 33 people in total now"
after "about 30 people"), replaces the old count; a part of the group, a per-unit
count, another group, a story, or two live counts leave it alone (zh + en)."""

from __future__ import annotations

from policies.extract.recount import recount_replacements, recounted_pair, sole_count, whole_counts
from policies.language.values import extract_values
from policies.types import MemoryItem, Supersede
from tests.unit.extraction_support import active_values as _active


def _recount(old: str, new: str) -> bool:
    return recounted_pair(new, extract_values(new), old) is not None


def test_zh_guessed_count_replaced_by_the_collected_count() -> None:
    active = _active(
        [
            "我在筹备读书会的春季郊游，全会大概50人，想找个近一点的农家乐。",
            "午饭要有素菜。",
            "报名今天截止了，一共54人。",
        ]
    )
    assert any("54人" in v for v in active)
    assert not any("50人" in v for v in active)


def test_zh_whole_count_replaced_inside_a_request() -> None:
    active = _active(
        [
            "帮我给小店排一下值班表，现在店员一共4个人。",
            "每个人一周休两天。",
            "下个月招的收银员月初到岗，到时候5个人的班表你帮我重新排一下。",
        ]
    )
    assert any("5个人" in v for v in active)
    assert not any("一共4个人" in v for v in active)


def test_en_estimate_replaced_by_the_count_now() -> None:
    active = _active(
        [
            "I'm planning my dad's retirement lunch, roughly 30 people.",
            "He doesn't like loud music.",
            "The RSVPs are in, we're at 33 people in total now.",
        ]
    )
    assert any("33 people" in v for v in active)
    assert not any("30 people" in v for v in active)


def test_parts_units_and_stories_are_no_recount() -> None:
    old_zh = "全会大概50人。"
    # A part of the group, a per-unit count, a numbered batch.
    assert not _recount(old_zh, "其中现在有12人是开车来的。")
    assert not _recount(old_zh, "现在每桌10人。")
    assert not _recount(old_zh, "第一批现在报了20人。")
    # A story of another time.
    assert not _recount(old_zh, "去年一共来了40人。")
    # No whole marker on the new count: it may be anyone.
    assert not _recount(old_zh, "有8人要坐大巴。")
    old_en = "We'll be about 30 people."
    assert not _recount(old_en, "Now 12 of them are vegetarian.")
    assert not _recount(old_en, "We now seat 6 people per table.")
    assert not _recount(old_en, "Last year we had 40 people in total.")
    # A part count is no whole count to replace either.
    assert not whole_counts("其中12人是外地的。")
    assert whole_counts("全公司大概120人。")


def test_zh_other_group_does_not_replace() -> None:
    # A department counted after the whole company: another, much smaller group.
    assert not _recount("全公司大概120人。", "销售部现在一共30人。")
    assert not _recount("We'll be about 120 people.", "The sales team is 30 people in total.")


def _user_item(id_: str, value: str) -> MemoryItem:
    return MemoryItem(id=id_, type="fact", value=value, source="user", source_ordinal=1, slot="")


def test_two_live_counts_leave_both() -> None:
    # Two whole counts live (the company, one department): a new one names neither.
    two = [_user_item("a", "全公司大概120人，年会包场。"), _user_item("b", "销售部一共30人。")]
    assert sole_count(two) is None
    ops = recount_replacements("到时候125人的座位图你帮我排一下。", two, [], 3, lambda: "n")
    assert not ops.ops
    one = two[:1]
    ops = recount_replacements("到时候125人的座位图你帮我排一下。", one, [], 3, lambda: "n")
    assert [op.old_id for op in ops.ops if isinstance(op, Supersede)] == ["a"]
    # A question asks, it tells no count.
    assert not recount_replacements("到时候125人够坐吗？", one, [], 3, lambda: "n").ops


def test_en_subgroup_look_alike() -> None:
    active = _active(
        [
            "We're hosting a potluck for the choir, about 40 guests.",
            "Now 12 of them are vegetarian, so label the dishes.",
        ]
    )
    assert any("40 guests" in v for v in active)
