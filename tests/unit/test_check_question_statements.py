"""A statement put up for a nod ("…, right?", "…，没问题吧？") is the user's proposal
and is kept, so a later change can replace it; a real question is not kept.
Our own sentences."""

from __future__ import annotations

import pytest

from policies.language.questions import check_question, is_question
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values

SYSTEM_EN = "You help a small business owner plan."
SYSTEM_ZH = "你是帮小店老板做规划的助手。"


@pytest.mark.parametrize(
    "text",
    [
        "Late returns cost $5 a day, that's standard, right?",
        "The deposit is 25%, correct?",
        "We close at 6 on Sundays, makes sense?",
        "预付款就收两成，没问题吧？",
        "周末我们十点开门，对吧？",
    ],
)
def test_a_statement_with_a_check_tag_is_no_question(text: str) -> None:
    assert check_question(text)
    assert not is_question(text)


@pytest.mark.parametrize(
    "text",
    [
        "Do rental shops usually charge $5 a day for late returns?",
        "Is the deposit 25%, right?",
        "What time do we close on Sundays, right?",
        "定金一般收多少，对吧？",
        "周末几点开门？",
        "Late returns cost $5 a day?",
    ],
)
def test_real_questions_stay_questions(text: str) -> None:
    assert is_question(text)


def test_a_proposal_put_as_a_check_is_replaced_later() -> None:
    values = active_values(
        [
            "I rent out bikes by the day, $30 each.",
            "Weekly rentals get one day free, that's what the other shops do, right?",
            "Switch weekly rentals to 15% off instead.",
        ],
        SYSTEM_EN,
    )
    assert any("15% off" in v for v in values)
    assert not any("one day free" in v for v in values)


def test_zh_a_proposal_put_as_a_check_is_kept() -> None:
    values = active_values(
        ["我开了家烘焙工作室，接定制蛋糕。", "预付款就收两成，没问题吧？"], SYSTEM_ZH
    )
    assert any("两成" in v for v in values)


def test_a_real_question_is_not_kept() -> None:
    values = active_values(
        ["I rent out bikes by the day, $30 each.", "Do weekly rentals usually get a day free?"],
        SYSTEM_EN,
    )
    assert not any("day free" in v for v in values)


def test_tenths_read_as_percent_only_after_a_payment_word() -> None:
    assert [v.number for v in extract_values("首付三成半") if v.kind == "percent"] == [35.0]
    assert not [v for v in extract_values("这事八成是他干的") if v.kind == "percent"]
    assert not [v for v in extract_values("任务完成三成员工到岗") if v.kind == "percent"]


def test_a_worry_about_a_fact_stays_a_question() -> None:
    # "应该没问题吧" hopes a reported fact holds: no proposal of the user's.
    assert is_question("名单上120人，场地说能坐130，应该没问题吧？")
