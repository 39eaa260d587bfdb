"""One day of a weekly schedule moved, the rest kept ("周三那节课换到周四，别的照旧")."""

from __future__ import annotations

import pytest

from tests.unit.extraction_support import active_values

SYSTEM = "You help a community centre run its weekly programme. 你帮社区中心安排每周的活动。"


@pytest.mark.parametrize(
    ("schedule", "move", "now", "gone"),
    [
        (
            "Our yoga classes run every Monday and Wednesday at 6pm in the library.",
            "Move the Wednesday class to Thursday; everything else stays.",
            "Monday and Thursday at 6pm",
            "Monday and Wednesday",
        ),
        (
            "The choir rehearses on Tuesdays and Fridays, 7 to 9pm, in the chapel.",
            "Let's do Saturdays instead of Fridays from now on.",
            "Tuesdays and Saturdays, 7 to 9pm",
            "Tuesdays and Fridays",
        ),
        (
            "读书会每周二、四晚上七点在社区图书馆。",
            "周四那次改到周五吧，其他照旧。",
            "每周二、五晚上七点",
            "二、四",
        ),
        (
            "书法课定在每周一和周三下午三点。",
            "周一的挪到周六吧。",
            "每周六和周三下午三点",
            "周一和周三",
        ),
    ],
)
def test_one_day_of_a_listed_schedule_moves(schedule: str, move: str, now: str, gone: str) -> None:
    values = active_values([schedule, move], SYSTEM)
    assert any(now in v for v in values), values
    assert not any(gone in v and now not in v for v in values), values


@pytest.mark.parametrize(
    ("schedule", "move", "kept"),
    [
        # Another event on one of the schedule's days.
        (
            "Our yoga classes run every Monday and Wednesday at 6pm in the library.",
            "Move my dentist appointment from Wednesday to Friday.",
            "Monday and Wednesday",
        ),
        # A supposition, a question, a refusal.
        (
            "读书会每周二、四晚上七点在社区图书馆。",
            "如果周四那次改到周五，会不会有人来不了？",
            "每周二、四",
        ),
        (
            "The choir rehearses on Tuesdays and Fridays, 7 to 9pm, in the chapel.",
            "Could we move the Friday one to Saturday?",
            "Tuesdays and Fridays",
        ),
        (
            "书法课定在每周一和周三下午三点。",
            "周三的别改到周五，老师那天有课。",
            "每周一和周三",
        ),
    ],
)
def test_a_move_about_something_else_or_not_decided_changes_nothing(
    schedule: str, move: str, kept: str
) -> None:
    values = active_values([schedule, move], SYSTEM)
    assert any(kept in v for v in values), values


def test_two_schedules_with_the_day_leave_the_move_unresolved() -> None:
    values = active_values(
        [
            "Yoga is every Monday and Wednesday at 6pm.",
            "Pilates is every Wednesday and Friday at 7pm.",
            "Move the Wednesday one to Thursday.",
        ],
        SYSTEM,
    )
    assert any("Monday and Wednesday" in v for v in values), values
    assert any("Wednesday and Friday" in v for v in values), values


def test_the_weekday_digits_of_code_and_rules_agree() -> None:
    """`ZH_DIGIT` reads the digits the rules match as numbers, in the same order."""
    from policies.extract.weekdays import ZH_DIGIT
    from policies.rulebook import fragment

    assert fragment("weekdays", "zh", "digit") == ZH_DIGIT
