"""A recalled or summarised user turn in which a value was taken back mid-sentence
("0259, sorry, 0295 at the end", "尾号是…，不对，尾号是…") is quoted with the fixed
value, as memory shows it: the slip would read as a second, current value. Other
turns, and the assistant's words, are quoted as they were.
"""

from __future__ import annotations

from policies.assemble.quoted_turns import plan_recall
from policies.assemble.summary import render_line
from policies.language.text import term_set
from policies.types import RecallHit, SummaryLine


def _count(text: str) -> int:
    return len(text) // 4 + 1


def _recalled(role: str, text: str, query: str) -> str:
    hit = RecallHit(7, role, "3 May 2026", text, 5.0)
    gen = plan_recall([hit], term_set(query), 300, 600, _count, None)
    return gen.contents[0]


def test_en_recalled_user_turn_shows_the_fixed_number() -> None:
    text = "The plumber's number is 415-555-0259, sorry, 0295 at the end."
    shown = _recalled("user", text, "plumber number")
    assert "415-555-0295" in shown
    assert "0259" not in shown


def test_zh_recalled_user_turn_shows_the_fixed_number() -> None:
    text = "水电师傅的电话是139 2222 4816，不对，尾号是4861。"
    shown = _recalled("user", text, "水电师傅 电话")
    assert "139 2222 4861" in shown
    assert "4816" not in shown


def test_turn_without_a_fix_and_assistant_turns_are_quoted_as_said() -> None:
    plain = "The plumber's number is 415-555-0259 and he prefers texts."
    assert "415-555-0259" in _recalled("user", plain, "plumber number")
    said = "Noted: 415-555-0259, sorry, 0295 at the end, as you wrote."
    assert "0259" in _recalled("assistant", said, "noted")


def test_summary_line_shows_the_fixed_number() -> None:
    line = SummaryLine(
        ordinal=3,
        role="user",
        date="",
        sentences=("Call Dana on 415-555-0259, sorry, 0295 at the end.",),
        score=1.0,
    )
    shown = render_line(line, False, None, set())
    assert shown is not None
    assert "415-555-0295" in shown
    assert "0259" not in shown
