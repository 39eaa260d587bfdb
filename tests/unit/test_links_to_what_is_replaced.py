"""A revision names what it replaces only when the new value replaces it.

- A limit stated as a rule ("控制在两页以内", "keep it to two pages") is a change
  only of an earlier value of its kind; beside a fact about the same subject that
  holds no such value ("我的论文是去年写的") it is a new rule, and the fact stays.
- A correction that quotes the old value ("系统里记的4500不对…4500是上个月的",
  "the sheet says $950 … $950 was last year's rate") revises the item holding
  that value; when none holds it, it revises no other item merely because that
  one holds a number too.
"""

from __future__ import annotations

from tests.unit.extraction_support import active_values

_PARKING_FIX = "停车费那笔不对，系统里记的850，是我记错了，停车费今年涨到920了，850是去年的价钱。"


def test_zh_limit_rule_keeps_a_fact_about_the_same_subject() -> None:
    fact = "我的论文是去年写的，结构有点乱。"
    values = active_values([fact, "有一点很重要：论文摘要一定要控制在两百字，评委没耐心看长的。"])
    assert fact in values
    assert any("两百字" in v for v in values)


def test_en_limit_rule_keeps_a_fact_about_the_same_subject() -> None:
    fact = "The cover letter I have now was written in 2019 for a bank job."
    values = active_values([fact, "Hard requirement: keep it to one page, recruiters skim."])
    assert fact in values
    assert any("one page" in v for v in values)


def test_zh_limit_rule_still_revises_an_earlier_limit() -> None:
    values = active_values(["摘要控制在三百字以内。", "摘要还是控制在两百字吧。"])
    assert not any("三百字" in v for v in values)


def test_en_limit_rule_still_revises_an_earlier_limit() -> None:
    values = active_values(
        ["Keep the summary to 300 words.", "Actually, keep the summary to 200 words."]
    )
    assert not any("300 words" in v for v in values)


def test_zh_quoted_old_value_held_by_no_item_revises_no_other_number() -> None:
    fact = "周末两天一共卖了580，本子上记着呢。"
    values = active_values([fact, _PARKING_FIX])
    assert fact in values
    assert _PARKING_FIX in values


def test_en_quoted_old_value_held_by_no_item_revises_no_other_number() -> None:
    fact = "Saturday's stall took in $1,150 in total, it's in my notebook."
    values = active_values(
        [
            fact,
            "The insurance line is wrong, I misremembered: the sheet says $1,580, but the "
            "renewal went up to $1,720; $1,580 was last year's rate.",
        ]
    )
    assert fact in values


def test_zh_quoted_old_value_held_by_an_item_is_revised() -> None:
    values = active_values(["停车费每个月850。", _PARKING_FIX])
    assert "停车费每个月850。" not in values
    assert _PARKING_FIX in values


# -- a new value sharing only a person's name with an item -------------------------


def test_en_new_value_sharing_only_a_name_keeps_the_item_about_the_person() -> None:
    about = "Our treasurer is Priya Nair, she has kept the club's books for about fifteen years."
    values = active_values(
        [about, "Priya wants to cut the tea break to fifteen minutes so we finish sooner."]
    )
    assert about in values


def test_zh_new_value_sharing_only_a_name_keeps_the_item_about_the_person() -> None:
    about = "我们的教练是周教练，他在俱乐部带了差不多十年。"
    values = active_values([about, "周教练想把热身缩短到十分钟，这样能多练一会儿。"])
    assert about in values


def test_en_new_value_for_what_the_person_holds_still_revises() -> None:
    values = active_values(
        [
            "Priya's budget report gets 20 minutes at the meeting.",
            "Change of plan: Priya's budget report gets 10 minutes.",
        ]
    )
    assert "Priya's budget report gets 20 minutes at the meeting." not in values


def test_zh_quoted_old_value_held_in_other_words_is_revised() -> None:
    # "不用每天喂了" quotes 每天, which the item holds inside a daily amount ("每天两粒").
    first = "兽医说要喂益生菌，每天两粒，拌在猫粮里。"
    values = active_values([first, "兽医又说，益生菌改成隔天一次，每次还是两粒，不用每天喂了。"])
    assert first not in values
