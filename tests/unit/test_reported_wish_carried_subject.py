"""Someone else's wish whose subject is carried over a comma (zh drops it).

"她看完动画片可兴奋了，说要去养一只": the second clause is still her words, a
child's or a colleague's wish, not a requirement of the user. A clause where the
user speaks ("我说要…") or sets a rule about that person ("他年纪小，营地一定要…")
is the user's own.
"""

from __future__ import annotations

from tests.unit.extraction_support import active_values

OPENING = "孩子今年8岁，喜欢画画。"


def test_carried_subject_wish_is_not_a_requirement() -> None:
    values = active_values([OPENING, "她看完动画片可兴奋了，说要去养一只。"])
    assert values == [OPENING]


def test_users_own_words_after_a_third_person_clause_stay() -> None:
    said = "他周末没空，我说要改到周日上课。"
    assert said in active_values([OPENING, said])
    rule = "他年纪小，营地一定要有带队老师全程陪同。"
    assert rule in active_values([OPENING, rule])
