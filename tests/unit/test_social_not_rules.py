"""Social conversation is not a list of standing rules.

Between friends, rule words mostly do something else: "must" guesses ("that
must be frustrating"), "never"/"no" tell an experience or a set phrase ("never
been to Lisbon", "no regrets"), "can't" voices a feeling ("can't wait"),
"whenever I…"/"always…" describe the speaker's habits, "don't forget…" and
"keep going" cheer the listener on, "we need…" gives a view on society, "it
made me think…" reports a thought, and a shared photo is described in
brackets. None of these may take a rule's room in the working-memory block.

Each family is checked with our own zh + en sentences, next to look-alike
requirements that must keep their rule type.
"""

from __future__ import annotations

import pytest

from policies.extract.statements import read_statements
from policies.language.dates import strip_marker
from policies.language.idioms import mask_idioms, media_only
from policies.memory.reducer import active_items
from tests.unit.extraction_support import fold_messages

_RULES = frozenset({"directive", "constraint", "goal"})


def _kinds(text: str) -> set[str]:
    return {st.type for st in read_statements(text, frozenset(), opening=False)}


NOT_RULES = {
    "guess": [
        "That must be so frustrating after all the waiting.",
        "Your balcony garden must look amazing this time of year.",
        "That camper van must have cost a fortune.",
        "It must bring you so much joy to see them grow.",
        "The new job must be keeping you busy.",
        "It must be a huge relief to have the exams behind you.",
        "那肯定很累吧。",
        "去海边一定很好玩吧！",
        "那套相机一定花了不少钱吧。",
    ],
    "experience": [
        "I've never been to Lisbon, but it looks lovely.",
        "Never heard of that band before.",
        "Never tried sushi, honestly.",
        "Never saw that coming!",
        "Never say never, right?",
        "No regrets at all.",
        "No words can describe how proud I felt.",
        "Nothing ever goes to plan with my family.",
        "There's no dish better than my grandma's stew.",
        "我从来没去过冰岛。",
        "我还从来没试过潜水。",
    ],
    "feeling": [
        "I can't wait for the trip to the lake!",
        "I can't help smiling when I think about it.",
        "I can't stop thinking about that concert.",
        "I can't thank you enough for the advice.",
        "I don't know what I'd do without my sisters.",
        "等不及要去看演唱会了！",
    ],
    "habit": [
        "Whenever I hear that song, I cry a little.",
        "Every time I walk past the bakery, it smells amazing.",
        "Always up for pizza night.",
        "Always been curious about Japan.",
        "I make sure to stretch every morning.",
        "I hope to travel more in the future.",
        "我一直都想去日本看看。",
    ],
    "encouragement": [
        "Don't forget you deserve a break.",
        "Keep up the great work!",
        "Don't ever give up on your music.",
        "Make sure you get some rest this weekend.",
        "Find a coach who can help you with your swing.",
        "Chase your dreams, don't be discouraged.",
        "Don't hesitate to reach out if you need anything.",
        "Don't forget - small steps still count!",
        "加油，别放弃你的音乐！",
        "别忘了好好照顾自己。",
        "千万别放弃啊，你可以的！",
    ],
    "society": [
        "We need more kindness in the world.",
        "Schools should be funded properly.",
        "Kids need good role models.",
        "我们社会需要更多的善意。",
        "孩子们需要好的榜样。",
    ],
    "reflection": [
        "It made me think how much we still have to do.",
        "It reminded me we need to slow down.",
        "Realizing I could do it was the best part.",
        "It's hard when things don't go your way.",
        "这件事让我意识到我们还有很多要做的。",
    ],
    "media": [
        "[shares a photo: a photo of two dogs next to each other on a porch]",
        "[sends a video: a cat chasing a laser across the floor]",
    ],
}


@pytest.mark.parametrize(
    "text", [t for family in NOT_RULES.values() for t in family], ids=lambda t: t[:40]
)
def test_social_talk_is_not_a_rule(text: str) -> None:
    assert not _kinds(text) & _RULES


# The same words binding the assistant's work or stating the user's own limits.
LOOK_ALIKES = [
    "The invoice must be in euros.",
    "It must run on Python 3.9.",
    "The cover letter must be under 2 pages.",
    "It must have a dark mode.",
    "The quiz must be challenging for seniors.",
    "The slides must look professional.",
    "Never use emojis.",
    "Never exceed 300 words.",
    "Never book flights that land after midnight.",
    "No meetings before 10.",
    "I can't eat gluten.",
    "We can't go over $500.",
    "We can't use AWS for this project.",
    "I can't do intense workouts because of my knee.",
    "I'm allergic to cats.",
    "I can't have dairy.",
    "Dairy-free is a must for me.",
    "Whenever you quote prices, include VAT.",
    "Whenever I send you a draft, check the grammar first.",
    "Always answer in Spanish.",
    "Always bring the totals to two decimals.",
    "Don't forget to include the tax.",
    "Make sure you cite the page numbers in every answer.",
    "Don't rush the ending of the story.",
    "We need a venue for 80 people.",
    "Our guests don't eat pork.",
    "报告必须用欧元。",
    "以后回答都用西班牙语。",
    "不要在文案里用表情符号。",
    "我对猫过敏。",
    "我不能吃乳制品。",
    "这个功能一定要支持Python 3.9。",
    "预算不能超过5000块。",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alike_requirements_keep_their_rule_type(text: str) -> None:
    assert _kinds(text) & _RULES


def test_an_idiom_leaves_the_rule_beside_it() -> None:
    kinds = _kinds("I've never been to Lisbon, so don't book anything touristy.")
    assert "constraint" in kinds


def test_masking_keeps_length_and_the_rule_words_of_real_rules() -> None:
    guess = "That must be so frustrating."
    assert len(mask_idioms(guess)) == len(guess)
    assert "must" not in mask_idioms(guess)
    for rule in ("The invoice must be in euros.", "Never use emojis.", "I can't eat gluten."):
        assert mask_idioms(rule) == rule


def test_media_placeholders_and_timestamps_are_not_content() -> None:
    assert media_only("[shares a photo: three kids holding trophies]")
    assert not media_only("Look at this! [shares a photo: my new bike]")
    assert not read_statements("Nice! [shares a photo: two cats on a sofa]", frozenset(), False)
    assert strip_marker("[date: 3:10 pm on 4 June, 2024] Hey Sam!") == "Hey Sam!"
    assert strip_marker("The deadline is [date: June 4].") == "The deadline is [date: June 4]."
    assert read_statements("[date: 9 May, 2024] Hey Sam!", frozenset(), opening=True) == []


def test_a_personal_chat_keeps_the_allergy_and_no_chatter() -> None:
    items, _ = fold_messages(
        [
            ("user", "Hi! Just got back from a week at my aunt's farm."),
            ("assistant", "Welcome back! How was it?"),
            (
                "user",
                "I can't wait to go again. Never milked a goat before, that was wild."
                " I'm allergic to horses though, so I stayed away from the stables.",
            ),
            ("assistant", "That must have been quite the adventure."),
            (
                "user",
                "It made me think we need more farms near the city. Keep up the great"
                " work on your garden, don't ever give up on it!",
            ),
            ("user", "我从来没见过那么多星星，一定很美吧。加油！"),
        ],
        "You are a friendly companion.",
    )
    rules = [it.value for it in active_items(items) if it.type in _RULES]
    assert any("allergic" in v for v in rules)
    assert not any(
        w in v for v in rules for w in ("can't wait", "goat", "farms", "give up", "星星", "加油")
    )
