"""An ordinal that ranks a person ("我第一个报的名", "she was the first one to
arrive") is no pick from the assistant's list; "就第二个吧", "the first one, please"
still are. Our own sentences."""

from __future__ import annotations

import pytest

from policies.extract.choices import chosen_option, picked

OPTIONS = ["Tandem ride", "Repair clinic", "Kids' obstacle course"]


@pytest.mark.parametrize(
    "sentence",
    [
        "我第一个就报了名，结果还没人来。",
        "他第二个到的，帮忙搬了桌子。",
        "大家第一个想到的都是你。",
        "She was the first one to arrive and the last to leave.",
        "Tom was the second one who offered to help.",
    ],
)
def test_a_doer_ranked_first_picks_nothing(sentence: str) -> None:
    assert chosen_option(sentence, OPTIONS) is None


@pytest.mark.parametrize(
    ("sentence", "option"),
    [
        ("就第二个吧，孩子们会喜欢。", "Repair clinic"),
        ("第一个挺好，就它了。", "Tandem ride"),
        ("Let's do the third one.", "Kids' obstacle course"),
        ("The first one, please, people love a ride.", "Tandem ride"),
    ],
)
def test_a_pick_still_resolves(sentence: str, option: str) -> None:
    assert chosen_option(sentence, OPTIONS) == option


def test_picked_reads_the_resolved_option() -> None:
    assert picked("就第二个吧 → Repair clinic") == "Repair clinic"
    assert picked("Budget is tight, arrows → go here") == "go here"
    assert picked("No choice in this sentence.") is None
