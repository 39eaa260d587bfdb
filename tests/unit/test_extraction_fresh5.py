"""Phenomena of the fresh5 probe, with sentences of our own (zh and en)."""

from __future__ import annotations

from policies.slots import named_slot
from policies.values import extract_values
from tests.unit.extraction_support import active_values

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
