"""Typed values inside a sentence: amounts, dates, counts, versions, IDs.

Values drive two decisions: whether a sentence is worth remembering (a
number with a unit usually is; a bare number rarely) and what a revision
replaces (a new `450元` replaces an old `600元`, not an old `18桌`). Each
value has a `kind` (money, percent, date, time, qty, label, grade, version,
id), a `unit` that must match for two values to compete, and a number when
one can be read, so that revisions can prefer a nearby old value.

The patterns that name words of a language (units, currencies, number words, labels,
cue words) are data (`policies/rules/<lang>/values.yaml`, read on first use); what
stays here reads the shape of text (codes, handles, links, phone numbers, digits) and
the word tables that map a word to its unit. The number a value says is read by
`policies.language.numbers`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from policies.language.numbers import (
    DAY_OF_MONTH,
    date_number,
    per_week,
    percent_number,
    read_number,
    whole_split,
    zh_number,
)
from policies.rulebook import Joined, fragment

# Units that make a number a countable quantity; the value is normalised to
# the singular so that "3 nights" and "1 night" compete.
_EN_UNITS = {
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
_DATA_RATE = Joined("values", "data_rate", ("en",), flags=re.IGNORECASE)
_GIGA = Joined("values", "giga", ("en",), flags=re.IGNORECASE)

# Phone numbers ("503-555-0142", "(503) 555-0142", "+44 20 7946 0958", "13817762045"):
# how to reach someone, as exact as an ID.
_PHONE = re.compile(
    r"(?<![\d-])(?:\(\d{3}\) ?|\d{3}[-.])\d{3}[-.]\d{4}(?![\d-])"
    r"|(?<![\w+])\+\d{1,3}(?:[ -]\d{1,4}){2,4}(?![\d-])|(?<!\d)1[3-9]\d{9}(?!\d)"
    # A national number in groups ("0412 585 903", "020 7946 0958").
    r"|(?<![\w+.,-])0\d{2,4} \d{3,4} \d{3,4}(?![\w.,-]?\d)"
    # A Chinese mobile in 3-4-4 groups ("139 0571 2846", "139-0571-2846") and a
    # landline after its area code ("021-6688 1200", "0755-26601234").
    r"|(?<![A-Za-z0-9_+.,-])1[3-9]\d([ -])\d{4}\1\d{4}(?![A-Za-z0-9_.,-]?\d)"
    r"|(?<![A-Za-z0-9_+.,-])0\d{2,3}-\d{3,4} ?\d{4}(?![A-Za-z0-9_.,-]?\d)"
)
_EMAIL_OR_LINK = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.]+|https?://\S+")


def contact_details(text: str) -> bool:
    """Does `text` give a way to reach someone (a phone number, an email address)?"""
    return bool(_PHONE.search(text) or re.search(r"[\w.+-]@[\w-]+\.[A-Za-z]", text))


# The value patterns, most specific first; the ones that name words of a language are
# data (policies/rules/<lang>/values.yaml), read as one regex of both halves in the order
# given (a comment on each rule names this list). What stays here is shape: codes,
# handles, links, phone numbers, version triples, bare digits.
_PATTERNS: list[tuple[str, re.Pattern[str] | Joined]] = [
    # A number named as an identifier by the word before it ("尾号8842",
    # "订单号 20240518", "account ending in 4417", "ticket #5521").
    ("id", Joined("values", "id_label", ("zh", "en"), flags=re.IGNORECASE)),
    # Bounded by non-alphanumerics rather than \b: IDs often sit right
    # against Chinese text ("订单号E12345678").
    (
        "id",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:[A-Z][A-Z0-9]{0,7}-\d{2,}|[a-z]{1,3}-\d{3,})(?![A-Za-z0-9_])"
        ),
    ),
    ("id", re.compile(r"(?<![A-Za-z0-9_])[A-Z]{1,2}\d{3,}(?![A-Za-z0-9_])")),
    # A handle ("叫river_cafe", "账号tea-house-hz"): bounded by ASCII, not \b, since
    # Chinese letters count as word characters and often touch it.
    ("id", re.compile(r"(?<![A-Za-z0-9_])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![A-Za-z0-9_])")),
    ("id", re.compile(r"(?<![A-Za-z0-9_-])[a-z][a-z0-9]{2,}(?:-[a-z0-9]+){2,}(?![A-Za-z0-9_])")),
    ("id", re.compile(r"\b[a-z][a-z0-9_-]{2,}/[a-z][a-z0-9_-]{2,}\b")),
    ("id", _EMAIL_OR_LINK),
    ("id", _PHONE),
    # A street address ("5821 Alcatraz Ave", "文三路478号"): where something happens, as
    # exact as an ID and replaced only by another address.
    ("id", Joined("values", "address", ("en", "zh"), flags=0)),
    # A quoted name or title ("Feature Stores Are a Lie", 《三体》): a value a rename replaces.
    ("title", Joined("values", "title", ("en", "zh"), flags=0)),
    ("version", re.compile(r"\bv?\d+\.\d+\.\d+(?:\.\d+)?\b")),
    ("version", Joined("values", "version_named", ("en",), flags=re.IGNORECASE)),
    ("version", Joined("values", "version_marked", ("zh",), flags=0)),
    # A threshold: a number with the side it bounds ("300以上", "over $200", "80 words max").
    ("bound", Joined("values", "bound", ("zh", "en"), flags=re.IGNORECASE)),
    ("money", Joined("values", "money", ("en", "zh"), flags=re.IGNORECASE)),
    # An amount per head with its currency left off ("人均就六百五", "per head is 650").
    ("money", Joined("values", "per_head", ("zh", "en"), flags=re.IGNORECASE)),
    # A price offered or asked in a negotiation ("他开价三百一", "还到280就成交").
    ("money", Joined("values", "asking_price", ("zh",), flags=0)),
    ("percent", Joined("values", "percent", ("en", "zh"), flags=0)),
    ("date", Joined("values", "date", ("en", "zh"), flags=re.IGNORECASE)),
    # A span of hours ("9 to 5 Eastern", "2点到5点"): one value, replaced as a whole.
    ("time", Joined("values", "hour_span", ("en", "zh"), flags=re.IGNORECASE)),
    ("time", Joined("values", "clock", ("en", "zh"), flags=re.IGNORECASE)),
    ("time", Joined("values", "hour_at", ("en",), flags=re.IGNORECASE)),
    # How often something happens ("every other day", "隔天一次").
    ("freq", Joined("values", "freq", ("en", "zh"), flags=re.IGNORECASE)),
    ("label", Joined("values", "label", ("zh", "en"), flags=re.IGNORECASE)),
    ("grade", Joined("values", "grade", ("zh", "en"), flags=re.IGNORECASE)),
    ("qty", Joined("values", "gig", ("en",), flags=0)),
    # People counted under another name ("64个孩子", "12位嘉宾"): a headcount like "64人".
    ("qty", Joined("values", "people_count", ("zh",), flags=0)),
    ("qty", Joined("values", "qty", ("zh", "en"), flags=re.IGNORECASE)),
    # Bare numbers: never memorable alone, but comparable ("别超过5000" → "6000",
    # "名额放到四百吧" after "300人"). Digits here; Chinese numerals are data. Their
    # matches never overlap (digits against numerals), so two patterns find what one did.
    (
        "number",
        re.compile(
            # A sentence's own full stop or comma may follow ("RSVPs closed at 98.", "一共98，"),
            # not a decimal, a thousands group or a domain ("98.6", "1,000", "98.com").
            r"(?<![A-Za-z0-9_.,:/-])(?:\d{1,3}(?:,\d{3})+|\d{2,})(?:\.\d+)?(?![A-Za-z0-9_:%/-]|[.,]\w)"
        ),
    ),
    ("number", Joined("values", "bare_number", ("zh",), flags=0)),
]


# Anything a value pattern could read (a digit, a number word, a month, "every", "#"):
# only whether one is found counts.
_NUMERIC_HINT = Joined("values", "numeric_hint", ("en", "zh"), flags=re.IGNORECASE)
_NON_NUMERIC = frozenset({"id", "title"})


@dataclass(frozen=True, slots=True)
class Value:
    kind: str
    unit: str
    text: str
    number: float | None
    start: int
    end: int

    @property
    def key(self) -> str:
        """What two values must share to compete for the same slot."""
        return f"{self.kind}:{self.unit}"


_TEMPERATURE = Joined("values", "temperature", ("en",), flags=0)
_PEOPLE_END = Joined("values", "people_end", ("zh",), flags=0)
_UNIT_END = Joined("values", "unit_end", ("zh",), flags=0)
_LABEL_KIND = Joined("values", "label_kind", ("zh", "en"), flags=0)


def _unit(kind: str, text: str) -> str:
    low = text.lower()
    if kind == "date" and DAY_OF_MONTH.search(low):
        return "dom"
    if kind == "qty":
        if _DATA_RATE.search(low):
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
        if last in _EN_UNITS:
            return _EN_UNITS[last]
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
        return _bound_unit(text, "")
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


def _as_duration(
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
        return _unit("money", text)
    if "%" in text:
        return "%"
    # "k" is a thousand only as a word's end: "3 kids" is no 3,000 "ids".
    m = _scaled_number().search(text)
    if m is None:
        return ""
    tail = text[m.end() :]
    zh = _UNIT_START.match(tail)
    if zh:
        return _unit("qty", "1" + zh.group(0))
    word = re.match(r"([a-z]+)", tail.lower())
    if _DATA_RATE.match(tail):
        return "mbps"
    if word and word.group(1) in _EN_UNITS:
        return _EN_UNITS[word.group(1)]
    return ""


# The side a threshold bounds, by its words (lower-cased), read in this order.
_NOT_ABOVE = Joined("values", "bound_not_above", ("zh", "en"), flags=0)
_AT_LEAST = Joined("values", "bound_at_least", ("zh", "en"), flags=0)
_BELOW = Joined("values", "bound_below", ("zh", "en"), flags=0)
_NEGATED_BEFORE = Joined("values", "negated_before", ("zh", "en"), flags=0)


def _bound_unit(text: str, before: str, after: str = "") -> str:
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
        if low in _EN_UNITS:
            return _EN_UNITS[low]
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


def _percent_unit(around: str, raw: str) -> str:
    """ "rate" for an interest rate ("6.9% APR", "the rate … is 5.9%"), else ""."""
    return "rate" if _RATE.search(around) else ""


def _overlaps(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in spans)


@lru_cache(maxsize=4096)
def extract_values(text: str) -> tuple[Value, ...]:
    """All typed values in `text`, left to right, without overlaps.

    Patterns are tried most specific first (IDs before versions before
    money...), so "PAY-2291" is one ID and not a number.
    """
    found: list[Value] = []
    spans: list[tuple[int, int]] = []
    # Most patterns need a digit or a number word; skip them cheaply when
    # the text has neither (the common case for chit-chat).
    numeric = bool(_NUMERIC_HINT.search(text))
    for kind, pattern in _PATTERNS:
        if not numeric and kind not in _NON_NUMERIC:
            continue
        for m in pattern.finditer(text):
            if _overlaps(spans, m.start(), m.end()):
                continue
            # A pattern may name the value inside its match ("尾号" + "8842").
            named = ("v", "w", "x", "t")
            group = next((g for g in named if g in m.re.groupindex and m.group(g)), None)
            start, end = m.span(group) if group else m.span()
            raw = text[start:end].strip()
            # The span is the value's own text: "$350 — no wait" must not start the fix
            # marker inside the amount's trailing space.
            start += len(text[start:end]) - len(text[start:end].lstrip())
            end = start + len(raw)
            # "3/7" is a date or a fraction, not two shares of a whole.
            if (kind == "id" and _looks_like_prose(raw)) or (
                kind == "percent" and not whole_split(raw)
            ):
                continue
            if kind == "date":
                number = date_number(raw)
            elif kind == "freq":
                number = per_week(raw)
            elif kind in ("id", "title"):
                number = None
            else:
                number = read_number(raw, kind in ("money", "bound"))
            if kind == "money" and raw.lower().endswith("grand") and number is not None:
                number *= 1_000
            if kind == "percent":
                number = percent_number(raw, number)
            if kind == "grade":
                number = read_number(raw) or zh_number(raw[-1:])
            if kind in ("qty", "bound") and _DATA_RATE.search(raw):
                number = (number or 1.0) * (1000 if _GIGA.search(raw) else 1)
            if kind == "bound":
                unit = _bound_unit(raw, text[max(0, start - 24) : start], text[end : end + 24])
            elif kind == "percent":
                unit = _percent_unit(text[max(0, start - 40) : end + 12], raw)
            else:
                unit = _unit(kind, raw)
            unit, number = _as_duration(
                kind, unit, number, raw, text[max(0, start - 1) : start], text[end : end + 10]
            )
            found.append(Value(kind, unit, raw, number, start, end))
            spans.append((m.start(), m.end()))
    return tuple(sorted(found, key=lambda v: v.start))


_PROSE_PARTS = frozenset(
    ("as", "you", "go", "the", "of", "to", "in", "a", "and", "up", "or", "on", "by", "for",
     "with", "is", "it", "be", "per", "end", "day", "time", "make")
)  # fmt: skip


def _looks_like_prose(token: str) -> bool:
    """Hyphenated English ("pay-as-you-go", "end-to-end") is not an identifier."""
    if "-" not in token or "/" in token or "_" in token or any(c.isdigit() for c in token):
        return False
    return any(part in _PROSE_PARTS for part in token.split("-"))


_BY_NUMBER = frozenset({"money", "percent", "qty"})


def value_signature(v: Value) -> str:
    """Normalised value, for "is this the same value?" comparisons.

    Amounts, percentages and counts by their number ("$18k" = "$18,000",
    "three nights" = "3 nights"); everything else by its text.
    """
    if v.kind in _BY_NUMBER and v.number is not None:
        unit = "" if v.kind == "percent" else v.unit
        return f"{v.kind}:{unit}:{v.number:g}"
    return re.sub(r"[\s,]", "", v.text.lower())


# Amounts written in ten-thousands or thousands ("295万", "$295k"): once the scale is
# known it is often dropped ("出到两百九", "if they offer 290").
_SCALED = (
    (Joined("values", "ten_thousand", ("zh",), flags=0), 10_000.0),
    (Joined("values", "thousand", ("en",), flags=0), 1_000.0),
)


def _in_scale(a: Value, b: Value) -> float:
    """`a`'s number, read in the scale `b` is written in when `a` is an amount
    without its currency said next to one in 万 or thousands."""
    assert a.number is not None
    if a.kind != "money" or a.unit != "?" or b.kind != "money" or b.number is None:
        return a.number
    for mark, scale in _SCALED:
        if mark.search(b.text) and not mark.search(a.text) and a.number * scale <= 2 * b.number:
            scaled = a.number * scale
            if b.number / 2 <= scaled:
                return scaled
    return a.number


def numeric_closeness(a: Value, b: Value) -> float:
    """1.0 for values of similar size, falling to 0 at an order of magnitude.

    Revisions usually adjust a value (600 → 450, 18 → 20) rather than jump to
    a different scale, so a nearby old value is the likelier target.
    """
    if a.number is None or b.number is None:
        return 0.5
    lo, hi = sorted((abs(_in_scale(a, b)), abs(_in_scale(b, a))))
    if hi == 0:
        return 1.0
    if lo == 0:
        return 0.2
    ratio = hi / lo
    if ratio <= 2:
        return 1.0
    if ratio >= 10:
        return 0.0
    return 1.0 - (ratio - 2) / 8
