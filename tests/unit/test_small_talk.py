"""Small talk never becomes memory: greetings, thanks, agreement, reactions.

Phrasings are our own. What must still be kept is checked alongside: a
reaction that carries a value or a rule is not small talk.
"""

from __future__ import annotations

import pytest

from policies.assemble.summary import sentence_score
from policies.language.social import small_talk
from policies.memory.reducer import active_items
from tests.unit.extraction_support import fold_messages

SYSTEM = "You are a friendly assistant; chat with the user about their life and plans."


@pytest.mark.parametrize(
    "text",
    [
        "Hey Priya, so good to chat with you again!",
        "Hi Tom! Just wanted to say hi!",
        "Yay Jonas!",
        "I totally agree, Sam.",
        "Glad you agree, Ruth.",
        "That must have been amazing.",
        "It must have been special at your graduation.",
        "Must've been scary for you guys.",
        "That sounds like fun!",
        "Wow, that is so cool!",
        "Congrats!",
        "I'm so happy for you.",
        "Thanks, Ines.",
        "哈哈，太好了！",
        "谢谢老师",
        "好久不见！",
    ],
)
def test_social_moves_are_small_talk(text: str) -> None:
    assert small_talk(text)
    assert sentence_score(text, "user")[0] == 0.0


@pytest.mark.parametrize(
    "text",
    [
        "I passed the driving test last Friday!",
        "Great, keep it short.",
        "Be brief.",
        "Sounds good, but the budget is 5000.",
        "Thanks! Please always answer in English.",
        "That sounds like a plan: book the table for seven.",
        "I love painting landscapes.",
        "预算不要超过5000",
        "太棒了，那就定在周五吧",
    ],
)
def test_content_is_not_small_talk(text: str) -> None:
    assert not small_talk(text)


def test_chat_between_friends_leaves_only_facts_in_memory() -> None:
    items, _ = fold_messages(
        [
            ("user", "[date: 9:10 am on 3 March, 2024] Hey Sam, long time no chat!"),
            ("assistant", "Priya! Great to hear from you. How was the trip?"),
            ("user", "That must have been so much work for you. I totally agree, Sam."),
            ("assistant", "It was. What's new with you?"),
            (
                "user",
                "Wow, congrats!\n[date: 2:00 pm on 9 March, 2024] I adopted a dog named Biscuit"
                " on 8 March.",
            ),
        ],
        SYSTEM,
    )
    values = [it.value for it in active_items(items)]
    assert not any("Hey Sam" in v or "must have been" in v or "agree" in v for v in values)
    assert not any("[date:" in v or v.startswith("2024]") for v in values)
    assert any("Biscuit" in v for v in values)
