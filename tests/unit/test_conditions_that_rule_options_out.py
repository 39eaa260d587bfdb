"""A condition of the person the plan is for (colour blindness, asthma, motion sickness,
fear of heights) rules options out, as an allergy does: it is a constraint, even when
told in passing before a question. A question about the condition in general is not."""

from __future__ import annotations

import pytest

from policies.extract.statements import read_statements
from policies.language.cues import read_cues
from policies.language.matching import key_terms

_TOPIC = key_terms("你是一位升学顾问。You help plan a school trip.")


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("另外，女儿有点色弱，不知道报专业有没有影响。", "色弱"),
        ("还有，班上有两个孩子晕车，坐不了太久的大巴。", "晕车"),
        ("One more thing: my son is colour-blind, does that matter for engineering?", "colour"),
        ("By the way, two of the kids get carsick on long drives.", "carsick"),
        ("Also, Priya has asthma, so nothing too dusty.", "asthma"),
    ],
)
def test_condition_told_in_passing_is_a_constraint(message: str, kept: str) -> None:
    statements = read_statements(message, _TOPIC, opening=False)
    assert any(kept in st.text and st.type == "constraint" for st in statements)


@pytest.mark.parametrize("message", ["色盲的人能看清红绿灯吗？", "Is colour blindness hereditary?"])
def test_question_about_a_condition_is_no_constraint(message: str) -> None:
    assert read_statements(message, _TOPIC, opening=False) == []


def test_condition_after_a_question_still_binds() -> None:
    # not a soft scope of the question before it ("Any ideas? Budget is pizza.")
    message = "Any ideas for the class trip? Two of the kids get carsick."
    assert any("carsick" in st.text for st in read_statements(message, _TOPIC, opening=False))
    message = "这样周末的课应该都排得开吧？另外，孩子有轻度色弱。"
    assert any("色弱" in st.text for st in read_statements(message, _TOPIC, opening=False))


def test_condition_words_are_constraint_cues() -> None:
    assert read_cues("孩子有轻度哮喘。").constraint >= 3
    assert read_cues("He's afraid of heights.").constraint >= 3
