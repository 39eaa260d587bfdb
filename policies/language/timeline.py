"""Relative time in a recalled turn, read against the day the turn was said.

A turn recalled long after it was said keeps its words: "we signed the lease
yesterday", "上周五交的定金". Shown beside a question asked weeks later, its
"yesterday" means the wrong day to a reader who only sees the question's
"now". The turn's own date is known (its label: the session date the
conversation states, `policies.language.dates`), so the day it refers to can be
written next to the words, not instead of them: "yesterday (7 May 2023)".
The words stay verbatim (DESIGN: dates are never paraphrased); the reading
is an addition, in the label's own style.

Rules are data: each names a relative expression (its words per language and
their examples in `policies/rules/<lang>/timeline.yaml`) and the shift it means
(here); whole readings are tested in `tests/unit/test_timeline.py`. The date
formats of a label stay code: digits and month names in a fixed shape.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from policies.rulebook import Joined

_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_MON = r"(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_LABEL_FORMS = (
    re.compile(r"(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})"),
    re.compile(r"(?P<y>\d{4})年(?P<m>\d{1,2})月(?P<d>\d{1,2})日"),
    re.compile(rf"(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MON},?\s+(?P<y>\d{{4}})", re.I),
    re.compile(rf"{_MON}\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y>\d{{4}})", re.I),
)
_EN_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ZH_WEEKDAYS = "一二三四五六日"
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_ZH_NUMBERS = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6}


def label_day(label: str) -> tuple[dt.date, str] | None:
    """The day a date label names and its style ("iso", "zh", "en"), or None."""
    for style, form in zip(("iso", "zh", "en", "en"), _LABEL_FORMS, strict=True):
        m = form.search(label)
        if m is None:
            continue
        try:
            month = (
                int(m.group("m"))
                if "m" in form.groupindex
                else [x[:3].lower() for x in _MONTHS].index(m.group("mon").lower()[:3]) + 1
            )
            return dt.date(int(m.group("y")), month, int(m.group("d"))), style
        except ValueError:
            return None
    return None


def _day(d: dt.date, style: str) -> str:
    if style == "iso":
        return d.isoformat()
    if style == "zh":
        return f"{d.year}年{d.month}月{d.day}日"
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def _month(d: dt.date, style: str) -> str:
    if style == "zh":
        return f"{d.year}年{d.month}月"
    return f"{d.year}-{d.month:02d}" if style == "iso" else f"{_MONTHS[d.month - 1]} {d.year}"


def _year(d: dt.date, style: str) -> str:
    return f"{d.year}年" if style == "zh" else str(d.year)


def _months_back(d: dt.date, n: int) -> dt.date:
    m = d.month - 1 - n
    return dt.date(d.year + m // 12, m % 12 + 1, 1)


def _last_weekday(d: dt.date, weekday: int) -> dt.date:
    back = (d.weekday() - weekday) % 7 or 7
    return d - dt.timedelta(days=back)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _EN_NUMBERS.get(word.lower(), _ZH_NUMBERS.get(word, 1))


Reading = Callable[[re.Match[str], dt.date, str], str]


@dataclass(frozen=True, slots=True)
class TimeRule:
    name: str
    pattern: Joined
    read: Reading


def _shift(days: int) -> Reading:
    return lambda m, d, style: _day(d + dt.timedelta(days=days), style)


def _days_ago(m: re.Match[str], d: dt.date, style: str) -> str:
    return _day(d - dt.timedelta(days=_count(m.group("n") or m.group("z"))), style)


def _weeks_ago(m: re.Match[str], d: dt.date, style: str) -> str:
    return _day(d - dt.timedelta(weeks=_count(m.group("n") or m.group("z"))), style)


def _months_ago(m: re.Match[str], d: dt.date, style: str) -> str:
    return _month(_months_back(d, _count(m.group("n") or m.group("z"))), style)


def _en_weekday(m: re.Match[str], d: dt.date, style: str) -> str:
    return _day(_last_weekday(d, _EN_WEEKDAYS.index(m.group("wd").lower())), style)


def _zh_weekday(m: re.Match[str], d: dt.date, style: str) -> str:
    wd = _ZH_WEEKDAYS.index(m.group("wd").replace("天", "日"))
    # "上周五": the named day of the week before the turn's week.
    monday = d - dt.timedelta(days=d.weekday()) - dt.timedelta(weeks=1)
    return _day(monday + dt.timedelta(days=wd), style)


def _week_before(m: re.Match[str], d: dt.date, style: str) -> str:
    week = _day(d, style)
    return f"{week}的前一周" if style == "zh" else f"the week before {week}"


def _rule(name: str, lang: str = "") -> Joined:
    """The rule `name` of policies/rules/<lang>/timeline.yaml, both halves unless `lang`."""
    return Joined("timeline", name, (lang,) if lang else ("en", "zh"))


RULES: tuple[TimeRule, ...] = (
    TimeRule("day_before_yesterday", _rule("day_before_yesterday"), _shift(-2)),
    TimeRule("yesterday", _rule("yesterday"), _shift(-1)),
    TimeRule("tomorrow", _rule("tomorrow"), _shift(1)),
    TimeRule("days_ago", _rule("days_ago"), _days_ago),
    TimeRule("weeks_ago", _rule("weeks_ago"), _weeks_ago),
    TimeRule("months_ago", _rule("months_ago"), _months_ago),
    TimeRule("last_weekday", _rule("last_weekday", "en"), _en_weekday),
    TimeRule("last_weekday_zh", _rule("last_weekday", "zh"), _zh_weekday),
    TimeRule("last_week", _rule("last_week"), _week_before),
    TimeRule("last_month", _rule("last_month"), lambda m, d, s: _month(_months_back(d, 1), s)),
    TimeRule(
        "last_year",
        _rule("last_year"),
        lambda m, d, s: _year(d.replace(year=d.year - 1), s),
    ),
)


# Pure in its arguments; recall asks it of the same hits on every request.
@lru_cache(maxsize=8192)
def stamp_relative(text: str, label: str) -> str:
    """`text` with the day each relative expression refers to written after it,
    read against `label` (the day the text was said); unchanged without a
    readable label or expression."""
    found = label_day(label) if label else None
    if found is None:
        return text
    day, style = found
    spans: list[tuple[int, int, str]] = []
    for rule in RULES:
        for m in rule.pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e, _ in spans):
                continue  # a longer expression already read it ("the day before yesterday")
            spans.append((m.start(), m.end(), rule.read(m, day, style)))
    if not spans:
        return text
    out, last = [], 0
    for _start, end, reading in sorted(spans):
        paren = ("（", "）") if style == "zh" else (" (", ")")
        out += [text[last:end], paren[0], reading, paren[1]]
        last = end
    out.append(text[last:])
    return "".join(out)
