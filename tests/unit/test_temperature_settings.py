"""A temperature is a measured setting: a new one for the same thing revises the old."""

from __future__ import annotations

from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def _qty(text: str) -> list[tuple[float | None, str]]:
    return [(v.number, v.unit) for v in extract_values(text) if v.kind == "qty"]


def test_temperatures_are_quantities_in_one_unit() -> None:
    assert _qty("Set the proofing box to 27°C.") == [(27.0, "°")]
    assert _qty("发酵箱调到27℃") == [(27.0, "°")]
    assert _qty("the smoker runs at 225 degrees") == [(225.0, "°")]
    # Look-alikes: a count, an angle-less "degree" of study, a percentage.
    assert all(unit != "°" for _, unit in _qty("we set out 27 chairs"))
    assert all(unit != "°" for _, unit in _qty("she has a degree in chemistry, 27% done"))


def test_new_temperature_for_the_same_thing_replaces_the_old() -> None:
    lines = active_values(
        [
            "Keep the proofing box at 27°C for the sourdough.",
            "Actually the proofing box should be at 25°C, the dough over-proofed.",
        ]
    )
    assert any("25°C" in v for v in lines)
    assert not any("27°C" in v and "25°C" not in v for v in lines)


def test_new_temperature_zh() -> None:
    lines = active_values(["发酵箱温度定在27℃。", "发酵箱改成25℃吧，面发过头了。"])
    assert any("25℃" in v for v in lines)
    assert not any("27℃" in v and "25℃" not in v for v in lines)


def test_temperature_of_another_thing_stands_beside() -> None:
    lines = active_values(
        ["Keep the aquarium at 26°C and change a fifth of the water weekly.",
         "The heater in the garage is set to 12°C."]
    )  # fmt: skip
    assert any("26°C" in v for v in lines)
    assert any("12°C" in v for v in lines)
