"""Relative time in a recalled turn, read against its own date (`policies.language.timeline`)."""

from __future__ import annotations

import pytest

from policies.language.timeline import label_day, stamp_relative


@pytest.mark.parametrize(
    ("text", "label", "expected"),
    [
        (
            "We picked up the puppy yesterday.",
            "3 March, 2024",
            "We picked up the puppy yesterday (2 March 2024).",
        ),
        (
            "The roof was fixed the day before yesterday.",
            "2024-03-03",
            "The roof was fixed the day before yesterday (2024-03-01).",
        ),
        # Sunday 3 March 2024: last Friday is 1 March
        (
            "I sent the forms last Friday.",
            "March 3, 2024",
            "I sent the forms last Friday (1 March 2024).",
        ),
        (
            "It started three days ago.",
            "3 March, 2024",
            "It started three days ago (29 February 2024).",
        ),
        ("We moved last year.", "3 March, 2024", "We moved last year (2023)."),
        (
            "Tickets went on sale last month.",
            "3 March, 2024",
            "Tickets went on sale last month (February 2024).",
        ),
        ("我昨天去拿了体检报告。", "2024年3月3日", "我昨天（2024年3月2日）去拿了体检报告。"),
        # 2024-03-06 is a Wednesday: 上周五 is Friday of the week before
        ("上周五交的定金。", "2024年3月6日", "上周五（2024年3月1日）交的定金。"),
        ("两个月前换的工作。", "2024年3月6日", "两个月前（2024年1月）换的工作。"),
    ],
)
def test_relative_time_is_read_against_the_turns_date(text: str, label: str, expected: str) -> None:
    assert stamp_relative(text, label) == expected


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("We picked up the puppy yesterday.", ""),  # no date known: nothing to read against
        ("We picked up the puppy yesterday.", "some day"),
        ("The meeting is on 4 March 2024.", "3 March, 2024"),  # already absolute
        ("Yesterdays are gone, said the song title.", "3 March, 2024"),  # not the word
        ("我们明确了目标。", "2024年3月3日"),  # 明确 is not 明天
    ],
)
def test_nothing_is_added_without_a_reading(text: str, label: str) -> None:
    assert stamp_relative(text, label) == text


def test_label_styles() -> None:
    assert label_day("1:56 pm on 8 May, 2023") is not None
    assert label_day("2023-05-08") is not None
    assert label_day("2023年5月8日") is not None
    assert label_day("no date here") is None


def test_a_date_on_the_message_itself_labels_it() -> None:
    from policies.language.dates import DateLabels, stated_date

    assert stated_date({"role": "user", "name": "2024-03-05", "content": "hi"}) == "2024-03-05"
    assert stated_date({"role": "user", "metadata": {"date": "2024年3月5日"}}) == "2024年3月5日"
    assert stated_date({"role": "user", "name": "alice", "content": "hi"}) is None
    labels = DateLabels()
    # The proxy's clock (created_at) only when the conversation dates nothing.
    assert labels.add("we got the keys yesterday", 0.0, "5 March 2024") == "5 March 2024"
    assert labels.add("and the boxes came today", 0.0) == "5 March 2024"
    assert stamp_relative("we got the keys yesterday", labels.get(0)) == (
        "we got the keys yesterday (4 March 2024)"
    )
