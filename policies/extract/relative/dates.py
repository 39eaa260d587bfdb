"""Calendar dates in an item's text, read and moved by whole days or months.

Three written forms are read (ISO, "10月16日", "March 3" / "3rd of March"); a shifted
date is written back in the form it came in. The year is seldom said, so a leap year
stands in: any day the user wrote can be read.
"""

from __future__ import annotations

import datetime as dt
import re

from policies.extract.relative.amounts import Change

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MON = r"jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
_EN_DATE = re.compile(
    rf"\b(?P<mon>(?:{_MON})[a-z]*)\.? (?P<d>\d{{1,2}})(?P<suf>st|nd|rd|th)?\b"
    rf"|\b(?P<d2>\d{{1,2}})(?P<suf2>st|nd|rd|th)? (?:of )?(?P<mon2>(?:{_MON})[a-z]*)\b",
    re.IGNORECASE,
)
_ZH_DATE = re.compile(r"(?P<m>\d{1,2})月(?P<d>\d{1,2})(?P<suf>[日号])")
_ISO_DATE = re.compile(r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})")
_MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()


def parse_date(text: str) -> dt.date | None:
    try:
        m = _ISO_DATE.search(text)
        if m:
            return dt.date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
        m = _ZH_DATE.search(text)
        if m:
            return dt.date(2024, int(m.group("m")), int(m.group("d")))  # a leap year: any day
        m = _EN_DATE.search(text)
        if m:
            mon = (m.group("mon") or m.group("mon2")).lower()[:3]
            day = int(m.group("d") or m.group("d2"))
            return dt.date(2024, _MONTHS.index(mon) + 1, day)
    except ValueError:
        return None
    return None


def shift_date(text: str, change: Change) -> str | None:
    date = parse_date(text)
    if date is None:
        return None
    if change.measure == "months":
        month = date.month - 1 + change.sign * int(change.amount)
        try:
            new = date.replace(year=date.year + month // 12, month=month % 12 + 1)
        except ValueError:
            return None
    else:
        new = date + dt.timedelta(days=change.sign * change.amount)
    m = _ISO_DATE.search(text)
    if m:
        return text[: m.start()] + new.isoformat() + text[m.end() :]
    m = _ZH_DATE.search(text)
    if m:
        return text[: m.start()] + f"{new.month}月{new.day}{m.group('suf')}" + text[m.end() :]
    m = _EN_DATE.search(text)
    if m is None:
        return None
    name = m.group("mon") or m.group("mon2")
    full = _MONTH_NAMES[new.month - 1]
    written = full[: len(name)] if len(name) <= 3 else full  # "Nov 11" stays short
    if m.group("mon"):
        out = f"{written} {new.day}{_suffix(new.day) if m.group('suf') else ''}"
    else:
        out = f"{new.day}{_suffix(new.day) if m.group('suf2') else ''} {written}"
    return text[: m.start()] + out + text[m.end() :]


def _suffix(day: int) -> str:
    if 11 <= day % 100 <= 13:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
