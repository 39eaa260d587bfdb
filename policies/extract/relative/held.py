"""The quantities an item's text holds, and what each counts or measures.

Money, percentages, clock times and dates come from `policies.language.values`;
counts are read here, with the words after them (what is counted). Rough ranges
("四五个人", "two or three") and how things used to be are no settled amount to
change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from policies.extract.relative.amounts import amount_number, currency_of
from policies.extract.relative.clauses import own_text
from policies.extract.relative.dates import parse_date
from policies.language.values import extract_values
from policies.rulebook import Joined


@dataclass(frozen=True, slots=True)
class Held:
    """A quantity inside an item's text, and what it counts or measures."""

    start: int
    end: int
    number: float
    measure: str  # "count" | "money" | "percent" | "clock" | "date"
    unit: str  # counted noun stem / classifier, currency, ...
    window: str  # the words right after it (what it counts)
    text: str
    owner: str = ""  # the text it was read from (a count's label may come before it)


# A count and the words after it (groups n, w; zh also c, its classifier), composed
# in policies/rules/<lang>/relative.yaml from values.yaml's number words. "一个月",
# "两个小时" are lengths of time, not counts of things.
_EN_COUNT = Joined("relative", "counted_words")
_ZH_COUNT = Joined("relative", "counted_classifier")
# Not a settled amount: a rough range ("四五个人", "two or three"), or how it used to be.
_ROUGH = Joined("relative", "rough_range")
USED_TO_BE = Joined("relative", "used_to_be")


def _rough(text: str, start: int) -> bool:
    """ "四五个人" read from its second digit is still a rough range."""
    before = text[max(0, start - 4) : start]
    return bool(
        _ROUGH.match(text[start:])
        or re.search(r"[一二两三四五六七八九]$|\d\s?(?:-|–|~|to|or|、)\s?$", before)
    )


def _masked(text: str) -> list[tuple[int, int]]:
    """Spans that are not counts: IDs, dates, clock times, money, percentages, versions."""
    keep = ("id", "date", "time", "money", "percent", "version", "label", "freq", "title")
    return [(v.start, v.end) for v in extract_values(text) if v.kind in keep]


def _counts(text: str) -> list[Held]:
    masked = _masked(text)
    out: list[Held] = []
    for pattern in (_EN_COUNT, _ZH_COUNT):
        for m in pattern.finditer(text):
            s, e = m.span("n")
            if any(a < e and s < b for a, b in masked) or _rough(text, s):
                continue
            n = amount_number(m.group("n"))
            if n is None:
                continue
            groups = m.groupdict()
            cls = groups.get("c") or ""
            window = cls + m.group("w")
            unit = cls if cls and cls not in ("个", "名", "位") else ""
            end = m.end("n") + len(cls)
            out.append(Held(s, end, n, "count", unit, window, text[s:end], text))
    return out


def held_values(text: str) -> list[Held]:
    """Quantities of an item's own words (not of the derivation it may carry)."""
    text = own_text(text)
    out: list[Held] = []
    for v in extract_values(text):
        window = text[v.end : v.end + 40]
        if (v.kind == "money" and v.number is not None) or (
            v.kind == "bound" and v.number is not None and re.search(r"[$€£元块]", v.text)
        ):
            out.append(Held(v.start, v.end, v.number, "money", currency_of(v.text), window, v.text))
        elif v.kind == "percent" and v.number is not None:
            out.append(Held(v.start, v.end, v.number, "percent", "%", window, v.text))
        elif v.kind == "time":
            out.append(Held(v.start, v.end, 0.0, "clock", "", window, v.text))
        elif v.kind == "date" and parse_date(v.text) is not None:
            out.append(Held(v.start, v.end, 0.0, "date", "", window, v.text))
    return out + _counts(text)
