"""English cardinals written out in full read as their number, with our own sentences."""

from __future__ import annotations

import pytest

from policies.language.values import extract_values


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("We can print a hundred and fifty programmes.", 150.0),
        ("Budget is three hundred and forty dollars for snacks.", 340.0),
        ("The hall takes two hundred chairs.", 200.0),
        ("We expect sixty-two runners.", 62.0),
    ],
)
def test_a_written_out_count_reads_as_its_number(text: str, number: float) -> None:
    assert [v.number for v in extract_values(text) if v.kind in ("qty", "money")] == [number]


@pytest.mark.parametrize(
    "text",
    ["One of the guests brought a dog.", "I'm ninety-eight percent sure it rained."],
)
def test_look_alikes_are_no_counts(text: str) -> None:
    assert not [v for v in extract_values(text) if v.kind == "qty"]
