"""A number its label names as an identifier is an ID, said with "is" / "是" too.

"The permit ID is 55120934007" or "回执号是2023112800451" is a reference to quote back
exactly, not an amount to compare or revise. Short numbers after a plain "number
is" stay counts ("the total number is 1200").
"""

from __future__ import annotations

from policies.language.values import extract_values


def kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.text) for v in extract_values(text)]


def test_labelled_numbers_said_with_is_are_ids() -> None:
    assert kinds("Our permit ID is 55120934007, keep it handy.") == [("id", "55120934007")]
    assert kinds("The boat registration number is 48817260.") == [("id", "48817260")]
    assert kinds("The confirmation is 7719204.") == [("id", "7719204")]
    assert kinds("回执号是2023112800451。") == [("id", "2023112800451")]
    assert kinds("发票号为33019875。") == [("id", "33019875")]


def test_counts_and_short_numbers_stay_numbers() -> None:
    assert kinds("The total number is 1200.") == [("number", "1200")]
    assert kinds("The room number is 1204.") == [("number", "1204")]
    assert kinds("Our table number is 12.") == [("number", "12")]
