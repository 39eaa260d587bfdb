"""Sentences that look like revisions but change nothing.

- "Now Porto, three nights, …" / "现在说说住宿：…": a sentence-initial "now" opening a
  verbless lead-in moves the talk to a new topic; it is no change cue. "Now it's 5
  nights" still is.
- "Kids under 10 get in free": a cap on people's age bounds no price or head count.
- "Tom, our treasurer, thinks we should charge $25": a named person's opinion of what
  we should do is theirs until the user takes it up.
- "raise $8,000, seats $40" then "ten grand is the number": the nearby amount is the
  one revised, the one an order of magnitude away is not.
"""

from __future__ import annotations

from policies.language.cues import read_cues
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def test_now_opening_a_topic_is_no_change() -> None:
    assert read_cues("Now Porto, three nights, the hotel is by the river.").change == 0
    assert read_cues("Now, the hotel: we want two rooms.").change == 0
    assert read_cues("现在说说住宿：每晚不超过500。").change == 0
    lines = ["Let's do 4 nights in Lisbon.", "Now Porto, three nights, the hotel is by the river."]
    assert active_values(lines) == lines


def test_now_with_a_verb_still_marks_a_change() -> None:
    assert read_cues("Now it's 5 nights in Lisbon.").change >= 1
    assert read_cues("Now we don't need a car, the bus is fine.").change >= 1
    assert read_cues("现在预算是3000。").change >= 1
    assert active_values(
        ["Let's do 4 nights in Lisbon.", "Now it's 5 nights in Lisbon, we found a cheaper flight."]
    ) == ["Now it's 5 nights in Lisbon, we found a cheaper flight."]


def test_an_age_cap_is_no_price() -> None:
    assert [v.unit for v in extract_values("kids under 10 get in free")] == ["below:age"]
    assert [v.unit for v in extract_values("people over 65 pay half")] == ["above:age"]
    assert [v.unit for v in extract_values("under 10 people")] == ["below:person"]
    lines = ["Entry is $15 a head.", "Actually, kids under 10 get in free with a parent."]
    assert active_values(lines) == lines
    # A price cap still revises the price.
    assert active_values(["Entry is $15 a head.", "Actually, under $12 a head is fine too."]) == [
        "Actually, under $12 a head is fine too."
    ]


def test_named_persons_opinion_replaces_nothing() -> None:
    assert read_cues("Tom, our treasurer, thinks we should charge $25 a head.").reported
    assert read_cues("Omar thinks we should cap it at 40 people.").reported
    assert not read_cues("I think we should charge $30.").reported
    assert "Entry is $15 a head." in active_values(
        ["Entry is $15 a head.", "Tom, our treasurer, thinks we should charge $25 a head."]
    )
    assert active_values(["Entry is $15 a head.", "We should charge $25 a head instead."]) == [
        "We should charge $25 a head instead."
    ]


def test_the_nearby_amount_in_a_sentence_is_revised() -> None:
    values = active_values(
        [
            "We aim to raise $8,000, seats $40.",
            "The shelter needs ten grand, so that's the number to aim at.",
        ]
    )
    assert "We aim to raise $8,000, seats $40." not in values
    assert "The shelter needs ten grand, so that's the number to aim at." in values
    assert any("$40" in v for v in values)  # the seat price still holds
