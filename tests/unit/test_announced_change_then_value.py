"""A sentence that only announces a change of something ("Correction on the X.", "The
X moves.", "关于X，我再说一下。") and a later sentence with the value are one revision;
a date changed by its day of the month alone ("Sunday the 15th") moves a full date."""

from __future__ import annotations

from tests.unit.extraction_support import active_values


def _current(lines: list[str], word: str) -> list[str]:
    return [v for v in active_values(lines) if word in v]


def test_topic_first_then_value_en() -> None:
    lines = active_values(
        ["Set the dough proofer to 27°C.",
         "Correction on the proofer. The baker next door warned me off 27. So 24°C it is."]
    )  # fmt: skip
    assert any("24°C" in v for v in lines)
    assert not any("27°C" in v and "24°C" not in v for v in lines)


def test_topic_first_then_value_zh() -> None:
    lines = active_values(
        ["毕业论文初稿的截止日期是下周四。", "关于截止日期，我再说一下。导师说定在下周二吧。"]
    )
    assert any("下周二" in v for v in lines)
    assert not any("下周四" in v and "下周二" not in v for v in lines)


def test_day_of_month_moves_a_full_date() -> None:
    lines = active_values(
        ["The garage sale is Saturday, June 7, on our driveway.",
         "The garage sale moves. Sunday the 15th suits the neighbours better."]
    )  # fmt: skip
    assert any("the 15th" in v for v in lines)
    assert not any("June 7" in v for v in lines)


def test_day_of_month_zh() -> None:
    lines = active_values(["体检定在5月8日周四上午。", "体检的时间有变。改到15号周四吧。"])
    assert any("15号" in v for v in lines)
    assert not any("5月8日" in v for v in lines)


def test_topic_then_an_unrelated_value_revises_nothing() -> None:
    lines = active_values(
        [
            "毕业论文初稿的截止日期是下周四。",
            "关于截止日期，我再说一下。我这周末要去杭州开会，住3天。",
        ]
    )
    assert any("下周四" in v for v in lines)


def test_another_event_on_a_day_of_the_month_stands_beside() -> None:
    lines = active_values(
        [
            "The garage sale is Saturday, June 7, on our driveway.",
            "The piano recital is Sunday the 15th.",
        ]
    )
    assert any("June 7" in v for v in lines)
    assert any("the 15th" in v for v in lines)


def test_weekday_and_other_date_in_one_item_keep_the_other() -> None:
    # Only a day told twice ("Saturday, June 7") goes with the change, not a second event.
    lines = active_values(
        [
            "Swim lessons are on Saturday and the recital is June 7.",
            "Actually, swim lessons move to Sunday.",
        ]
    )
    assert any("June 7" in v for v in lines)
