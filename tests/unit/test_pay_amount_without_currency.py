"""An amount paid or charged, with its currency left out once it is known.

"I pay her $18 an hour" ... "I'll offer her a flat ninety for the evening": the
second amount is money, in the currency already in use, and it revises the
rate. A count after the same verbs ("offer them 3 options", "offer the first 50
a discount") is no amount of money.
"""

from __future__ import annotations

from policies.language.values import extract_values
from tests.unit.extraction_support import active_values


def kinds(text: str) -> list[tuple[str, str]]:
    return [(v.kind, v.text) for v in extract_values(text)]


def test_amount_after_a_payment_verb_is_money() -> None:
    assert kinds("I'll offer Tara a flat ninety for the evening.") == [("money", "ninety")]
    assert kinds("They charge 25 per head.") == [("money", "25")]
    assert ("money", "三百") in kinds("以后一天给她三百，按天算省事。")


def test_counts_after_the_same_verbs_are_not_money() -> None:
    assert kinds("We could offer them 3 options.") == [("qty", "3 options")]
    assert all(k != "money" for k, _ in kinds("Let's offer the first 50 a discount."))
    assert all(k != "money" for k, _ in kinds("给她两次机会吧。"))


def test_flat_fee_replaces_an_hourly_rate() -> None:
    values = active_values(
        [
            "My sitter is Tara, I pay her $18 an hour.",
            "I'll offer Tara a flat ninety for the evening, easier than counting hours.",
        ]
    )
    assert not any("$18" in v for v in values)
    assert any("flat ninety" in v for v in values)
    zh = active_values(["钟点工是李阿姨，一小时给她40块。", "以后一天给她三百，按天算省事。"])
    assert not any("40块" in v for v in zh)
