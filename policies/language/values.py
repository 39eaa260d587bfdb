"""Typed values inside a sentence: amounts, dates, counts, versions, IDs.

Values drive two decisions: whether a sentence is worth remembering (a
number with a unit usually is; a bare number rarely) and what a revision
replaces (a new `450元` replaces an old `600元`, not an old `18桌`). Each
value has a `kind` (money, percent, date, time, qty, label, grade, version,
id), a `unit` that must match for two values to compete, and a number when
one can be read, so that revisions can prefer a nearby old value.

The patterns that name words of a language (units, currencies, number words, labels,
cue words) are data (`policies/rules/<lang>/values.yaml`, read on first use); what
stays here reads the shape of text (codes, handles, links, phone numbers, digits).
The number a value says is read by `policies.language.numbers`, its unit by
`policies.language.units`, where the word tables that map a word to one live.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from policies.language.numbers import (
    date_number,
    per_week,
    percent_number,
    read_number,
    whole_split,
    zh_number,
)
from policies.language.units import DATA_RATE, GIGA, as_duration, bound_unit, percent_unit, unit_of
from policies.rulebook import Joined

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
VALUE_PATTERNS: list[tuple[str, re.Pattern[str] | Joined]] = [
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
    for kind, pattern in VALUE_PATTERNS:
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
            if kind in ("qty", "bound") and DATA_RATE.search(raw):
                number = (number or 1.0) * (1000 if GIGA.search(raw) else 1)
            if kind == "bound":
                unit = bound_unit(raw, text[max(0, start - 24) : start], text[end : end + 24])
            elif kind == "percent":
                unit = percent_unit(text[max(0, start - 40) : end + 12], raw)
            else:
                unit = unit_of(kind, raw)
            unit, number = as_duration(
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
