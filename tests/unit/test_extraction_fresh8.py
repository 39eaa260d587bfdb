"""Phenomena of the fresh8 probe, with sentences of our own (zh and en): someone
else's wish set aside by the user, and a value fixed across a sentence break."""

from __future__ import annotations

import pytest

from policies.extract.statements import read_statements
from tests.unit.extraction_support import active_values

SYSTEM_EN = "You are an assistant for a small business owner."
SYSTEM_ZH = "你是帮用户打理家事和小生意的助手。"


def texts(message: str) -> list[str]:
    return [st.text for st in read_statements(message, set(), False)]


@pytest.mark.parametrize(
    ("message", "wish"),
    [
        (
            "Our landlord, Mr. Abbott, wants us to repaint the shop green. That's his idea; "
            "we haven't agreed.",
            "repaint",
        ),
        (
            "My business partner thinks we should open on Sundays. It's not decided, and "
            "honestly it's not his call.",
            "Sundays",
        ),
        (
            "The investor, Carla, would like a launch party with press. That's her wish, "
            "I'm not sold.",
            "launch party",
        ),
        ("我爸说店里要换成红色招牌，他觉得喜庆。这个他说了不算，我还没想好。", "红色招牌"),
        ("其实我婆婆一直想让我们搬去郊区住，说空气好。不过那是她的想法，我们不考虑。", "郊区"),
    ],
)
def test_someone_elses_wish_set_aside_is_not_kept(message: str, wish: str) -> None:
    assert not [t for t in texts(message) if wish in t]


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        # The user's own decision beside a disclaimer about someone else stays.
        ("We'll open at 9 on weekdays. My partner wants 8, but that's his idea.", "open at 9"),
        # "not decided" about the user's own plan: no third party's wish to drop.
        ("The shop opens at 9 on weekdays. The weekend hours are not decided yet.", "opens at 9"),
        ("店里每周一休息。我妈想让我们周二也休息，那是她的想法。", "每周一休息"),
        # A named person's requirement with no disclaimer stays.
        ("我爸说周日下午要留给家里吃饭，这个你排的时候避开。", "周日下午"),
    ],
)
def test_own_rules_beside_a_disclaimer_stay(message: str, kept: str) -> None:
    assert [t for t in texts(message) if kept in t]


def test_a_wish_set_aside_does_not_revise_the_users_value() -> None:
    values = active_values(
        [
            "Room hire is $400 a night for the whole house, up to 12 guests.",
            "My aunt says we should charge $600 at New Year, she thinks everyone does. "
            "That's her idea, it's not decided.",
        ],
        SYSTEM_EN,
    )
    assert any("$400" in v for v in values)
    assert not any("$600" in v for v in values)


def test_zh_a_wish_set_aside_does_not_revise_the_users_value() -> None:
    values = active_values(
        [
            "整栋包场一晚按每人150算，最多12个人。",
            "我老公说国庆要涨到一晚一千二。这个他说了不算，我还没想好。",
        ],
        SYSTEM_ZH,
    )
    assert any("每人150" in v for v in values)
    assert not any("一千二" in v for v in values)


@pytest.mark.parametrize(
    "message",
    [
        "The account number is 55120348 — no wait, that's the old one; the current one is "
        "55120384.",
        "快递单号是SF1234567——不对，那是上个月的；这次的那个是SF7654321。",
    ],
)
def test_a_fix_after_the_break_stays_with_its_sentence(message: str) -> None:
    kept = texts(message)
    assert len(kept) == 1
    assert kept[0].rstrip("。.")[-7:] == message.rstrip("。.")[-7:]


def test_a_fix_after_the_break_revises_nothing_earlier() -> None:
    values = active_values(
        [
            "We host the quiz on Thursdays, capped at 40 players.",
            "The venue booking ref is 7730215 — no wait, that's last year's; this year's one "
            "is 7730512.",
        ],
        SYSTEM_EN,
    )
    assert any("40 players" in v for v in values)
    assert any("7730512" in v for v in values)


@pytest.mark.parametrize(
    "message",
    [
        "说起来我小时候从来没上过补习班，放学就在弄堂里跳皮筋，现在的小孩真是什么都要学。",
        "说到骑车，我自己也是二十五岁才学会的，到现在还只敢骑直线。",
        "我们小时候暑假从来不补课，天天在河边玩。",
        "When I was a kid we never had screens at dinner, and I turned out fine.",
        "Growing up, we never ate out on weeknights.",
        "When I was little my grandma never let us skip breakfast.",
    ],
)
def test_the_speakers_own_past_told_as_a_story_is_not_a_rule(message: str) -> None:
    assert texts(message) == []


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        # A story that turns to the assistant, or draws the task's consequence, binds.
        ("我小时候最怕打针，你写的时候一定别提针头。", "别提针头"),
        ("说到游泳，我自己也不会，所以行程里一定不能有下水的项目。", "不能有下水"),
        ("我小时候学过五年钢琴，所以营里有琴房的优先。", "琴房"),
        (
            "Back in my day nobody used slides; please keep the deck to ten slides anyway.",
            "ten slides",
        ),
        # "说到X" on its own opens a topic, not a story.
        ("说到预算，我们最多只能出五千。", "五千"),
    ],
)
def test_a_story_that_turns_to_the_task_still_binds(message: str, kept: str) -> None:
    assert [t for t in texts(message) if kept in t]
