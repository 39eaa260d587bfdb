"""A rule switched off by naming the limit it sets ("the 150-word limit is off",
"行数限制取消了"), with our own sentences; look-alikes that must not revoke it."""

from __future__ import annotations

import pytest

from policies.extract.limits import named_limit
from tests.unit.extraction_support import active_values

SYSTEM = "You are a helpful assistant."


@pytest.mark.parametrize(
    ("rule", "revocation", "gone"),
    [
        (
            "Keep every answer under 150 words, I'm reading on the train.",
            "The 150-word limit is off, I'm home with a laptop now.",
            "under 150 words",
        ),
        (
            "Please stay under 300 words per summary.",
            "That word cap no longer applies, write as much as you need.",
            "under 300 words",
        ),
        ("每次回答不超过300字，我用手表看。", "字数限制取消了，我换回电脑了。", "不超过300字"),
        ("总结控制在10行以内。", "不用再限制行数了，写全一点。", "10行以内"),
    ],
)
def test_a_limit_named_by_its_measure_is_revoked(rule: str, revocation: str, gone: str) -> None:
    values = active_values(["We're planning a garden club newsletter.", rule, revocation], SYSTEM)
    assert not any(gone in v for v in values)


@pytest.mark.parametrize(
    ("rule", "other"),
    [
        # Another rule switched off: the word cap stays.
        (
            "Keep every answer under 150 words.",
            "The weekend curfew is off, the kids are older now.",
        ),
        # A word count mentioned without switching anything off.
        ("Keep every answer under 150 words.", "The word count on the last draft was about right."),
        ("每次回答不超过300字。", "停车限制取消了，周末可以停门口。"),
    ],
)
def test_other_limits_leave_the_word_cap(rule: str, other: str) -> None:
    values = active_values([rule, other], SYSTEM)
    assert any(rule.rstrip(".。") in v for v in values)


def test_named_limit_reads_the_measure() -> None:
    assert named_limit("the 200-word limit is off") == "word"
    assert named_limit("字数限制取消了") == "字"
    assert named_limit("不用再限制行数了") == "行"
    assert named_limit("the speed limit on that road") is None


def test_the_clause_holding_the_limit_goes_with_it() -> None:
    values = active_values(
        [
            "Keep replies under 120 words, I skim them between classes.",
            "The 120-word limit is off, I'm reading at home and skimming less now.",
        ],
        SYSTEM,
    )
    assert not any("under 120 words" in v for v in values)
