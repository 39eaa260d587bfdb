"""A group of people counted under another name is still a headcount: in Chinese,
"64个孩子", "三十名学员" and "12位嘉宾" count people like "64人" (as "64 kids" and
"71 students" already do in English), so a new count of the group revises the old
one whatever it is called. And a count a question takes as the case ("With 71
students, do we need another section?") is kept like any other premise; one put up
to weigh ("…would the hall fit?", "…的话") is not. Our own sentences, and
look-alikes that must not trigger."""

from __future__ import annotations

from policies.extract.statements import read_statements
from policies.language.matching import key_terms
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values

_SYSTEM_ZH = "你是少儿编程培训班的助理，帮忙排课、招生和算预算。"
_SYSTEM_EN = "You help a youth robotics club with enrollment, rooms and budgets."


def _headcount(text: str) -> list[tuple[str, float | None]]:
    return [(v.unit, v.number) for v in extract_values(text) if v.kind == "qty"]


def test_zh_people_nouns_count_as_a_headcount() -> None:
    assert _headcount("这期一共报了三十名学员。") == [("人", 30.0)]
    assert _headcount("周六来了12位嘉宾") == [("人", 12.0)]
    assert _headcount("夏令营有45个小朋友") == [("人", 45.0)]


def test_zh_people_noun_look_alikes_are_no_headcount() -> None:
    # an ordinal, a ratio, and a noun with no number
    assert ("人", 3.0) not in _headcount("第3个学员坐前排")
    assert ("人", 8.0) not in _headcount("每8个孩子配一个老师")
    assert _headcount("孩子们都很喜欢这个老师") == []


def test_zh_new_count_of_the_group_under_another_name_revises_it() -> None:
    values = active_values(
        ["这期编程班一共有三十名学员，教室在二楼。", "报名又多了几个，现在是36个孩子了。"],
        _SYSTEM_ZH,
    )
    assert any("36个孩子" in v for v in values)
    assert not any("三十名学员" in v for v in values)


def test_zh_count_of_another_thing_does_not_revise_the_headcount() -> None:
    values = active_values(["这期编程班一共有三十名学员。", "我们买了36套机器人套件。"], _SYSTEM_ZH)
    assert any("三十名学员" in v for v in values)


def _kept(message: str, system: str) -> list[str]:
    return [st.text for st in read_statements(message, key_terms(system), opening=False)]


def test_count_taken_as_the_case_in_a_question_is_kept_en() -> None:
    kept = _kept("With 38 members signed up, should we book the bigger lab?", _SYSTEM_EN)
    assert any("38 members" in t for t in kept)


def test_count_taken_as_the_case_in_a_question_is_kept_zh() -> None:
    kept = _kept("有了42个学员，周六的教室还够用吗？", _SYSTEM_ZH)
    assert any("42个学员" in t for t in kept)


def test_count_put_up_to_weigh_is_not_kept() -> None:
    assert not any(
        "38" in t for t in _kept("With 38 members, would the small lab still work?", _SYSTEM_EN)
    )
    assert not any(
        "38" in t
        for t in _kept("With 38 members, what if we split them into two rooms?", _SYSTEM_EN)
    )
    assert not any("42" in t for t in _kept("有42个学员的话，教室还够用吗？", _SYSTEM_ZH))


def test_en_recount_in_a_with_premise_revises_the_old_count() -> None:
    values = active_values(
        [
            "Our spring cohort has 30 members and we meet in room B.",
            "With 36 kids signed up, do we need a second coach?",
        ],
        _SYSTEM_EN,
    )
    assert any("36 kids" in v for v in values)
    assert not any("30 members" in v for v in values)
