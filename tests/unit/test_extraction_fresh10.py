"""Phenomena of the fresh10 probe, with sentences of our own (zh and en): a handle
written right against Chinese text ("叫river_cafe"), a limit named by its count
("字数不用卡了"), a clock time moved by a clear change cue ("上传时间改成晚上9点"),
and a publishing cadence re-paced in other words ("每周发2篇" → "一周更四篇")."""

from __future__ import annotations

import pytest

from policies.extract.limits import named_limit
from policies.extract.statements import read_statements
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values

SYSTEM_ZH = "你是帮小商家做内容运营的助手。"


def ids(text: str) -> list[str]:
    return [v.text for v in extract_values(text) if v.kind == "id"]


@pytest.mark.parametrize(
    ("text", "handle"),
    [
        ("我的公众号叫river_cafe。", "river_cafe"),
        ("抖音号已经开好了，叫bake_and_co，你记一下", "bake_and_co"),
        ("群名改成tea-house-hz吧", "tea-house-hz"),
        ("My handle there is river_cafe.", "river_cafe"),
    ],
)
def test_handles_touching_chinese_text_are_identifiers(text: str, handle: str) -> None:
    assert ids(text) == [handle]


@pytest.mark.parametrize("text", ["我喜欢喝茶", "HTTP_PROXY环境变量没设", "Use a well-known name."])
def test_look_alikes_hold_no_handle(text: str) -> None:
    assert ids(text) == []


def test_account_named_in_a_later_turn_is_remembered() -> None:
    values = active_values(
        ["我在帮朋友运营一家面包店。", "还有个信息：公众号我已经开好了，叫river_cafe。"]
    )
    assert any("river_cafe" in v for v in values)


@pytest.mark.parametrize(
    ("text", "measure"),
    [("字数也不用卡了", "字"), ("不限字数了", "字"), ("行数随意", "行"), ("字数限制取消", "字")],
)
def test_a_count_names_its_limit(text: str, measure: str) -> None:
    assert named_limit(text) == measure


@pytest.mark.parametrize("text", ["数字也不用核对了", "文字不用那么华丽了", "写字楼不用去了"])
def test_words_that_merely_hold_the_character_name_no_limit(text: str) -> None:
    assert named_limit(text) is None


def test_word_count_no_longer_policed_revokes_the_cap() -> None:
    values = active_values(
        ["每篇文章不超过800字，读者没耐心。", "字数也不用卡了，写长点也行。"], SYSTEM_ZH
    )
    assert not any("800字" in v for v in values)


def test_unrelated_no_need_keeps_the_cap() -> None:
    values = active_values(["每篇文章不超过800字。", "数字也不用核对了。"], SYSTEM_ZH)
    assert any("800字" in v for v in values)


@pytest.mark.parametrize(
    ("lines", "new", "old"),
    [
        (
            ["我打算每周更新2次视频，每天早上7点发。", "上传时间改成晚上9点吧。"],
            "晚上9点",
            "早上7点",
        ),
        (["Reminders go out daily at 7am, in English.", "Change that to 9am."], "9am", "7am"),
    ],
)
def test_a_clock_time_moved_by_a_change_cue(lines: list[str], new: str, old: str) -> None:
    values = active_values(lines, SYSTEM_ZH)
    assert any(new in v for v in values)
    assert not any(old in v for v in values)


def test_the_rest_of_a_plan_stays_when_its_time_moves() -> None:
    lines = ["我打算每周更新2次视频，每天早上7点发。", "上传时间改成晚上9点吧。"]
    values = active_values(lines, SYSTEM_ZH)
    assert any("每周更新2次" in v for v in values)


def test_a_time_said_without_a_change_cue_revises_nothing() -> None:
    values = active_values(["每天早上7点发一条。", "我昨天晚上9点才下班。"], SYSTEM_ZH)
    assert any("早上7点" in v for v in values)


@pytest.mark.parametrize(
    ("text", "per_week"),
    [
        ("每周发3篇笔记", 3.0),
        ("一周更五条", 5.0),
        ("每周三篇", 3.0),
        ("每天一条", 7.0),
        ("每月出两期", 0.467),
    ],
)
def test_output_cadences_are_frequencies(text: str, per_week: float) -> None:
    freqs = [v.number for v in extract_values(text) if v.kind == "freq"]
    assert freqs
    assert freqs[0] == pytest.approx(per_week, abs=0.01)


@pytest.mark.parametrize("text", ["一周后第三条", "一周内两条都要改", "这条路每周都堵"])
def test_look_alikes_are_no_output_cadence(text: str) -> None:
    assert not [v for v in extract_values(text) if v.kind == "freq" and v.number not in (None, 1.0)]


def test_a_cadence_repaced_in_other_words_replaces_the_old_one() -> None:
    values = active_values(
        ["公众号计划每周发2篇文章，周五上午推送。", "看了数据，节奏要加快：一周更四篇。"], SYSTEM_ZH
    )
    assert any("一周更四篇" in v for v in values)
    assert not any("每周发2篇" in v for v in values)
    assert any("周五上午" in v for v in values)  # the other clause stays


def test_a_cadence_of_something_else_is_no_revision() -> None:
    values = active_values(["我每周游泳3次。", "频道打算一周更四条视频。"], SYSTEM_ZH)
    assert any("游泳3次" in v for v in values)


@pytest.mark.parametrize(
    ("text", "number"),
    [("大概会有16支队报名", 16.0), ("最后是十四个队", 14.0), ("来了12支球队", 12.0)],
)
def test_teams_are_counted_whatever_the_measure_word(text: str, number: float) -> None:
    assert ("qty", "队", number) in [(v.kind, v.unit, v.number) for v in extract_values(text)]


@pytest.mark.parametrize("text", ["他在消防支队工作", "两个队员没来", "这个队的队长是谁"])
def test_team_words_without_a_count_are_no_count(text: str) -> None:
    assert not [v for v in extract_values(text) if v.unit == "队"]


@pytest.mark.parametrize(
    "message",
    [
        "报名结束了。最后确认参赛的是十个队。那赛程怎么排？",
        "RSVPs closed. We ended up with 26 guests. What should I order?",
    ],
)
def test_a_settled_count_before_a_question_is_kept(message: str) -> None:
    values = active_values(["我在筹备一场公司年会，想请你帮忙。", message], SYSTEM_ZH)
    assert any("十个队" in v or "26 guests" in v for v in values)


@pytest.mark.parametrize(
    "message", ["最后我们去吃了火锅。你觉得那家店怎么样？", "In the end it rained. What now?"]
)
def test_a_settled_story_before_a_question_is_no_memory(message: str) -> None:
    values = active_values(["我在筹备一场公司年会，想请你帮忙。", message], SYSTEM_ZH)
    assert not any("火锅" in v or "rained" in v for v in values)


def test_a_settled_count_replaces_the_guess() -> None:
    values = active_values(
        [
            "篮球联赛大概会有12支队报名，每队最多10人，每周六打。",
            "最后确认参赛的是十个队。那赛程怎么排？",
        ],
        SYSTEM_ZH,
    )
    assert any("十个队" in v for v in values)
    assert not any("12支队" in v for v in values)
    assert any("每队最多10人" in v for v in values)  # the rest of the plan stays


@pytest.mark.parametrize(
    ("lines", "kept"),
    [
        (
            ["羽毛球赛大概会有12支队报名，每队最多10人。", "我表哥他们厂去年办过一次，有十个队。"],
            "12支队",
        ),
        (
            ["We expect about 30 guests at the wedding.", "My sister had 26 guests at hers."],
            "30 guests",
        ),
    ],
)
def test_a_count_of_something_else_settles_no_guess(lines: list[str], kept: str) -> None:
    values = active_values(lines, SYSTEM_ZH)
    assert any(kept in v for v in values)


@pytest.mark.parametrize(
    "text", ["我们不做团购，也不打折。", "本店不接外卖，想吃得来店里。", "咱们一律不收定金。"]
)
def test_a_house_policy_is_a_constraint(text: str) -> None:
    assert [s.type for s in read_statements(text, "", opening=False)] == ["constraint"]


@pytest.mark.parametrize(
    "text", ["我们不做饭了，今晚出去吃。", "他们不做团购。", "我们不用担心这个。"]
)
def test_look_alikes_are_no_house_policy(text: str) -> None:
    assert not [s for s in read_statements(text, "", opening=False) if s.type == "constraint"]


@pytest.mark.parametrize(
    ("text", "unit", "number"),
    [
        ("a 7.2 kW system", "kw", 7.2),
        ("a 13.5 kWh battery", "kwh", 13.5),
        ("bump it to 6 kW.", "kw", 6.0),
    ],
)
def test_power_and_energy_are_measured(text: str, unit: str, number: float) -> None:
    assert ("qty", unit, number) in [(v.kind, v.unit, v.number) for v in extract_values(text)]


def test_a_revision_of_two_values_takes_both_clauses() -> None:
    values = active_values(
        ["民宿订了6个人，住2晚，靠海那间。", "人数改成8个人，住3晚吧。"], SYSTEM_ZH
    )
    assert any("8个人" in v for v in values)
    assert not any("住2晚" in v or "6个人" in v for v in values)
    assert any("靠海那间" in v for v in values)  # what the revision does not touch stays


def test_a_revision_of_one_value_keeps_the_other() -> None:
    values = active_values(["民宿订了6个人，住2晚，靠海那间。", "人数改成8个人吧。"], SYSTEM_ZH)
    assert any("住2晚" in v for v in values)
