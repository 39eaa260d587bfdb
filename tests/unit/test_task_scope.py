"""Standing rules for a kind of task (`policies.longterm.task_scope`), zh + en."""

from __future__ import annotations

import pytest

from policies.longterm.task_scope import shared_task


@pytest.mark.parametrize(
    ("rule", "asked", "task"),
    [
        (
            "Whenever you book a flight for me, get an aisle seat.",
            "I need a flight to Oslo on Monday.",
            "flight",
        ),
        (
            "For every invoice you draft, put the PO number in the subject line.",
            "Can you do the invoice for the Lindqvist job?",
            "invoice",
        ),
        ("以后帮我订机票都选靠过道的座位。", "下周一去沈阳，看看有什么机票。", "机票"),
        ("每次写周报的时候，都先列风险。", "帮我把这周的周报写一下。", "周报"),
    ],
)
def test_a_request_of_the_kind_the_rule_is_for(rule: str, asked: str, task: str) -> None:
    assert shared_task(rule, asked) == task


@pytest.mark.parametrize(
    ("rule", "asked"),
    [
        # another kind of task that shares only the doing ("book", "订")
        ("Whenever you book a flight for me, get an aisle seat.", "Book a table for four tonight."),
        ("以后帮我订机票都选靠过道的座位。", "帮我订个餐厅，周五晚上。"),
        # a rule without a scope clause is left to lexical relevance
        ("I prefer aisle seats on flights.", "I need a flight to Oslo on Monday."),
    ],
)
def test_no_shared_task(rule: str, asked: str) -> None:
    assert shared_task(rule, asked) is None
