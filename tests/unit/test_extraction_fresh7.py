"""Phenomena of the fresh7 probe, with sentences of our own (zh and en): contact
details, rules withdrawn in new words, and standing rules about every reply."""

from __future__ import annotations

import pytest

from policies.extract.choices import answered_list, chosen_option, list_options
from policies.extract.statements import read_statements
from policies.language.cues import read_cues
from policies.language.segment import drop_retracted
from policies.language.values import contact_details, extract_values
from tests.unit.extraction_support import active_values

SYSTEM_EN = "You are an assistant for a small business owner."
SYSTEM_ZH = "你是帮用户打理家事和小生意的助手。"


def ids(text: str) -> list[str]:
    return [v.text for v in extract_values(text) if v.kind == "id"]


@pytest.mark.parametrize(
    ("text", "phone"),
    [
        ("物业小刘的手机是186 2231 0597，有事找他。", "186 2231 0597"),
        ("送水师傅电话139-0871-4426", "139-0871-4426"),
        ("诊所座机021-6688 1200，早上八点开门。", "021-6688 1200"),
        ("前台电话是0755-26601234", "0755-26601234"),
    ],
)
def test_zh_grouped_phone_numbers_are_one_id(text: str, phone: str) -> None:
    assert ids(text) == [phone]
    assert contact_details(text)


@pytest.mark.parametrize(
    "text",
    [
        "这批货一共138 0571 3箱",  # groups too short for a phone
        "2023 1234 5678",
        "订单 138 0571 22645",  # a group too long
        "我们卖了150件，还剩2000件。",
    ],
)
def test_zh_number_groups_that_are_no_phone(text: str) -> None:
    assert ids(text) == []
    assert not contact_details(text)


def test_zh_a_mobile_fixed_mid_sentence_reads_clean() -> None:
    text = "房东的电话是137 2280 9165——不对，是137 2280 9156，我老是记反。"
    assert drop_retracted(text) == "房东的电话是137 2280 9156，我老是记反。"


@pytest.mark.parametrize(
    "message",
    [
        "Their accountant is Hollis Grant, 0161 496 0732, call him before the 5th.",
        "Their venue manager is Dana Yeo, dana.yeo@example.org, she handles deliveries.",
    ],
)
def test_contact_details_of_another_party_are_kept(message: str) -> None:
    kept = read_statements(message, set(), False)
    assert [st.type for st in kept] == ["entity"]


@pytest.mark.parametrize(
    "message",
    [
        "Their offer is to cut the fee if we sign this week.",
        "They said the delivery slot might move to Thursday.",
    ],
)
def test_another_partys_position_without_contact_details_is_still_left_out(message: str) -> None:
    assert read_statements(message, set(), False) == []


def test_a_contact_number_in_its_own_sentence_is_kept() -> None:
    active = active_values(
        ["我在给我妈找个钟点工。", "找到了一个李阿姨，做事挺细的。她手机是152 3318 0946。"],
        SYSTEM_ZH,
    )
    assert any("152 3318 0946" in v for v in active)


@pytest.mark.parametrize(
    "text",
    [
        "You can stop with the emojis, the client found them childish.",
        "Please quit it with the disclaimers.",
        "Lay off the jargon from here.",
    ],
)
def test_stop_with_the_x_revokes(text: str) -> None:
    assert read_cues(text).revoke_span is not None


@pytest.mark.parametrize(
    "text", ["I'll stop with my sister on the way.", "We stayed with the Parkers last year."]
)
def test_with_after_stop_alone_revokes_nothing(text: str) -> None:
    assert read_cues(text).revoke_span is None


def test_stop_with_the_x_withdraws_the_rule() -> None:
    active = active_values(
        [
            "I'm writing product blurbs for our candle shop.",
            "Always add a hashtag line under each blurb.",
            "You can stop with the hashtags, we left Instagram.",
        ],
        SYSTEM_EN,
    )
    assert not any(v.startswith("Always add a hashtag") for v in active)
    assert any("stop with the hashtags" in v for v in active)


@pytest.mark.parametrize(
    "text",
    [
        "你每条回复开头先给我列个要点吧。",
        "每次回答最后附上一句英文翻译。",
        "每封邮件结尾都帮我加上店铺地址。",
    ],
)
def test_zh_a_rule_for_every_reply_is_a_directive(text: str) -> None:
    kept = read_statements(text, set(), False)
    assert [st.type for st in kept] == ["directive"]


@pytest.mark.parametrize("text", ["我每次回复邮件都拖到晚上。", "他每条消息都发语音，真烦。"])
def test_zh_someones_habit_with_every_message_is_no_directive(text: str) -> None:
    assert all(st.type != "directive" for st in read_statements(text, set(), False))


def test_zh_withdrawing_a_rule_for_every_reply_is_what_holds_now() -> None:
    active = active_values(
        [
            "我在准备搬家。",
            "你每条回复开头先给我列个要点吧，我在路上只能扫一眼。",
            "开头那几个要点不用了，我现在有空，整段看得过来。",
        ],
        SYSTEM_ZH,
    )
    assert not any(v.startswith("你每条回复开头") for v in active)
    assert any("要点不用了" in v for v in active)


@pytest.mark.parametrize(
    ("text", "count"),
    [("一共23个小朋友报了名", 23.0), ("班里有8个小组", 8.0)],
)
def test_zh_a_count_of_children_is_a_quantity(text: str, count: float) -> None:
    assert ("qty", count) in [(v.kind, v.number) for v in extract_values(text)]


def test_zh_three_hours_is_no_count_of_things() -> None:
    assert all(v.unit != "个" for v in extract_values("开车要3个小时"))


@pytest.mark.parametrize(
    "message",
    [
        "今天又有两家说要来，一共18户了。",
        "Yesterday two more parents signed up, that brings us to 26 kids.",
        "This morning three more replied, 41 volunteers in total.",
    ],
)
def test_a_running_total_inside_a_story_is_kept(message: str) -> None:
    assert [st.type for st in read_statements(message, set(), False)] == ["fact"]


@pytest.mark.parametrize(
    "message", ["今天跑了10公里，累死了。", "Yesterday I went to 3 shops and bought nothing."]
)
def test_a_story_with_a_number_but_no_total_is_still_left_out(message: str) -> None:
    assert read_statements(message, set(), False) == []


def test_zh_a_running_total_revises_the_count() -> None:
    active = active_values(
        [
            "我在张罗女儿的毕业聚会。",
            "打算请她班上的20个同学。",
            "今天又有几个家长说要来，一共24个同学了。",
        ],
        SYSTEM_ZH,
    )
    assert not any("20个同学" in v for v in active)
    assert any("24个同学" in v for v in active)


_VENUES = (
    "Three rooms could work:\n\n"
    "1. The library: quiet, wood panels, but only 40 seats.\n"
    "2. The glasshouse: bright, full of plants, gets hot in the afternoon.\n"
    "3. The cellar bar: exposed brick, candles, right next to the kitchen."
)
_TIPS = (
    "On your pricing question, a few thoughts:\n\n"
    "1. Raise rates for new clients only.\n"
    "2. Bundle prints into the top package.\n"
    "3. Send the new rate card to your regulars first."
)


def test_a_choice_goes_to_the_list_its_reasons_speak_of() -> None:
    reply = "Let's do the last one. Brick and candlelight, and it's close to the kitchen."
    assert answered_list([_TIPS, _VENUES], reply) == _VENUES


@pytest.mark.parametrize(
    "reply", ["Let's do the last one.", "The last one, I think it's fair to the regulars."]
)
def test_a_choice_without_matching_reasons_stays_with_the_newest_list(reply: str) -> None:
    assert answered_list([_TIPS, _VENUES], reply) == _TIPS


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Let's go with the middle one.", "The glasshouse"),
        ("中间那个吧，采光好。", "The glasshouse"),
        ("the first one", "The library"),
    ],
)
def test_a_choice_of_the_middle_option(reply: str, expected: str) -> None:
    assert chosen_option(reply, list_options(_VENUES)) == expected


def test_no_middle_in_an_even_list() -> None:
    assert chosen_option("the middle one", ["A", "B", "C", "D"]) is None


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("那就按9月20号开业来准备吧，宣传的文案你帮我写一下。", "9月20号"),
        ("场地那就定300人的大厅吧，你帮我列个布置清单。", "300人"),
        ("Let's set the launch for May 3rd, and write me the invite.", "May 3rd"),
    ],
)
def test_a_decision_beside_a_request_is_kept(message: str, kept: str) -> None:
    assert any(kept in st.text for st in read_statements(message, set(), False))


@pytest.mark.parametrize(
    "message",
    [
        "帮我算一下，50个人要多少钱。",
        "你帮我查查6月20号那天的天气。",
        "Can you tell me what $40 a head buys?",
    ],
)
def test_a_request_about_a_value_is_still_no_decision(message: str) -> None:
    assert read_statements(message, set(), False) == []


def test_zh_a_decision_beside_a_request_revises_the_date() -> None:
    active = active_values(
        [
            "我在筹备小店开业。",
            "开业打算定在9月13号。",
            "装修那边拖了，那就按9月20号开业来准备吧，宣传的文案你帮我写一下。",
        ],
        SYSTEM_ZH,
    )
    assert not any("9月13号" in v for v in active)
    assert any("9月20号" in v for v in active)
