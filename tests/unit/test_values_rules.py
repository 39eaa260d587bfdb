"""values.py's patterns that name words are data (policies/rules/<lang>/values.yaml);
what the code still spells of them must agree with the data.

The number words are only data: numbers.py and policies/extract/relative/ read them from
values.yaml's fragments. units.py normalises the English unit words (`EN_UNITS`), so
those are spelled in both places; the unit test fails when one side changes without the
other.
"""

from __future__ import annotations

import re

from policies.language import numbers, units, values
from policies.rulebook import fragment, rules


def test_number_words_are_only_data() -> None:
    for name in ("_EN_WORD_NUM", "_EN_BELOW_100", "_ZH_NUM"):
        assert not hasattr(values, name)
        assert not hasattr(numbers, name)
    assert numbers.read_number("about forty-two") == 42
    assert numbers.read_number("大约三百二十") == 320


def test_relative_rules_include_the_number_words() -> None:
    en, zh = rules("relative", "en"), rules("relative", "zh")
    assert fragment("values", "en", "word_number") in en["counted_words"].source
    assert fragment("values", "zh", "number") in zh["counted_classifier"].source


def test_unit_words_are_the_normalised_units_longest_first() -> None:
    words = fragment("values", "en", "unit")
    assert words == "|".join(sorted(units.EN_UNITS, key=len, reverse=True))


def test_the_value_patterns_compile() -> None:
    for _kind, pattern in values.VALUE_PATTERNS:
        compiled = getattr(pattern, "compiled", pattern)
        assert isinstance(compiled, re.Pattern)
