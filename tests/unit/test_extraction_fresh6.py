"""Phenomena of the fresh6 probe, with sentences of our own (zh and en): values
revised in words that share neither wording nor unit with the old ones."""

from __future__ import annotations

import pytest

from policies.cues import recap_request
from policies.segment import drop_retracted
from policies.values import extract_values
from tests.unit.extraction_support import active_values

SYSTEM_EN = "You are an assistant for someone organising a community event."
SYSTEM_ZH = "你是帮用户筹备活动的助手。"


def numbers(text: str) -> list[tuple[str, float | None]]:
    return [(v.kind, v.number) for v in extract_values(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("一共要六十三份", ("qty", 63.0)),
        ("每桌八百五以内", ("bound", 850.0)),  # spoken short form: 八百五 is 850
        ("每人两千五封顶", ("bound", 2500.0)),
        ("押金一百零八块", ("money", 108.0)),  # 零: the digit stays a unit
        ("场租四万五左右", ("money", 45000.0)),
        ("经费按1.2万来算吧", ("money", 12000.0)),
        ("人数调到六百吧", ("number", 600.0)),
    ],
)
def test_zh_amounts_in_spoken_numerals(text: str, expected: tuple[str, float]) -> None:
    assert expected in numbers(text)


@pytest.mark.parametrize(
    "text",
    [
        "千万别迟到",
        "万一下雨怎么办",
        "十分感谢",
        "我们十二月出发",
        "二十多个人报了名",
        "一下子就满了",
    ],
)
def test_zh_words_made_of_numerals_are_no_numbers(text: str) -> None:
    assert not any(kind in ("number", "money", "bound") for kind, _ in numbers(text))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We expect seventy-two runners", ("qty", 72.0)),
        ("we're up to eighty-one volunteers", ("qty", 81.0)),
        ("Book nineteen rooms", ("qty", 19.0)),
    ],
)
def test_en_compound_number_words(text: str, expected: tuple[str, float]) -> None:
    assert expected in numbers(text)


@pytest.mark.parametrize(
    ("text", "mbps"),
    [
        ("The plan has to give us at least 300 Mbps down.", 300.0),
        ("Ask them for 2 Gbps on the office line.", 2000.0),
        ("Let's get a gig symmetrical for the studio.", 1000.0),
        ("we'd take one gig fibre if it's cheap", 1000.0),
    ],
)
def test_connection_speeds_are_one_measure(text: str, mbps: float) -> None:
    rates = [v for v in extract_values(text) if v.unit.endswith("mbps")]
    assert [v.number for v in rates] == [mbps]


@pytest.mark.parametrize(
    "text", ["We have a gig at the pub on Friday.", "She played two gigs this weekend."]
)
def test_a_music_gig_is_no_speed(text: str) -> None:
    assert not any(v.unit.endswith("mbps") for v in extract_values(text))


def test_a_grouped_national_phone_number_is_one_id_and_its_fix_reads_clean() -> None:
    text = "The caterer's number is 0398 221 764 — sorry, 0398 212 764, I always flip them."
    assert [v.text for v in extract_values(text) if v.kind == "id"] == [
        "0398 221 764",
        "0398 212 764",
    ]
    assert drop_retracted(text) == ("The caterer's number is 0398 212 764, I always flip them.")


def test_a_value_span_holds_no_trailing_space() -> None:
    text = "The hall fee is $420 — no wait, $240."
    first = extract_values(text)[0]
    assert text[first.start : first.end] == "$420"


@pytest.mark.parametrize(
    "text",
    [
        "另外有个要求：你给我的所有方案和清单都用表格，方便我转发。",
        "还有一条：你帮我的所有整理都写成三段以内。",
    ],
)
def test_zh_a_rule_about_everything_you_give_me_is_no_recap(text: str) -> None:
    assert not recap_request(text)


def test_zh_a_recap_request_is_still_one() -> None:
    assert recap_request("请你把我们定下来的所有事项整理成清单给我。")


def test_a_fix_inside_one_message_revises_nothing_said_before() -> None:
    active = active_values(
        [
            "I'm organising the street party for our block.",
            "The council gave us $1,500 for the whole thing.",
            "The DJ wants a deposit of $250 — no wait, $205, I misread the invoice.",
        ],
        SYSTEM_EN,
    )
    assert any("$1,500" in v for v in active)
    assert any("$205" in v for v in active)


def test_zh_a_fix_inside_one_message_revises_nothing_said_before() -> None:
    active = active_values(
        [
            "我在筹备小区的中秋游园会。",
            "街道给了我们8000元经费。",
            "舞狮队要付定金600元——不对，是650元，我看错了。",
        ],
        SYSTEM_ZH,
    )
    assert any("8000元" in v for v in active)
    assert any("650元" in v for v in active)
