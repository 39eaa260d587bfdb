"""What a denial or a new value can revise.

- "X, not Y" revises the item holding Y only when Y names something: "not us",
  "not at the end" deny a function word; "instead of two weeks" denies the whole
  value "two weeks", not the word "two".
- A plain word denied inside a sentence about its own subject ("the office printer
  stays on USB, not wifi, for security") is no correction of a fact that merely
  uses the word ("the wifi in the flat keeps dropping").
- A new value revises an item holding some value to replace, or one its words
  clearly name, not one sharing only a name with it.
- "were on" is past tense, not "we're on": no change cue.
- A number may end its sentence: "Sign-ups closed at 87." holds 87.
"""

from __future__ import annotations

from policies.language.cues import read_cues
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def test_function_word_denied_names_no_item() -> None:
    first = (
        "The code freeze for our team is Friday at noon, after that only release managers merge."
    )
    values = active_values(
        [
            first,
            "Tickets tagged area/billing go to the billing team, not us, even about refunds.",
        ]
    )
    assert first in values


def test_plain_word_denied_about_another_subject() -> None:
    first = (
        "Our goal this month is to fix the wifi in the flat, the signal upstairs keeps dropping."
    )
    values = active_values(
        [
            first,
            "Our IT contractor Rowan said the office printer stays on USB, not wifi, for security.",
        ]
    )
    assert first in values


def test_plain_word_denied_as_a_correction_still_revises() -> None:
    values = active_values(["I'm pretty set on oak for the shelves.", "Walnut it is, no more oak."])
    assert "I'm pretty set on oak for the shelves." not in values


def test_new_value_does_not_revise_an_item_sharing_only_a_name() -> None:
    first = "All of her bookings go through her agent Mara Levy, Mara's number is 07700 900123."
    values = active_values(
        [
            first,
            "Mara wrote back: the author can come May 9, but wants the signing kept to 40 minutes.",
        ]
    )
    assert any("07700 900123" in v for v in values)
    zh = "她的行程都要通过助理小岚约，小岚的电话是13912345678。"
    zh_values = active_values(
        [zh, "小岚刚回消息，说作者5月9号可以来，不过要求签售控制在四十分钟。"]
    )
    assert any("13912345678" in v for v in zh_values)


def test_were_on_is_past_not_a_change_cue() -> None:
    assert read_cues("Back then we were on the old plan.").change < 2
    assert read_cues("We're on the new plan now.").change == 2


def test_number_before_a_full_stop_or_comma() -> None:
    assert [v.number for v in extract_values("Sign-ups closed at 87.")] == [87]
    assert [v.number for v in extract_values("Sign-ups closed at 87, a few more than hoped.")] == [
        87
    ]
    assert [v.number for v in extract_values("报名截止一共87，比预想多。")] == [87]
    assert [v.text for v in extract_values("Body temperature 98.6 degrees.")] == ["98.6 degrees"]
    assert extract_values("see shop87.com for details") == ()
