"""A cap whose unit is a free word after the number bounds that word.

"at most 4 cats" caps cats, "不超过5辆" caps 辆: read with no measure, a cap of one
thing would be compatible with any cap and replace a cap of another ("at most 2
dogs"). The same thing capped again still replaces it.
"""

from __future__ import annotations

from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def _units(text: str) -> list[str]:
    return [v.unit for v in extract_values(text) if v.kind == "bound"]


def test_free_word_is_the_measure() -> None:
    assert _units("No more than 4 cats in the flat.") == ["below:cat"]
    assert _units("At most 3 crates of books.") == ["below:crate"]
    assert _units("At most 2 new hires this quarter.") == ["below:person"]
    assert _units("At most 3 kids per car.") == ["below:person"]  # "3 kids" is no 3k
    assert _units("小区里不超过5辆车。") == ["below:辆"]
    # Words that frame the number name nothing counted.
    assert _units("No more than 4 in the flat.") == ["below"]
    assert _units("At most 3 per car.") == ["below"]
    assert _units("花费在500以内的直接处理。") == ["below"]


def test_cap_of_another_thing_does_not_replace() -> None:
    en = active_values(["Keep it to at most 4 cats.", "At most 2 dogs, too."])
    assert "Keep it to at most 4 cats." in en
    zh = active_values(["车库里不超过3辆车。", "阳台上不超过6盆花。"])
    assert "车库里不超过3辆车。" in zh


def test_same_thing_capped_again_replaces() -> None:
    assert active_values(["Keep it to at most 4 cats.", "Actually, at most 6 cats."]) == [
        "Actually, at most 6 cats."
    ]
    assert active_values(["车库里不超过3辆车。", "改成不超过5辆车。"]) == ["改成不超过5辆车。"]
