"""Phenomena of the fresh3 probe, with sentences of our own (zh and en)."""

from __future__ import annotations

from policies.language.segment import without_clause
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values as _active
from tests.unit.extraction_support import fold_messages


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


def _fold_chat(chat: list[tuple[str, str]]) -> list[str]:
    items, _ = fold_messages(chat, "You are a helpful assistant.")
    return [it.value for it in items if it.status == "active"]


def test_en_ordinal_choice_points_into_a_list_before_a_digression() -> None:
    active = _fold_chat(
        [
            ("user", "We need a new espresso machine for the office kitchen."),
            (
                "assistant",
                "Three worth a look:\n1. **Breville Barista Express**: grinder built in.\n"
                "2. **Gaggia Classic Pro**: simple and sturdy.\n3. **Rancilio Silvia**: pricier.",
            ),
            ("user", "Unrelated, is it normal for the fridge to hum at night?"),
            ("assistant", "Yes, a low hum from the compressor is normal."),
            ("user", "Good. Let's go with the second one, the office likes simple things."),
            ("assistant", "Great choice."),
        ]
    )
    assert any("Gaggia Classic Pro" in v for v in active)


def test_second_sentence_with_the_new_value_completes_the_revision() -> None:
    active = _active(
        [
            "Setting up the sprinklers. I want them to start at 6am every day.",
            "On second thought, a 6am start is too early for the sprinklers, the neighbours"
            " complain. Make it 7:15 instead.",
        ]
    )
    (line,) = [v for v in active if "7:15" in v]
    assert "6am" in line  # the reason and the new time are one item
    assert not any("6am" in v and "7:15" not in v for v in active)


def test_plain_imperative_after_a_revocation_is_the_replacement_rule() -> None:
    active = _active(
        [
            "Planning my garden. Always answer me with a table, please.",
            "Please stop using tables, they break on my phone. Just write plain sentences.",
        ]
    )
    assert any("plain sentences" in v for v in active)
    assert not any("Always answer me with a table" in v for v in active)


def test_zh_opposite_length_instruction_replaces_the_old_one() -> None:
    active = _active(
        [
            "我在准备考研复试。你回复我的时候尽量短一点，我在地铁上看。",
            "今天在家了，你不用那么简短了，讲详细点也没关系。",
        ]
    )
    assert any("详细" in v for v in active)
    assert not any("尽量短一点" in v for v in active)


def test_withdrawn_quoted_name_leaves_the_rest_of_the_fact() -> None:
    active = _active(
        [
            'Our band plays six shows this summer, tour name "Loud Porch".',
            'I\'m not sold on "Loud Porch" anymore, it sounds silly.',
        ]
    )
    assert not any("Loud Porch" in v for v in active)
    assert any("six shows" in v for v in active)


def test_rule_stated_while_rejecting_a_suggestion_is_kept() -> None:
    active = _active(
        [
            "We're trimming the wedding budget.",
            "Nope, we're keeping the live band, my grandmother has asked for it for years.",
        ]
    )
    assert any("keeping the live band" in v for v in active)


def test_remainder_that_only_comments_on_the_changed_clause_is_dropped() -> None:
    active = _active(
        [
            "Renovating the kitchen. Cabinet budget is $6,000, that's what the bank approved.",
            "Good news: the cabinet budget can go up to $7,500 now.",
        ]
    )
    assert any("$7,500" in v for v in active)
    assert not any(v.startswith("that's what the bank") for v in active)


def test_an_id_the_user_gave_outranks_a_plain_fact_of_the_same_age() -> None:
    from policies.memory.scoring import ScoringParams, score_item
    from policies.types import MemoryItem

    def item(value: str) -> MemoryItem:
        return MemoryItem("x", "entity", None, value, "user", 2, importance=0.75)

    params = ScoringParams()
    with_id = score_item(
        item("我的报名号是 BM-20931，考点在海淀。"),
        current_ordinal=40,
        query_terms=(),
        params=params,
    )
    plain = score_item(
        item("考点在海淀，离家有点远，我得早点出门。"),
        current_ordinal=40,
        query_terms=(),
        params=params,
    )
    assert with_id > plain
