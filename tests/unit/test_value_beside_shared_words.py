"""With no change cue, a new value revises an old one only when they share a word
inside the clause holding the value.

A person or place named in another clause of the sentence ("Rosa can't clean six
rooms in two hours", "刚跟老陈打完电话") says who or where, not which setting changed:
a check-in time is no cleaner's arrival time. The same subject beside the new value
("the shop opens at 8am" after "the shop opens at 7am") still revises it.
"""

from __future__ import annotations

from tests.unit.extraction_support import active_values


def test_person_named_in_another_clause_links_nothing() -> None:
    en = [
        "Rosa arrives at 7:30.",
        "Then write check-in from 3pm, Rosa can't clean six rooms in two hours.",
    ]
    assert active_values(en) == en
    zh = ["保洁阿姨早上八点到。", "那就按下午两点起入住来写吧，阿姨打扫五间房三个钟头都不够。"]
    assert active_values(zh) == zh


def test_same_subject_beside_the_new_value_still_revises() -> None:
    assert active_values(
        ["Rosa arrives at 7:30.", "Rosa arrives at 8:15 these days, the bus changed."]
    ) == ["Rosa arrives at 8:15 these days, the bus changed."]
    assert active_values(
        ["The shop opens at 7am.", "The shop opens at 8am on weekends, fewer people come early."]
    ) == ["The shop opens at 8am on weekends, fewer people come early."]
    assert active_values(["店门早上7点开。", "店门早上8点开就行，周末人少。"]) == [
        "店门早上8点开就行，周末人少。"
    ]


def test_pronoun_carries_the_subject_of_the_clause_before() -> None:
    # "we pay her $20 a walk": "her" is the walker named in the clause before.
    values = active_values(
        [
            "Our dog walker is Priya, we pay her $20 a walk.",
            "I'll offer Priya a flat sixty a week, simpler than counting walks.",
        ]
    )
    assert not any("$20" in v for v in values)
