"""The number a value's text says, read for comparing one value with another.

Numerals as people write them ("两千五", "a hundred and fifty", "18,000", "320万"),
a frequency as times per week ("每周3次", "every other day"), a date as a rough day
of the year, and a percent or a split as the first party's share ("三成" 30, "60/40"
60). `policies.language.values` reads these into `Value.number`; the number words
are data (`policies/rules/<lang>/values.yaml`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from policies.rulebook import Joined

if TYPE_CHECKING:
    from policies.language.values import Value


_EN_NUMBERS = {
    "a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100,
}  # fmt: skip
_ZH_DIGITS = {
    "零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
    "八": 8, "九": 9,
}  # fmt: skip

# The number words are data: policies/rules/<lang>/values.yaml's fragments `number` (zh)
# and `word_number` (en), which policies/extract/relative/'s rules include too.
_ZH_NUMERAL = Joined("values", "numeral", ("zh",), flags=0)
_EN_NUMBER_WORD = Joined("values", "number_word", ("en",), flags=re.IGNORECASE)


_ZH_MAGNITUDES = {"十": 10, "百": 100, "千": 1000}


def zh_number(text: str) -> float | None:
    """Chinese numerals as people write amounts and counts: "五十二", "一百零五",
    and the spoken short forms whose last digit counts one place down: "一百五" is
    150, "两千五" 2,500, "三万五" 35,000 (but "一百零五" is 105)."""
    total, section, current, last = 0, 0, 0, 0
    zero = False
    for ch in text:
        if ch == "零":
            zero, current = True, 0
        elif ch in _ZH_DIGITS:
            current = _ZH_DIGITS[ch]
        elif ch in _ZH_MAGNITUDES:
            last = _ZH_MAGNITUDES[ch]
            section += (current or 1) * last
            current, zero = 0, False
        elif ch == "万":
            total += ((section + current) or 1) * 10_000
            section, current, last, zero = 0, 0, 10_000, False
        else:
            return None
    if current and not zero and last >= 100 and text[-2:-1] in ("百", "千", "万"):
        current *= last // 10
    return float(total + section + current)


def _en_number(word: str) -> float | None:
    """ "seventeen", "ninety-five", "a hundred and fifty"."""
    total = 0
    for part in re.split(r"[-\s]+", word.lower()):
        if part == "and":
            continue
        if part not in _EN_NUMBERS:
            return None
        if part == "hundred":
            total = (total or 1) * 100
        else:
            total += _EN_NUMBERS[part]
    return float(total)


def read_number(text: str, scaled: bool = False) -> float | None:
    """The first number in `text`; `scaled` applies 万/k/m multipliers (amounts)."""
    m = re.search(r"\d+(?:,\d{3})*(?:\.\d+)?", text)
    if m:
        n = float(m.group(0).replace(",", ""))
        tail = text[m.end() : m.end() + 3].strip().lower()
        if tail.startswith("万"):
            n *= 10_000
        elif scaled and re.match(r"k\b", tail):
            n *= 1_000
        elif scaled and re.match(r"m\b", tail):
            n *= 1_000_000
        return n
    m = _ZH_NUMERAL.search(text)
    if m:
        return zh_number(m.group(0))  # "三百二十万" is 3,200,000, like "320万"
    word = _EN_NUMBER_WORD.search(text)
    if word:
        return _en_number(word.group(0))
    return None


# The period a frequency counts in, in weeks; the first found wins.
_PERIOD_WEEKS = tuple(
    (Joined("values", f"period_{name}", ("en", "zh"), flags=0), weeks)
    for name, weeks in (
        ("hour", 1 / 168), ("day", 1 / 7), ("fortnight", 2.0), ("week", 1.0),
        ("month", 30 / 7), ("year", 52.0),
    )
)  # fmt: skip
_EVERY_SECOND = Joined("values", "every_second", ("en", "zh"), flags=0)
_COUNT_IN_PERIOD = Joined("values", "count_in_period", ("zh", "en"), flags=0)
_DOSE = Joined("values", "dose", ("zh",), flags=0)


def per_week(text: str) -> float | None:
    """How often per week a frequency is ("每周3次" → 3, "twice a week" → 2,
    "every other day" → 3.5, "daily" → 7), so that "改成每周4次" revises it."""
    low = text.lower()
    period = next((w for p, w in _PERIOD_WEEKS if p.search(low)), None)
    if period is None:
        return None
    every = re.search(r"(?:every|每|隔)\s?(\d+|[一两二三四五六七八九十]+)\s?(?:个)?(?![次\d])", low)
    if _EVERY_SECOND.search(low):
        period *= 2
    elif every and not re.search(r"(?:每|every\s?)(?:\d+|[一两二三四五六七八九十]+)次", low):
        n = read_number(every.group(1))
        period *= n or 1
    count = 1.0
    m = _COUNT_IN_PERIOD.search(low)
    if m:
        count = read_number(m.group(1) or m.group(2)) or 1.0
    elif "twice" in low:
        count = 2.0
    elif "three times" in low:
        count = 3.0
    elif "four times" in low:
        count = 4.0
    elif _DOSE.search(low):
        return None  # a dose per period, not a count
    return round(count / period, 3)


_MONTH_INDEX = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
)}  # fmt: skip


_ZH_MONTH_DAY = Joined("values", "month_day", ("zh",), flags=0)
_EN_MONTH_DAY = Joined("values", "month_day", ("en",), flags=0)


def date_number(text: str) -> float | None:
    """Day of year (roughly) for a month-and-day date, so that revisions prefer a nearby date."""
    low = text.lower()
    m = _ZH_MONTH_DAY.search(low)
    if m:
        return float(int(m.group(1)) * 31 + int(m.group(2)))
    m = _EN_MONTH_DAY.search(low)
    if m:
        month = _MONTH_INDEX.get(m.group(1) or m.group(4) or "")
        day = m.group(2) or m.group(3)
        if month and day:
            return float(month * 31 + int(day))
    m = re.search(r"\d{4}-(\d{2})-(\d{2})", low)
    if m:
        return float(int(m.group(1)) * 31 + int(m.group(2)))
    m = DAY_OF_MONTH.search(low)
    if m:
        return float(m.group(1))  # compared only with other days of a month (unit "dom")
    return None


DAY_OF_MONTH = Joined("values", "day_of_month", ("en",), flags=0)


_SPLIT_MARK = Joined("values", "split_mark", ("en", "zh"), flags=re.IGNORECASE)
_ZH_TENTHS = {"二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8}


def is_split(v: Value) -> bool:
    """Is this percent a share split between two parties ("60/40", "六四分")?"""
    return v.kind == "percent" and bool(_SPLIT_MARK.search(v.text))


def whole_split(raw: str) -> bool:
    """A "60/40" share adds up to the whole; other "a/b" are dates or fractions."""
    if "/" not in raw:
        return True
    a, b = (int(x) for x in raw.replace(" ", "").split("/"))
    return a + b == 100


def percent_number(raw: str, number: float | None) -> float | None:
    if _SPLIT_MARK.search(raw):
        return _first_share(raw)
    if raw.endswith(("成", "成半")) and number is not None:
        return number * 10 + (5 if raw.endswith("半") else 0)  # "三成" is 30%
    return number


def _first_share(raw: str) -> float:
    """The first party's share, in percent: "60/40" → 60, "六四分" → 60."""
    if "/" in raw:
        return float(raw.replace(" ", "").split("/")[0])
    if raw[:1] in _ZH_TENTHS:
        return float(_ZH_TENTHS[raw[0]] * 10)
    return 50.0
