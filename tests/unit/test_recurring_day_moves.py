"""A recurring day moved as a consequence of news ("…so put the X on Tuesdays then").

A bare weekday is too vague to revise by value alone: "piano on Tuesdays" and
"swimming on Thursdays" are two things. It revises when the sentence says it
adjusts the plan ("then", "那就", a change cue) *and* the same word sits right by
the old day, in exactly one item; the rest of that item's sentence still holds.
"""

from __future__ import annotations

from tests.unit.extraction_support import active_values


def test_moved_day_revises_the_clause_in_a_longer_item() -> None:
    values = active_values(
        [
            "Rehearsals are on Thursday nights, and the cast is 12 people.",
            "Half the cast can't do weeknights. Hold the rehearsals on Sunday afternoons then.",
        ]
    )
    assert "Hold the rehearsals on Sunday afternoons then." in values
    assert not any("Thursday" in v for v in values)
    assert any("12 people" in v for v in values)  # the other clause still holds


def test_zh_moved_day() -> None:
    values = active_values(["排练定在周六上午，一共12个人。", "大家周末都忙，那就周二晚上排练吧。"])
    assert not any("周六" in v for v in values)
    assert any("12个人" in v for v in values)


def test_day_for_another_thing_is_not_a_move() -> None:
    values = active_values(
        ["Rehearsals are on Thursday nights.", "Book the venue for Friday then."]
    )
    assert "Rehearsals are on Thursday nights." in values


def test_same_word_without_an_adjustment_is_another_thing() -> None:
    first = "Piano lessons are on Tuesday afternoons, and my budget is $300 a month."
    values = active_values([first, "Swimming lessons are on Thursday afternoons."])
    assert first in values
