"""Phenomena of the fresh3 probe, with sentences of our own (zh and en)."""

from __future__ import annotations

from policies.segment import without_clause
from policies.values import extract_values
from tests.unit.extraction_support import fold_messages


def _active(messages: list[str]) -> list[str]:
    chat: list[tuple[str, str]] = []
    for text in messages:
        chat += [("user", text), ("assistant", "OK.")]
    items, _ = fold_messages(chat, "You are a helpful assistant.")
    return [it.value for it in items if it.status == "active"]


def test_thousands_separator_is_no_clause_boundary() -> None:
    text = "The quote came back at $3,150 for the whole job, and the crew starts Monday."
    value = next(v for v in extract_values(text) if v.text == "$3,150")
    rest = without_clause(text, value)
    assert rest is not None
    assert "$3" not in rest
    assert "Monday" in rest


def test_forget_amount_revises_the_item_holding_it() -> None:
    active = _active(
        [
            "We're renovating the bathroom. The tile budget is $1,800, not a cent more.",
            "Okay, forget $1,800 as the limit, my brother is chipping in, we can go up to $2,100.",
        ]
    )
    assert any("$2,100" in v for v in active)
    assert not any("$1,800" in v and "$2,100" not in v for v in active)


def test_forget_the_bare_number_cap_revises_the_money_item() -> None:
    active = _active(
        [
            "I'm buying a new laptop for school. Spending limit is $900, firm.",
            "Forget the 900 cap, my parents said they'll cover up to $1,200 total.",
        ]
    )
    assert any("$1,200" in v for v in active)
    assert not any("$900" in v and "$1,200" not in v for v in active)


def test_zh_i_calculated_is_no_revocation() -> None:
    active = _active(
        [
            "我在开一家小咖啡店。店员的绩效奖金按销售额的4%算。",
            "还有奖金，我算了下这个月流水不高，奖金比例改成2%吧，4%太多了。",
        ]
    )
    assert any("2%" in v for v in active)
    assert not any("4%" in v and "2%" not in v for v in active)


def test_zh_self_corrected_bare_number_is_kept() -> None:
    active = _active(
        [
            "我在整理家里的开销。",
            "房贷每个月6200——哦不对，是6400，今年利率调过一次。",
        ]
    )
    assert any("6400" in v for v in active)


def test_en_self_corrected_bare_number_is_kept() -> None:
    active = _active(
        [
            "Helping my dad sort his pension paperwork.",
            "His monthly pension is 2100, no wait, 2350, it went up in January.",
        ]
    )
    assert any("2350" in v for v in active)
