"""What a relative change is, and the amounts it can be said in (zh + en).

The number, money, percentage, duration and classifier fragments are shared data
(policies/rules/<lang>/relative.yaml, on values.yaml's number words): the change
patterns of `reading` are composed from them, and `held` reads the quantities of
stored items with the same fragments, so that a change and the value it changes are
read alike ("两千五", "ninety-five", "$1.5k").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The number parsing of `policies.language.numbers` (digits, Chinese numerals, English
# number words), reused so that both read "两千五" and "ninety-five" alike. The amount
# fragments (money, percent, duration, classifier) are data: policies/rules/<lang>/relative.yaml,
# composed from values.yaml's number words.
from policies.language.numbers import read_number
from policies.rulebook import Joined

# Is an English amount money ("$300", "two grand"), and does it end in a unit of time.
_EN_MONEY = Joined("relative", "money_amount")
EN_DUR_UNIT_END = Joined("relative", "duration_unit_end")

# Particles and fillers that end a Chinese counted noun ("再加两个吧").
ZH_PARTICLES = Joined("relative", "particles")

# Counted nouns that are talk, not quantities ("two more questions", "one more thing").
_TALK_NOUNS = frozenset(
    "thing things question questions point points note notes idea ideas example examples "
    "detail details comment comments tip tips suggestion suggestions time times reminder "
    "reminders favour favor favours favors minute second try look word words rule rules change "
    "changes request requests update updates correction corrections thought thoughts".split()
)
ZH_TALK_NOUNS = ("问题", "事", "点", "句", "下", "遍", "次机会")


@dataclass(frozen=True, slots=True)
class Change:
    """One relative change read from a sentence."""

    sign: int  # +1: more / later; -1: less / earlier
    amount: float
    measure: str  # "count" | "money" | "percent" | "points" | "minutes" | "days" | "months"
    unit: str  # counted noun, currency, or "" when not said
    amount_text: str
    sentence: str
    start: int  # span of the cue in the sentence
    end: int
    cls: str = ""  # a Chinese classifier that says what is counted ("箱", "桌"); not 个/名/位


def singular(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def currency_of(text: str) -> str:
    low = text.lower()
    for unit, marks in (
        ("usd", ("$", "dollar", "buck")), ("eur", ("€", "euro")), ("gbp", ("£", "pound", "quid")),
        ("cny", ("元", "块", "毛", "￥")),
    ):  # fmt: skip
        if any(mark in low for mark in marks):
            return unit
    return "?"


def amount_number(text: str) -> float | None:
    """The number an amount says: "$1.5k" 1,500, "两千" 2,000, "half an hour" 0.5, "a week" 1."""
    low = text.lower().strip()
    if low.startswith("half") or low.startswith("半"):
        return 0.5
    if low.startswith("a couple"):
        return 2.0
    if re.match(r"an?\b", low):
        return 1.0
    n = read_number(text, scaled=True)
    if n is not None and re.search(r"\d\s?千", text):
        n *= 1000
    if n is not None and re.search(r"\bgrand\b", low):
        n *= 1000
    return n


_EN_DURATION_MINUTES = {"minute": 1, "min": 1, "hour": 60, "hr": 60}
_EN_DURATION_DAYS = {"day": 1, "week": 7}
ZH_DURATION = {
    "分钟": ("minutes", 1), "个小时": ("minutes", 60), "小时": ("minutes", 60),
    "个钟头": ("minutes", 60), "钟头": ("minutes", 60), "天": ("days", 1), "日": ("days", 1),
    "个星期": ("days", 7), "星期": ("days", 7), "礼拜": ("days", 7), "周": ("days", 7),
    "个月": ("months", 1),
}  # fmt: skip


def en_amount(amount: str, noun: str) -> tuple[float, str, str] | None:
    """(number, measure, unit) of an English amount and the noun after it."""
    low = amount.lower()
    n = amount_number(amount)
    if n is None:
        return None
    if _EN_MONEY.search(amount) and _EN_MONEY.compiled.fullmatch(amount):
        return n, "money", currency_of(amount)
    if re.search(r"points?$", low):
        return n, "points", "%"
    if re.search(r"%|percent", low):
        return n, "percent", "%"
    unit = EN_DUR_UNIT_END.search(low)
    if unit:
        word = singular(unit.group(0)).rstrip("s")
        if word in _EN_DURATION_MINUTES:
            return n * _EN_DURATION_MINUTES[word], "minutes", ""
        if word in _EN_DURATION_DAYS:
            return n * _EN_DURATION_DAYS[word], "days", ""
        return n, "months", ""
    if noun in _TALK_NOUNS:
        return None
    # "two more" counts whatever the topic names; "two more guards" counts guards
    return n, ("count" if noun else "number"), singular(noun) if noun else ""
