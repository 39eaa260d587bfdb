"""Phenomena of the fresh5 probe, with sentences of our own (zh and en)."""

from __future__ import annotations

from policies.language.values import extract_values
from policies.memory.slots import named_slot
from tests.unit.extraction_support import active_values, fold_messages

SYSTEM_EN = "You are an assistant for someone opening a small coffee cart."


def kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.text) for v in extract_values(text)]


def test_an_id_the_user_has_is_kept_even_said_as_i_ve_got() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "Licences first. I've got the street trading licence, number STL-48812 — no,"
            " STL-48821, I always mix those up.",
        ],
        SYSTEM_EN,
    )
    assert any("STL-48821" in v for v in active)


def test_money_set_aside_is_kept_after_a_question() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "Which espresso machine suits a cart? I've got $2,400 set aside for it.",
        ],
        SYSTEM_EN,
    )
    assert any("$2,400" in v for v in active)


def test_a_cap_written_after_the_number_with_a_comma() -> None:
    assert ("bound", "900 on it, tops") in kinds("For the grinder I can spend 900 on it, tops.")
    assert any(k == "number" and t == "3,500" for k, t in kinds("The count is 3,500 now."))


def test_an_opening_hour_without_am_or_pm() -> None:
    assert ("time", "7") in kinds("The cart opens at 7, commuters want coffee early.")
    assert not any(k == "time" for k, _ in kinds("We meet at 7 stops along the route."))


def test_money_set_aside_and_a_spending_cap_are_one_budget() -> None:
    assert named_slot("We have 800 set aside for the signage.") == "budget"
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "We have $800 set aside for the signage and the menu board.",
            "Signage: I can spend 650 on it, tops, the grinder cost more than planned.",
        ],
        SYSTEM_EN,
    )
    assert any("650" in v for v in active)
    assert not any("$800" in v and "650" not in v for v in active)


def test_withdrawing_a_named_instruction_is_remembered_as_the_new_rule() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "Always convert the recipe amounts to ounces for me.",
            "You can stop converting to ounces, the new scale shows grams.",
        ],
        SYSTEM_EN,
    )
    assert any("stop converting to ounces" in v for v in active)
    assert not any(v.startswith("Always convert") for v in active)


def test_zh_withdrawing_a_named_instruction_is_remembered() -> None:
    active = active_values(
        [
            "我在筹备一个咖啡摊，下个月在地铁站开张。",
            "你给我列采购清单的时候，每样东西都标上淘宝链接。",
            "采购清单不用标淘宝链接了，我改去批发市场买。",
        ],
        "你是一个帮人开小店的助手。",
    )
    assert any("不用标淘宝链接" in v for v in active)
    assert not any(v.startswith("你给我列采购清单的时候") for v in active)


def test_money_in_words_and_bucks() -> None:
    assert ("money", "twelve bucks") in kinds("Parking is twelve bucks a day.")
    assert ("money", "30 bucks") in kinds("The banner cost 30 bucks.")


def test_dropping_a_named_multiword_thing_from_now_on_withdraws_it() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "Always close your messages to the baristas with Stay caffeinated, Mo.",
            "You can drop the Stay caffeinated sign-off from now on. Just Mo is fine.",
        ],
        SYSTEM_EN,
    )
    assert not any(v.startswith("Always close your messages") for v in active)
    assert any("Just Mo is fine" in v for v in active)


def test_a_plan_stated_as_a_wish_is_reset_by_a_plain_new_value() -> None:
    active = active_values(
        [
            "Hi! I'm planning our choir's spring concert.",
            "We'd like the dress rehearsal on Sunday April 12 at the old chapel.",
            "The chapel is booked that day, so the flyers go out with April 19 as dress"
            " rehearsal then.",
        ],
        "You are an assistant for a volunteer choir.",
    )
    assert any("April 19" in v for v in active)
    assert not any("April 12" in v and "April 19" not in v for v in active)


def test_zh_opening_a_new_point_is_no_continuation() -> None:
    active = active_values(
        [
            "你好，我在筹备公司春游。定在4月18日周六，一共大概60人。先说个规矩：以后给我的"
            "预算都写成人均，方便我报给财务。",
        ],
        "你是一个帮HR组织活动的助手。",
    )
    assert any("4月18日" in v and "人均" not in v for v in active)
    assert any("人均" in v and "4月18日" not in v for v in active)


def test_a_value_a_question_takes_as_settled_is_kept() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "Since the tasting's on Friday the 14th now, can you draft a menu card for it?",
        ],
        SYSTEM_EN,
    )
    assert any("Friday the 14th" in v for v in active)


def test_zh_a_count_a_question_takes_as_settled_is_kept() -> None:
    active = active_values(
        ["我在筹备公司春游。", "名单已经收齐了，52人，大巴坐得下吧？"],
        "你是一个帮HR组织活动的助手。",
    )
    assert any("52人" in v for v in active)


def test_a_question_about_a_value_keeps_nothing() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "Is $4 too much for a latte?",
        ],
        SYSTEM_EN,
    )
    assert not any("$4" in v for v in active)


def test_zh_the_reason_of_a_replaced_rule_is_no_rule() -> None:
    active = active_values(
        [
            "我在筹备公司春游。",
            "以后给我的金额都写成美元，因为我要发给海外的同事，他们那边看得懂。",
            "金额别再写美元了，改成人民币，海外同事那边我自己换算。",
        ],
        "你是一个帮HR组织活动的助手。",
    )
    assert any("改成人民币" in v for v in active)
    assert not any(v.startswith(("因为", "他们那边")) for v in active)


def test_a_weekday_with_a_day_of_month_is_one_date() -> None:
    (v,) = extract_values("The count is on Saturday the 8th.")
    assert (v.kind, v.text, v.number, v.unit) == ("date", "Saturday the 8th", 8.0, "dom")


def test_a_settled_new_day_in_a_request_revises_the_old_one() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "We're doing the deep clean on Tuesday the 3rd, my cousin is helping.",
            "Good call on the descaler. Since the deep clean's on Wednesday the 4th now, can"
            " you list what to buy?",
        ],
        SYSTEM_EN,
    )
    assert any("Wednesday the 4th" in v for v in active)
    assert not any("Tuesday the 3rd" in v and "Wednesday the 4th" not in v for v in active)


def test_zh_a_value_to_be_checked_is_no_settled_premise() -> None:
    active = active_values(
        ["我在改简历。", "日期帮我核一下：现在这家公司2020年5月入职，对吗？"],
        "你是一个帮人改简历的助手。",
    )
    assert not any("2020年5月" in v for v in active)


def test_the_users_answer_to_someone_elses_wish_is_kept() -> None:
    active = active_values(
        [
            "I'm opening a coffee cart at the train station next month.",
            "My landlord really wants us to take cash only. But we take cards, the bank"
            " deposit runs are a pain. I've told him.",
        ],
        SYSTEM_EN,
    )
    assert any(v.startswith("But we take cards") for v in active)


def test_zh_the_users_answer_to_someone_elses_wish_is_kept() -> None:
    active = active_values(
        ["我在筹备一个咖啡摊。", "我表哥特别想让我们卖奶茶。但我们只做咖啡，设备就这么多。"],
        "你是一个帮人开小店的助手。",
    )
    assert any(v.startswith("但我们只做咖啡") for v in active)


def test_a_weekday_in_passing_is_not_revised_with_a_date() -> None:
    active = active_values(
        [
            "Hi, I run a Saturday pottery club for retirees.",
            "The open day is on Saturday in the church hall.",
            "The open day moves to Sunday instead.",
        ],
        "You are an assistant for a volunteer club.",
    )
    assert any("I run a Saturday pottery club" in v for v in active)
    assert any("Sunday" in v for v in active)
    assert not any(v.startswith("The open day is on Saturday") for v in active)


def test_a_floor_price_is_a_rule_even_before_a_question() -> None:
    active = active_values(
        ["我想把老家的车库卖掉。", "车库底价定在18万，低于这个数不卖。现在挂哪个平台好？"],
        "你是一个帮人处理家事的助手。",
    )
    assert any("底价定在18万" in v for v in active)


def test_zh_agent_named_after_a_comma() -> None:
    active = active_values(
        ["我想把老家的车库卖掉。", "找的是链家的一个经纪人，叫周明远，大家叫他小周。"],
        "你是一个帮人处理家事的助手。",
    )
    assert any("周明远" in v for v in active)


def test_zh_amount_in_chinese_numerals_with_wan() -> None:
    (v,) = extract_values("打算挂一百二十万。")
    assert (v.kind, v.number) == ("money", 1_200_000.0)


def test_zh_same_verb_before_two_amounts_is_one_price() -> None:
    active = active_values(
        [
            "我想把老家的车库卖掉，打算挂二十五万。",
            "中介看了周边的成交，最高的也就23万。明天让中介在网上挂22万，挂高了没人看。",
        ],
        "你是一个帮人处理家事的助手。",
    )
    assert any("挂22万" in v for v in active)
    assert not any("二十五万" in v and "22万" not in v for v in active)


def test_on_second_thought_is_not_about_a_second_option() -> None:
    chat = [
        ("user", "I'm opening a coffee cart at the train station next month."),
        ("assistant", "Two carts fit:\n1. 2019 Piaggio Ape Classic\n2. 2021 Piaggio Ape Calessino"),
        ("user", "Let's go with the second one."),
        ("assistant", "OK."),
        ("user", "On second thought let's do 36 months instead of 24 on the loan."),
        ("assistant", "OK."),
    ]
    items, _ = fold_messages(chat, SYSTEM_EN)
    active = [it.value for it in items if it.status == "active"]
    assert any("Ape Calessino" in v for v in active)
    assert any("36 months" in v for v in active)


def test_choosing_one_option_retires_the_users_note_on_another() -> None:
    chat = [
        ("user", "I'm opening a coffee cart at the train station next month."),
        ("assistant", "OK."),
        ("user", "I found a used Rancilio Silvia listed at $450, one owner."),
        ("assistant", "Two machines fit:\n1. Rancilio Silvia Pro\n2. Lelit Bianca V3"),
        ("user", "Let's go with the second one."),
        ("assistant", "OK."),
    ]
    items, _ = fold_messages(chat, SYSTEM_EN)
    active = [it.value for it in items if it.status == "active"]
    assert any("Lelit Bianca" in v for v in active)
    assert not any("Rancilio" in v for v in active)
