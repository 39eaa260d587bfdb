"""A choice stated as made and then asked about ("他报的是钢琴+乐理，这样明年考级应该都赶得
上吧？", "We went with the oak floor, so the budget still works, right?"): the question
is answered, but the choice is a fact of the plan and is kept. Our own sentences;
look-alikes that ask about the choice itself or only suppose it are not kept."""

from __future__ import annotations

import pytest

from policies.extract.statements import read_statements
from policies.language.matching import key_terms

_TOPIC = key_terms("你是一位升学顾问。You help a family plan a renovation.")


def _kept(message: str) -> list[str]:
    return [st.text for st in read_statements(message, _TOPIC, opening=False)]


@pytest.mark.parametrize(
    ("message", "choice"),
    [
        ("儿子选的是物理+化学+地理，这样计算机应该都能报吧？", "物理+化学+地理"),
        ("我们订了周五晚上的包间，那应该不用再排队了吧？", "订了周五晚上的包间"),
        ("She picked biology and chemistry, so she can apply for pharmacy, right?", "biology"),
        ("We went with the oak floor, so the budget still works, right?", "oak floor"),
    ],
)
def test_choice_before_a_consequence_question_is_kept(message: str, choice: str) -> None:
    assert any(choice in t for t in _kept(message))


@pytest.mark.parametrize(
    "message",
    [
        "儿子选的是物理，这样正常吗？",  # asks about the choice itself
        "如果她选的是物理，那能报医学吗？",  # a supposition
        "So if she picked biology, she can apply for pharmacy, right?",
        "你选的是哪个？",  # a plain question
    ],
)
def test_look_alikes_keep_nothing(message: str) -> None:
    assert _kept(message) == []
