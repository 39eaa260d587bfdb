"""Relative changes to counts of a list, each named by its label ("一等奖再加一个，
二等奖减两个" after "一等奖3个、二等奖10个"), and a shift of the plan's date when the
date was only called "the date" ("日期定在…" then "体检往后推一周"). Our own
sentences; look-alikes that must leave memory alone."""

from __future__ import annotations

from tests.unit.extraction_support import active_values


def _after(lines: list[str]) -> str:
    return "\n".join(active_values(lines))


def test_several_labelled_changes_in_one_sentence_zh() -> None:
    out = _after(["年会奖品准备了一等奖3个、二等奖10个、三等奖20个。",
                  "奖品再调一下，一等奖再加一个，二等奖减两个，三等奖不变。"])  # fmt: skip
    assert "一等奖4个" in out
    assert "二等奖8个" in out
    assert "三等奖20个" in out
    assert "一等奖3个" not in out
    assert "二等奖10个" not in out


def test_one_labelled_change_zh() -> None:
    out = _after(["摊位分配：美食区12个、文创区8个。", "文创区的再加两个。"])
    assert "文创区10个" in out
    assert "文创区8个" not in out
    assert "美食区12个" in out


def test_several_named_changes_in_one_sentence_en() -> None:
    out = _after(["For the airport run we need 6 vans and 9 drivers.",
                  "Two more vans and one fewer driver."])  # fmt: skip
    assert "8 vans" in out
    assert "8 drivers" in out
    assert "6 vans" not in out
    assert "9 drivers" not in out


def test_several_changes_naming_nothing_change_nothing() -> None:
    # Which count each change is for cannot be told: nothing is applied.
    out = _after(["我们点了8个菜、3个汤。", "再加两个，再减一个。"])
    assert "8个菜" in out
    assert "3个汤" in out
    out = _after(
        ["For the airport run we need 6 vans and 9 drivers.", "Add two, and one fewer too."]
    )
    assert "6 vans and 9 drivers" in out


def test_two_changes_to_one_count_change_nothing() -> None:
    out = _after(["摊位分配：美食区12个、文创区8个。", "美食区加两个，美食区再减一个。"])
    assert "美食区12个" in out


def test_shift_of_the_plan_date_named_only_as_the_date_zh() -> None:
    out = _after(["日期定在11月8日（周五）下午。", "主管说那周要封版，答辩往后推两天。"])
    assert "11月10日" in out
    assert "11月8日" not in out


def test_shift_of_the_plan_date_named_only_as_the_date_en() -> None:
    out = _after(["The date is March 3, doors at 6pm.", "Push the fundraiser back a week."])
    assert "March 10" in out
    assert "March 3" not in out


def test_shift_of_another_event_leaves_the_date() -> None:
    out = _after(["The date is March 3, doors at 6pm.",
                  "My dentist appointment got pushed back a week."])  # fmt: skip
    assert "March 3" in out
    out = _after(["日期定在11月8日（周五）下午。", "我妈的体检往后推了两天，她说医院排不开。"])
    assert "11月8日" in out
