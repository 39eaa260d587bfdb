"""A value's role in its sentence decides what it can revise (`policies.language.value_roles`).

Two values of the same kind and unit are versions of one setting only when both
*set* it. An example ("like 18:00") illustrates a format; a hyphenated count
before a noun ("the 12-hour clock", "a three-person team") describes that noun;
a value under a condition ("if they pay upfront, $34") is a case beside the
plain value. None of these silently replaces another value of the same kind;
said about the same thing, or with a change cue, they still revise.
"""

from __future__ import annotations

from policies.language.value_roles import attribute_head, example_spans, is_example
from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def test_attribute_head_names_the_described_noun() -> None:
    text = "Please use the 12-hour clock in the schedule."
    (v,) = extract_values(text)
    assert attribute_head(text, v) == "clock"
    plain = "I'm booked for 8 hours of filming."
    (w,) = extract_values(plain)
    assert attribute_head(plain, w) is None  # a length of time, said as one
    zh = "时间都用24小时制写。"
    (z,) = extract_values(zh)
    assert attribute_head(zh, z) == "制"


def test_clock_format_does_not_replace_a_length_of_time() -> None:
    values = active_values(
        ["I'm booked for 8 hours on Saturday.", "Please use the 12-hour clock in the schedule."]
    )
    assert "I'm booked for 8 hours on Saturday." in values
    zh = active_values(["我这次要拍10个小时。", "以后时间都用24小时制写。"])
    assert "我这次要拍10个小时。" in zh


def test_team_size_adjective_does_not_revise_a_plan_limit() -> None:
    values = active_values(
        [
            "Basic covers up to 12 staff, one shop and a shared calendar.",
            "Sam wants a free plan instead of the trial, he says that's how others grew. "
            "I think it's a headache for a three-person team, and we haven't agreed.",
        ]
    )
    assert "Basic covers up to 12 staff, one shop and a shared calendar." in values


def test_attribute_of_the_same_noun_still_revises() -> None:
    values = active_values(
        ["Customers get a 7-day refund window.", "We settled on a 10-day refund window."]
    )
    assert values == ["We settled on a 10-day refund window."]
    zh = active_values(["时间用12小时制写。", "以后改成24小时制吧。"])
    assert zh == ["以后改成24小时制吧。"]


def test_conditional_case_stands_beside_the_plain_value() -> None:
    base = "The base plan is $40 per seat per month."
    values = active_values(
        [base, "If they pay upfront for two years, we can drop to $34 per seat."]
    )
    assert base in values
    assert len(values) == 2
    zh = active_values(["标准间每晚380元。", "要是客人连住三晚，可以按每晚320元算。"])
    assert "标准间每晚380元。" in zh
    assert len(zh) == 2


def test_condition_on_the_speakers_own_move_is_the_new_value() -> None:
    values = active_values(
        [
            "The gym quoted us $60 a month for the family pass.",
            "The manager said if we sign up for a year the family pass is $48 a month.",
        ]
    )
    assert not any("$60" in v for v in values)


def test_only_needs_is_no_condition() -> None:
    values = active_values(["报告正文不少于8000字。", "刚收到通知，报告正文只要6000字以上就行了。"])
    assert not any("8000字" in v for v in values)


def test_unconditional_new_value_still_revises() -> None:
    values = active_values(
        ["The base plan is $40 per seat per month.", "Let's set the base plan at $45 per seat."]
    )
    assert values == ["Let's set the base plan at $45 per seat."]
    zh = active_values(["标准间每晚380元。", "标准间每晚420元吧。"])
    assert zh == ["标准间每晚420元吧。"]


def test_example_spans() -> None:
    text = "Label each block with its start time instead, e.g. 18:00 or 19:30. Thanks."
    times = [v for v in extract_values(text) if v.kind == "time"]
    assert times
    assert all(is_example(text, v) for v in times)
    assert example_spans("I'd like 3 rooms for the night.") == []  # "like" that asks
    zh = "每个环节前面都标上开始时间，比如18:00、19:30。"
    assert all(is_example(zh, v) for v in extract_values(zh) if v.kind == "time")


def test_example_values_set_nothing() -> None:
    values = active_values(
        [
            "Doors open at 6:45pm.",
            "Label each block with its start time instead, e.g. 18:00 or 19:30.",
        ]
    )
    assert "Doors open at 6:45pm." in values
    zh = active_values(["晚宴七点半开始。", "每个环节前面都标上开始时间，比如18:00、19:30。"])
    assert "晚宴七点半开始。" in zh


def test_a_real_time_change_still_revises() -> None:
    values = active_values(["Doors open at 6:45pm.", "Actually doors open at 7:15pm instead."])
    assert values == ["Actually doors open at 7:15pm instead."]
