"""The stale filter: a bare small number of an old value ties nothing to it, and
the replacement is quoted by the clause with its new value, not the one that
quotes the old value to say why it went. Sentences of our own, zh and en."""

from __future__ import annotations

from policies.memory.stale_terms import is_distinctive
from policies.memory.stale_values import short_form
from policies.memory.staleness import StaleFilter
from policies.types import MemoryItem


def pair(old: str, new: str) -> list[MemoryItem]:
    return [
        MemoryItem(
            id="old", type="constraint", slot="s", value=old, source="user",
            source_ordinal=3, status="superseded", superseded_by="new",
        ),
        MemoryItem(
            id="new", type="constraint", slot="s", value=new, source="user",
            source_ordinal=9, replaces=old,
        ),
    ]  # fmt: skip


def test_a_bare_small_number_is_not_distinctive() -> None:
    assert not is_distinctive("5", 6)
    assert not is_distinctive("12", 6)
    assert is_distinctive("2025", 6)
    assert is_distinctive("v2", 6)


def test_zh_an_unrelated_sentence_with_the_same_small_number_is_left_alone() -> None:
    stale = StaleFilter(
        pair(
            "酒店要离会场近一点，每间每晚300以内，大概订3、4间。",
            "我比了几家，每晚300以内的都离会场太远，酒店预算放宽到每晚450吧。",
        )
    )
    unrelated = "我侄女今年4岁，坐飞机会不会耳朵疼？"
    assert stale.clean([unrelated]) == [unrelated]
    # The old budget itself is still caught, and quoted by its new value.
    (out,) = stale.clean(
        ["每间每晚300以内就行。"],
        {"我比了几家，每晚300以内的都离会场太远，酒店预算放宽到每晚450吧。"},
    )
    assert out.endswith("(later changed: 酒店预算放宽到每晚450吧)")


def test_en_an_unrelated_sentence_with_the_same_small_number_is_left_alone() -> None:
    stale = StaleFilter(
        pair(
            "Rooms near the venue, under $180 a night, we need 3 or 4 rooms.",
            "The ones under $180 a night all had awful reviews,"
            " so raise the hotel cap to $240 a night.",
        )
    )
    unrelated = "My nephew is 4 and gets carsick, any tips?"
    assert stale.clean([unrelated]) == [unrelated]


def test_the_short_form_is_the_clause_with_the_new_value() -> None:
    old = "每篇1500字左右。"
    new = "领导说现在短一点大家才会看完，还是每篇1000字吧，别写1500了。"
    assert short_form(new, {"每篇"}, old) == "还是每篇1000字吧"
    old = "Keep the hotel under $180 a night."
    new = "The ones under $180 a night all had awful reviews, so raise the hotel cap to $240."
    assert short_form(new, {"hotel"}, old) == "so raise the hotel cap to $240"
