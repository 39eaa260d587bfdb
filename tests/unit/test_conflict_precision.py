"""When a new statement contradicts a standing rule, and when it only seems to.

A contradiction that does not say it replaces the rule keeps both and puts
the old one up for confirmation ("pending"); the model is then told the user
may have changed it. That is only right for real contradictions. Sentences
that share a word or a kind of value with a rule without reversing it must
leave the rule as it is: a reminder of the same rule, an addition to it, the
other side agreeing to it, a negation about something else, a price of
another thing. And the reverse: asking for exactly what a rule forbade, as
what will do now, replaces it. Our own sentences, zh and en.
"""

from __future__ import annotations

from policies.extract.contradiction import contradicts, reverses, settles
from policies.language.values import extract_values
from policies.memory.reducer import active_items
from policies.types import MemoryItem
from tests.unit.extraction_support import fold_messages

SYSTEM_EN = "You are an assistant that helps a small team plan events and write notices."
SYSTEM_ZH = "你是一个帮小团队筹备活动、写通知的助手。"
OPEN_EN = "Hi, I'm planning our company's spring retreat and need help keeping track of it."
OPEN_ZH = "你好，我在筹备公司春季团建，想请你帮我记着各种安排。"


def fold(*user_turns: str, zh: bool = False) -> list[MemoryItem]:
    messages: list[tuple[str, str]] = []
    for text in (OPEN_ZH if zh else OPEN_EN, *user_turns):
        messages += [("user", text), ("assistant", "好的。" if zh else "Got it.")]
    items, _ = fold_messages(messages, SYSTEM_ZH if zh else SYSTEM_EN)
    return items


def status_of(items: list[MemoryItem], phrase: str) -> str:
    (item,) = [it for it in items if phrase in it.value and it.status != "superseded"] or [
        it for it in items if phrase in it.value
    ]
    return item.status


def live(items: list[MemoryItem], phrase: str) -> bool:
    return any(phrase in it.value for it in active_items(items))


# --- not contradictions: the rule stays as it was ------------------------------------


def test_a_reminder_of_the_same_rule_is_no_conflict() -> None:
    items = fold(
        "Every session room must have step-free access, two of our staff use wheelchairs.",
        "Quick reminder on access: step-free entry for every room, don't let the venue "
        "talk us into the upstairs studio.",
    )
    assert status_of(items, "Every session room must have step-free access") == "active"
    zh = fold(
        "所有餐食都不能放花生，有同事严重过敏。",
        "再强调一下花生的事：菜单上所有菜都要确认没花生，甜点也一样。",
        zh=True,
    )
    assert status_of(zh, "所有餐食都不能放花生") == "active"


def test_an_addition_to_a_rule_is_no_conflict() -> None:
    zh = fold(
        "第一，大巴只能走高速，医生说晕车的同事一点山路都不能走。",
        "通知里再加一句，写重一点：大巴除了高速，服务区也只停指定的两个，谁要求都不行。",
        zh=True,
    )
    assert status_of(zh, "大巴只能走高速") == "active"
    en = fold(
        "The shuttle must never leave before everyone is checked in.",
        "Also add a line to the notice: the shuttle driver waits at the north gate, not the lobby.",
    )
    assert status_of(en, "The shuttle must never leave") == "active"


def test_the_other_side_agreeing_is_no_conflict() -> None:
    items = fold(
        "On the room rate: we want it capped at $140 a night, no matter what.",
        "Dana just phoned: they accept our numbers on the room rate and on the deposit, "
        "including the cap on late fees, plus the early check-in.",
    )
    assert status_of(items, "we want it capped at $140") == "active"


def test_a_negation_about_something_else_is_no_conflict() -> None:
    items = fold(
        "Every table needs a vegetarian option on it.",
        "For the tables, each one gets a vegetarian option, and don't let the caterer "
        "skimp on the bread.",
    )
    assert status_of(items, "Every table needs a vegetarian option") == "active"


def test_a_price_of_another_thing_far_off_is_no_conflict() -> None:
    cap = "Max hall rent is $4,000, that's what our budget sheet says and I trust it."
    fee = "The hall contract says projectors under 5 years old, $40/day projector rent."
    items = fold(cap, fee)
    assert status_of(items, "Max hall rent is $4,000") == "active"
    assert not contradicts(fee, tuple(extract_values(fee)), cap)
    # the same measure at a comparable size is another value for it
    raise_it = "The contract says the hall rent is $4,600 now."
    assert contradicts(raise_it, tuple(extract_values(raise_it)), cap)


def test_a_comment_with_a_shared_word_is_no_conflict() -> None:
    zh = fold(
        "城西那家保洁公司绝对不行，别让他们来报价。",
        "半年够看出一家保洁公司行不行了，合同签久了出问题更麻烦。",
        zh=True,
    )
    assert status_of(zh, "城西那家保洁公司绝对不行") == "active"


def test_a_table_of_data_is_not_the_table_format() -> None:
    items = fold(
        "What matters to me: no more than four bullets on a slide, ever.",
        "Basically: every attendee record lives in a versioned table in our CRM, with a "
        "diet column, and a naming convention like team__name.",
    )
    assert status_of(items, "no more than four bullets") == "active"


# --- real contradictions ---------------------------------------------------------------


def test_the_opposite_tone_from_now_on_waits_for_confirmation() -> None:
    items = fold(
        "Ground rules for anything sent to staff: keep it strictly formal, full sentences, "
        "no emoji.",
        "Let's loosen up the staff notices from now on, friendly and chatty is the vibe.",
    )
    assert status_of(items, "keep it strictly formal") == "pending"
    assert live(items, "friendly and chatty")


def test_asking_for_what_a_rule_forbade_as_what_will_do_replaces_it() -> None:
    zh = fold(
        "以后跟我说场地的时候，都写场地的全称，不要写简称。",
        "场地以后写简称就行，后面括号里附上能坐多少人，老板记不住全称。",
        zh=True,
    )
    assert status_of(zh, "不要写简称") == "superseded"
    assert live(zh, "场地以后写简称就行")
    en = fold(
        "In the schedule, write times in 24-hour format, don't use am or pm.",
        "Use am and pm in the schedule, that's fine, people here read it more easily.",
    )
    assert status_of(en, "don't use am or pm") == "superseded"


def test_a_narrower_permission_does_not_reverse_a_ban() -> None:
    ban = "Don't book any external vendors for the retreat, we do everything in-house."
    permission = "You can book a photographer for the retreat now, that's fine."
    assert not reverses(permission, ban)
    assert not settles(permission, ban)
    items = fold(ban, permission)
    assert status_of(items, "Don't book any external vendors") in ("pending", "active")


def test_a_rule_dropped_as_not_helping_is_revoked() -> None:
    items = fold(
        "Close each reply with a brief list of open questions I should answer.",
        "Honestly the lists of open questions aren't helping, I never read them.",
    )
    assert status_of(items, "Close each reply with a brief list") == "revoked"
    zh = fold(
        "每次回复最后都附一个待办清单。",
        "那个待办清单没什么用，我从来不看。",
        zh=True,
    )
    assert status_of(zh, "每次回复最后都附一个待办清单") == "revoked"


# --- the rule a later sentence acts on ---------------------------------------------------


def test_an_amount_denied_as_a_cap_names_the_item_holding_it() -> None:
    items = fold(
        "Max spend on the venue is $1,800, that's what the board signed off on.",
        "Quick update: the board found more money, forget $1,800 as the max, we can go "
        "up to $2,100 if we have to.",
    )
    assert status_of(items, "Max spend on the venue is $1,800") == "superseded"
    assert live(items, "up to $2,100")
    # a denied amount no item holds changes nothing
    other = fold(
        "Max spend on the venue is $1,800, that's what the board signed off on.",
        "Forget $900 as the catering max, we'll see what the menu costs.",
    )
    assert status_of(other, "Max spend on the venue is $1,800") == "active"


def test_asking_for_something_for_all_of_them_is_a_rule() -> None:
    items = fold(
        "你推荐的酒店都给我附上官网链接，方便我自己看。",
        "酒店的官网链接不用附了，我都收藏好了。",
        zh=True,
    )
    assert status_of(items, "都给我附上官网链接") == "revoked"
    # what others did for the speaker is no rule
    told = fold("同事们都给我写了卡片，挺感动的。", zh=True)
    assert not any(it.type == "directive" for it in told if "卡片" in it.value)
