"""values.py's patterns that name words are data (policies/rules/<lang>/values.yaml);
what the code still spells of them must agree with the data.

policies/extract/relative/ composes patterns from values.py's number words at import,
and values.py normalises the English unit words (`_EN_UNITS`), so those are spelled in
both places; these tests fail when one side changes without the other.
"""

from __future__ import annotations

import re

from policies.language import values
from policies.rulebook import fragment


def test_number_words_agree_with_the_data() -> None:
    assert fragment("values", "en", "word_number") == values._EN_WORD_NUM
    assert fragment("values", "zh", "number") == values._ZH_NUM


def test_unit_words_are_the_normalised_units_longest_first() -> None:
    units = fragment("values", "en", "unit")
    assert units == "|".join(sorted(values._EN_UNITS, key=len, reverse=True))


def test_the_value_patterns_compile() -> None:
    for _kind, pattern in values._PATTERNS:
        compiled = getattr(pattern, "compiled", pattern)
        assert isinstance(compiled, re.Pattern)
