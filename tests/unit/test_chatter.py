"""Chatter between people never becomes a working-memory rule.

Guesses at how something felt, comfort, encouragement, advice about the
listener's own life, offers and reactions carry "must", "don't", "make sure",
"一定", "别"; none of them asks the assistant to do or respect anything. The
sentences are our own. Look-alike requirements are checked alongside: they
must still be typed as rules.
"""

from __future__ import annotations

import pytest

from policies.extract.chatter import chatter
from policies.extract.statements import read_statements
from policies.memory.reducer import active_items
from tests.unit.extraction_support import fold_messages

_RULES = frozenset({"directive", "constraint", "preference"})

CHATTER = [
    "Climbing that ridge at dawn must have been breathtaking.",
    "Running a stall at the night market must be so exhausting.",
    "Raising three puppies must be such a rewarding experience.",
    "I bet you must feel relieved now that the move is over.",
    "Don't worry, you'll crush the audition.",
    "Hang in there, the first month of a new job is always rough!",
    "You should totally try bouldering with us sometime.",
    "Make sure you rest after that marathon.",
    "Don't forget to take time for yourself this weekend.",
    "Don't push yourself too hard at the gym.",
    "Let me know if you need anything for the housewarming.",
    "I can't wait to see the photos from your cousin's wedding!",
    "No wonder your garden looks so good.",
    "你一定要多休息啊，别累坏了。",
    "别担心，你肯定行的！",
    "那一定很好玩吧！",
    "爬完那座山一定很有成就感吧。",
    "加油，相信你这次面试没问题。",
    "有事随时找我。",
]


@pytest.mark.parametrize("text", CHATTER)
def test_chatter_is_recognised(text: str) -> None:
    assert chatter(text)


@pytest.mark.parametrize("text", CHATTER)
def test_chatter_is_not_a_rule(text: str) -> None:
    kinds = {st.type for st in read_statements(text, frozenset(), opening=False)}
    assert not kinds & _RULES


# Same modal and imperative words, but binding the assistant's work.
RULES = [
    "The abstract must be under 200 words.",
    "Don't worry about citations, I'll add them later.",
    "Make sure you cite the ticket number in every reply.",
    "Don't use emojis in the release notes.",
    "You should always answer in Spanish from now on.",
    "Never repeat yourself across sections.",
    "Try to keep each answer short.",
    "报告里一定要写清楚数据来源。",
    "别用表格，直接写成段落。",
    "以后每次都用中文回复我。",
    "他特别紧张，所以材料里不能出现他的真名。",
]


@pytest.mark.parametrize("text", RULES)
def test_look_alike_requirements_are_not_chatter(text: str) -> None:
    assert not chatter(text)


@pytest.mark.parametrize(
    "text",
    [
        "Make sure you cite the ticket number in every reply.",
        "Don't use emojis in the release notes.",
        "You should always answer in Spanish from now on.",
        "报告里一定要写清楚数据来源。",
        "以后每次都用中文回复我。",
    ],
)
def test_look_alike_requirements_stay_rules(text: str) -> None:
    kinds = {st.type for st in read_statements(text, frozenset(), opening=False)}
    assert kinds & _RULES


def test_a_chat_between_friends_keeps_no_rules_but_keeps_the_rule_to_the_assistant() -> None:
    items, _ = fold_messages(
        [
            ("user", "Hi! I'm planning a surprise dinner for my sister, can you help?"),
            ("assistant", "Of course! Tell me more."),
            (
                "user",
                "She just finished her thesis, that must have been exhausting for her."
                " You should totally try the dumplings at Lao Wang's too. Don't use any"
                " seafood in the menu, she is allergic.",
            ),
            ("assistant", "Noted: no seafood."),
            ("user", "别担心，你肯定行的！那一定很好玩吧。"),
        ],
        "You are a helpful assistant.",
    )
    rules = [it.value for it in active_items(items) if it.type in _RULES]
    assert any("seafood" in v for v in rules)
    assert not any("exhausting" in v or "dumplings" in v or "别担心" in v for v in rules)


def test_comfort_in_front_of_a_revocation_still_revokes() -> None:
    (st,) = read_statements(
        "Don't worry, you can drop the 300-word limit.", frozenset(), opening=False
    )
    assert st.revoke


def test_a_value_in_chatter_is_kept_as_a_fact_not_a_rule() -> None:
    statements = read_statements("跑完42公里一定很累吧。", frozenset(), opening=False)
    assert not {st.type for st in statements} & _RULES
