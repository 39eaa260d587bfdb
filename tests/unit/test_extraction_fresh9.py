"""Phenomena of the fresh9 probe, with sentences of our own (zh and en): a count of
sessions in another counter word ("8场" / "十期"), thousands said as "grand", a total
worked out ("算下来", "正好", "comes to"), and a sentence revising a count beside a
date it merely mentions."""

from __future__ import annotations

import pytest

from policies.extract.rivals import TOTAL, sole_rival_pair
from policies.language.values import extract_values
from policies.types import MemoryItem
from tests.unit.extraction_support import active_values

SYSTEM_ZH = "你是帮用户安排活动的助手。"


def kinds(text: str) -> list[tuple[str, str, float | None]]:
    return [(v.kind, v.unit, v.number) for v in extract_values(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("这学期的讲座先办6场", ("qty", "场", 6.0)),
        ("排下来一共十二期", ("qty", "场", 12.0)),  # 期 and 场 count the same sessions
        ("We still need about six grand for the roof.", ("money", "?", 6000.0)),
        ("The van costs 12 grand used.", ("money", "?", 12000.0)),
    ],
)
def test_session_counts_and_grand_amounts(text: str, expected: tuple[str, str, float]) -> None:
    assert expected in kinds(text)


@pytest.mark.parametrize(
    "text",
    ["那是一场误会", "这期间别打扰我", "She played a grand piano.", "The grand total is what?"],
)
def test_look_alikes_are_no_counts_or_amounts(text: str) -> None:
    assert not [v for v in extract_values(text) if v.kind in ("qty", "money")]


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ("算下来要住二十二天", True),
        ("正好九场", True),
        ("The bill comes to 340 dollars.", True),
        ("It works out to 18 people.", True),
        ("我正好有空", False),  # 正好 without a count is "happens to"
        ("He comes from Leeds.", False),
    ],
)
def test_worked_out_totals(text: str, marked: bool) -> None:
    assert bool(TOTAL.search(text)) is marked


def _item(value: str) -> MemoryItem:
    return MemoryItem(
        id="i1", type="constraint", slot="plan", value=value, source="user", source_ordinal=0
    )


def test_sole_rival_names_the_count_not_the_weekday() -> None:
    old = _item("讲座先排6场，放在周六上午。")
    text = "跟场地方确认了，从4月12号开始，正好九场，赞助商也按九场出钱。"
    found = sole_rival_pair(text, extract_values(text), [old])
    assert found is not None
    assert found[1] is not None
    new, was = found[1]
    assert (new.text, was.text) == ("九场", "6场")


def test_zh_worked_out_session_count_revises_the_old_one() -> None:
    active = active_values(
        [
            "我在帮社区图书馆办讲座。",
            "初步打算办6场，放在周六上午，每场不超过30人。",
            "跟馆长对了日程，从4月12号开始，每周一次，正好九场，赞助商也按九场出钱。",
        ],
        SYSTEM_ZH,
    )
    assert not any("6场" in value for value in active)
    assert any("九场" in value for value in active)
    assert any("每场不超过30人" in value for value in active)  # the cap is kept


def test_zh_a_count_of_another_thing_is_no_rival() -> None:
    active = active_values(
        [
            "我在帮社区图书馆办讲座。",
            "初步打算办6场，放在周六上午。",
            "算下来要订九个人的午饭。",
        ],
        SYSTEM_ZH,
    )
    assert any("6场" in value for value in active)


def test_en_a_total_in_grand_revises_the_old_amount() -> None:
    active = active_values(
        [
            "I'm organising a fundraiser for our scout troop.",
            "We're trying to raise $4,000 for the camping trip.",
            "The trip budget came back and it all comes to six grand, so we'll aim for that.",
        ]
    )
    assert not any("$4,000" in value and "six grand" not in value for value in active)
    assert any("six grand" in value for value in active)
