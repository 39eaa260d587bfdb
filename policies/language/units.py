"""The unit a value's text is in, and what a value measures.

Two values compete for one slot only when their units match ("3 nights" and "1
night", "$450" and "$600"), so the unit is normalised: English unit words to the
singular, durations to days or minutes ("two weeks" is 14 days), a threshold to its
side and measure ("below:usd"), a cap with no unit of its own to the word it counts
("at most 3 bikes"), a percent to an interest rate or not. The words are data
(`policies/rules/<lang>/values.yaml`); the tables that map a word to its unit stay
here.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from policies.language.numbers import DAY_OF_MONTH
from policies.rulebook import Joined, fragment

if TYPE_CHECKING:
    from policies.language.values import Value


# Units that make a number a countable quantity; the value is normalised to
# the singular so that "3 nights" and "1 night" compete.
EN_UNITS = {
    "night": "night", "nights": "night", "day": "day", "days": "day", "week": "week",
    "weeks": "week", "month": "month", "months": "month", "year": "year", "years": "year",
    "hour": "hour", "hours": "hour", "h": "hour", "minute": "minute", "minutes": "minute",
    "min": "minute", "mins": "minute", "second": "second", "seconds": "second",
    "seat": "seat", "seats": "seat", "people": "person", "persons": "person",
    "person": "person", "guest": "person", "guests": "person", "table": "table",
    "tables": "table", "page": "page", "pages": "page", "item": "item", "items": "item",
    "run": "run", "runs": "run", "time": "time", "times": "time", "mb": "mb", "gb": "gb",
    "kb": "kb", "tb": "tb", "km": "km", "kg": "kg", "words": "word", "word": "word",
    "lines": "line", "line": "line", "rows": "row", "users": "user", "user": "user",
    "requests": "request", "request": "request", "slides": "slide", "slide": "slide",
    "questions": "question", "question": "question", "exercises": "exercise",
    "exercise": "exercise", "servings": "serving", "serving": "serving", "kids": "person",
    "adults": "person", "rooms": "room", "room": "room", "bullets": "bullet",
    "bullet": "bullet", "points": "point", "retries": "retry", "attempts": "retry",
    "gpus": "gpu", "cores": "core", "workers": "worker", "replicas": "replica",
    "licenses": "license", "licences": "license", "sessions": "session",
    "mbps": "mbps", "gbps": "mbps", "gigabit": "mbps", "megabit": "mbps",
    "fortnight": "fortnight", "fortnights": "fortnight",
    # How a group is split up: "in three batches", "分四批".
    "batch": "batch", "batches": "batch", "wave": "batch", "waves": "batch",
    # People counted under another name are still a headcount: "up to 18 volunteers"
    # and "fourteen trainees" count the same cohort.
    "volunteers": "person", "trainees": "person", "students": "person",
    "pupils": "person", "attendees": "person", "participants": "person",
    "members": "person", "testers": "person", "players": "person", "singers": "person",
    "tutors": "person", "learners": "person", "campers": "person", "runners": "person",
    "employees": "person", "staff": "person", "visitors": "person", "children": "person",
    "diners": "person", "delegates": "person", "recruits": "person", "hires": "person",
    # Electric power and energy ("a 7.2 kW system", "a 13.5 kWh battery").
    "kw": "kw", "kwh": "kwh",
}  # fmt: skip
# Durations in one measure, so that "ten days" revises "two weeks" and "三周"
# revises "一个月": the unit a length of time is written in is no part of the slot.
# Nights stay apart (a stay counted in nights is its own setting), so do
# hours and minutes (a length of a day, not of a plan).
_DAYS_PER = {
    "day": 1, "天": 1, "week": 7, "周": 7, "星期": 7, "fortnight": 14, "month": 30,
    "个月": 30, "year": 365, "年": 365,
}  # fmt: skip
_MINUTES_PER = {"minute": 1, "分钟": 1, "hour": 60, "小时": 60}
# A connection speed, however written ("500 Mbps", "1 Gbps", "a gig symmetrical",
# "gigabit fibre"): one measure, in Mbps, so that a new speed revises the old one.
DATA_RATE = Joined("values", "data_rate", ("en",), flags=re.IGNORECASE)
GIGA = Joined("values", "giga", ("en",), flags=re.IGNORECASE)


_TEMPERATURE = Joined("values", "temperature", ("en",), flags=0)
_PEOPLE_END = Joined("values", "people_end", ("zh",), flags=0)
_UNIT_END = Joined("values", "unit_end", ("zh",), flags=0)
_LABEL_KIND = Joined("values", "label_kind", ("zh", "en"), flags=0)


def unit_of(kind: str, text: str) -> str:
    low = text.lower()
    if kind == "date" and DAY_OF_MONTH.search(low):
        return "dom"
    if kind == "qty":
        if DATA_RATE.search(low):
            return "mbps"
        if _TEMPERATURE.search(low):
            return "°"
        if _PEOPLE_END.search(text):
            return "人"
        if text.endswith("个"):
            return "个"
        m = _UNIT_END.search(text)
        if m:
            # "8场" and "十期" both count a series' sessions.
            # "16支队" and "十四个队" both count teams.
            return {
                "个小时": "小时", "个人": "人", "口人": "人", "位": "人", "期": "场",
                "支队": "队", "个队": "队", "支球队": "队",
            }.get(m.group(0), m.group(0))  # fmt: skip
        last = re.split(r"[- ]", low)[-1]
        if last in EN_UNITS:
            return EN_UNITS[last]
        return last[:-1] if last.endswith("s") and not last.endswith("ss") else last
    if kind == "money":
        for unit, marks in (
            ("eur", ("€", "eur")), ("usd", ("$", "dollar", "buck", "usd")),
            ("jpy", ("yen", "jpy", "日元")),
            ("gbp", ("£", "pound", "gbp")), ("cny", ("元", "块", "rmb", "cny", "￥")),
        ):  # fmt: skip
            if any(mark in low for mark in marks):
                return unit
        return "?"
    if kind == "bound":
        return bound_unit(text, "")
    if kind == "version":
        m = re.match(r"[a-z]+", low)
        return m.group(0) if m and m.group(0) not in ("v", "version", "release") else ""
    if kind == "label":
        m = _LABEL_KIND.search(low)
        return m.group(0) if m else ""
    return ""


_CURRENCY_MARK = Joined("values", "currency_mark", ("en", "zh"), flags=re.IGNORECASE)
CURRENCIES = frozenset({"usd", "eur", "jpy", "gbp", "cny", "?"})


_SHIFT_AFTER = Joined("values", "shift_after", ("en",), flags=re.IGNORECASE)


def as_duration(
    kind: str, unit: str, number: float | None, raw: str, before: str, after: str
) -> tuple[str, float | None]:
    """A length of time in days ("5周" is 35 days) or in minutes ("2 hours" is 120):
    the (unit, number) a revision in another unit can be compared with. A bound keeps
    its side ("below:周" becomes "below:day"). Not an age ("3周岁"), a calendar year
    ("2024年"), a day counted in order ("第二天"), nor a stretch of time pointed at
    ("这两周", "最近三天"), nor a shift ("晚两周", "推迟三天", "two weeks later"): none of
    them is how long something lasts."""
    if kind not in ("qty", "bound") or number is None:
        return unit, number
    side, _, measure = unit.rpartition(":")
    prefix = f"{side}:" if side else ""
    if after.startswith("岁") or before in ("第", "这", "那", "近", "晚", "早", "迟", "后", "前"):
        return unit, number
    if _SHIFT_AFTER.match(after):
        return unit, number
    if measure in ("year", "年") and (number >= 100 or "月" in raw):
        return unit, number
    if measure in _DAYS_PER:
        return f"{prefix}day", number * _DAYS_PER[measure]
    if measure in _MINUTES_PER:
        return f"{prefix}minute", number * _MINUTES_PER[measure]
    return unit, number


_UNIT_START = Joined("values", "unit_start", ("zh",), flags=0)


@cache
def _scaled_number() -> re.Pattern[str]:
    """A number and its scale (万/千/百 or k): digits or the Chinese numerals of the data
    (one group of both scripts, so code; compiled on first use)."""
    zh = fragment("values", "zh", "number")
    return re.compile(rf"(?:\d[\d,.]*|{zh})\s*(?:[万千百]|[kK](?![a-zA-Z]))?\s*")


def _bound_measure(text: str) -> str:
    """What a threshold bounds: a currency, "%", or the counted unit ("minute", "字")."""
    if _CURRENCY_MARK.search(text):
        return unit_of("money", text)
    if "%" in text:
        return "%"
    # "k" is a thousand only as a word's end: "3 kids" is no 3,000 "ids".
    m = _scaled_number().search(text)
    if m is None:
        return ""
    tail = text[m.end() :]
    zh = _UNIT_START.match(tail)
    if zh:
        return unit_of("qty", "1" + zh.group(0))
    word = re.match(r"([a-z]+)", tail.lower())
    if DATA_RATE.match(tail):
        return "mbps"
    if word and word.group(1) in EN_UNITS:
        return EN_UNITS[word.group(1)]
    return ""


# The side a threshold bounds, by its words (lower-cased), read in this order.
_NOT_ABOVE = Joined("values", "bound_not_above", ("zh", "en"), flags=0)
_AT_LEAST = Joined("values", "bound_at_least", ("zh", "en"), flags=0)
_BELOW = Joined("values", "bound_below", ("zh", "en"), flags=0)
_NEGATED_BEFORE = Joined("values", "negated_before", ("zh", "en"), flags=0)


def bound_unit(text: str, before: str, after: str = "") -> str:
    """Side ("below" / "above") and measure of a threshold, as "below:usd".

    "don't want to go over $18,000" bounds from below like "at most $18,000".
    """
    low = text.lower()
    if _NOT_ABOVE.search(low):
        side = "below"
    elif _AT_LEAST.search(low):
        side = "above"
    elif _BELOW.search(low):
        side = "below"
    elif _NEGATED_BEFORE.search(before.lower()):
        side = "below"  # "never go over 2 hours", "别超过"
    else:
        side = "above"
    measure = _bound_measure(text) or _counted_around(text, before, after)
    return f"{side}:{measure}" if measure else side


# People named right before "under 12" / "over 65": the number is their age.
_AGED = Joined("values", "aged", ("en",), flags=re.IGNORECASE)


_AGE_SIDE = Joined("values", "age_side", ("en",), flags=re.IGNORECASE)


def _counted_around(text: str, before: str, after: str) -> str:
    """What a cap with no unit of its own bounds, from the words around it: "children
    under 12" is an age, no price or head count."""
    if _AGED.search(before) and _AGE_SIDE.match(text):
        return "age"
    return _counted_word(after)


# Words after a cap's number that qualify or frame it, not name what it counts:
# "at most 2 new hires" counts hires, "at most 3 per car" / "no more than 4 in the
# tank" name no thing counted.
_MODIFIERS = frozenset(
    "new old big small large little extra more additional other different separate full"
    " young used fresh whole single double tiny huge".split()
)
_NOT_COUNTED = frozenset(
    "in on at of for per a an the to and or but by from with without than each apiece"
    " total max maximum tops or less fewer more overall altogether please though too"
    " either tonight today tomorrow now then there here is are be can will would should"
    " may might must at all one ones them us people's i we you they it this that these"
    " those so if when as".split()
)
# A Chinese measure word after the number ("不超过5辆", "最多3只"); "个" counts anything.
_COUNTER = Joined("values", "counter", ("zh",), flags=0)


def _counted_word(after: str) -> str:
    """What a cap counts when its unit is a free word after the number: "no more than
    4 fish" caps fish, "at most 3 bikes" caps bikes, "不超过5辆" caps 辆. Without it a
    cap of one thing would read as a cap of anything, and replace a cap of another."""
    zh = _COUNTER.match(after)
    if zh:
        return zh.group(1)
    for word in re.findall(r"[A-Za-z][A-Za-z'-]*|[^\sA-Za-z]", after)[:3]:
        low = str(word).lower()
        if low in _MODIFIERS:
            continue
        if low in _NOT_COUNTED or not re.fullmatch(r"[a-z]+", low):
            return ""
        if low in EN_UNITS:
            return EN_UNITS[low]
        # One name for one and many: "fish", "gallons" / "a gallon", "berries".
        if low.endswith("ies") and len(low) > 4:
            return low[:-3] + "y"
        if low.endswith("s") and not low.endswith("ss") and len(low) > 3:
            return low[:-1]
        return low
    return ""


def bound_side(v: Value) -> str:
    return v.unit.split(":", 1)[0]


def measure(v: Value) -> str:
    """What a value measures, for comparing thresholds with amounts ("" when unknown)."""
    if v.kind == "bound":
        return v.unit.split(":", 1)[1] if ":" in v.unit else ""
    if v.kind == "percent":
        return "%"
    if v.kind in ("money", "qty"):
        return v.unit
    return ""


def measures_compatible(a: Value, b: Value) -> bool:
    ma, mb = measure(a), measure(b)
    if not ma or not mb or ma == mb:
        return True
    return ma in CURRENCIES and mb in CURRENCIES and "?" in (ma, mb)


_RATE = Joined("values", "rate", ("en", "zh"), flags=re.IGNORECASE)


def percent_unit(around: str, raw: str) -> str:
    """ "rate" for an interest rate ("6.9% APR", "the rate … is 5.9%"), else ""."""
    return "rate" if _RATE.search(around) else ""
