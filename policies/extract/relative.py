"""Relative changes to a quantity the user stated earlier (zh + en).

People revise numbers against what they said before instead of restating
them: "let's allow two more than I said", "add another $300 to the
budget", "cut it by 10%", "push the launch back a week", "再加两个",
"预算砍掉两千", "提前半小时". Such a sentence holds only the difference; read
as a statement of its own it either adds a meaningless item ("two more") or
replaces the wrong value, and the old number stays current.

This module reads the change (a direction cue and an amount, with or
without a unit), finds the one live item that holds the quantity it
changes, computes the new value, and supersedes that item with its text
restated at the new value plus the derivation, e.g. "no more than 6 fish
total (4 + 2: "let's allow two more")". The old item becomes superseded, so
the stale filter marks old mentions of it.

Finding the holder is the risky part: a wrong link presents a made-up
number as the requirement, which is worse than leaving the change
unresolved. A holder must measure the same thing (same counted noun or
classifier, same currency, a clock time for a shift in hours, a calendar
date for a shift in days), and, unless the change names its counted noun,
the topic of the sentence (or of the sentence before it) must name it.
Among holders that fit equally, the most recent wins. When nothing fits,
nothing happens. Absolute changes ("make it 6", "改成8名") are not handled
here: they state the new value and the revision resolver links them.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from policies.language.cues import is_question, read_cues
from policies.language.segment import split_sentences
from policies.language.text import terms

# The number parsing of `policies.language.values` (digits, Chinese numerals, English
# number words), reused so that both read "两千五" and "ninety-five" alike.
from policies.language.values import _EN_WORD_NUM, _ZH_NUM, _read_number, extract_values
from policies.rulebook import Joined
from policies.types import Add, MemoryItem, MemoryOp, Supersede

_LIVE = frozenset({"active", "pending"})
_RULES_OR_FACTS = frozenset({"constraint", "preference", "fact", "goal", "state", "entity"})

# -- amounts ----------------------------------------------------------------

_DIGITS = r"\d+(?:,\d{3})*(?:\.\d+)?"
_EN_NUM = rf"(?:{_DIGITS}|{_EN_WORD_NUM}|a couple(?: of)?)"
_EN_CURRENCY_WORD = r"(?:dollars?|bucks|euros?|pounds?|quid)"
_EN_MONEY = (
    rf"[$€£]\s?{_DIGITS}\s?[kK]?\b|{_DIGITS}\s?[kK]\b|{_DIGITS}\s?{_EN_CURRENCY_WORD}\b"
    rf"|{_EN_WORD_NUM}\s{_EN_CURRENCY_WORD}\b|(?:{_DIGITS}|{_EN_WORD_NUM})\sgrand\b"
)
_EN_PERCENT = rf"{_DIGITS}\s?(?:%|percent\b)|{_DIGITS}\s(?:percentage\s)?points?\b"
_EN_DUR_UNIT = r"(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?)"
_EN_DURATION = rf"(?:half an hour|an? {_EN_DUR_UNIT}|{_EN_NUM}[\s-]{_EN_DUR_UNIT})\b"
_EN_AMOUNT = rf"(?:{_EN_MONEY}|{_EN_PERCENT}|{_EN_DURATION}|{_EN_NUM}\b)"

_ZH_AMT = rf"(?:\d+(?:\.\d+)?[万千]?|{_ZH_NUM}|半)"
_ZH_DUR_UNIT = r"(?:分钟|个小时|小时|个钟头|钟头|天|日|个星期|星期|礼拜|周|个月)"
_ZH_MONEY_UNIT = r"(?:块钱|块|元|毛)"
_ZH_CLASSIFIER = (
    r"(?:个百分点|个|名|位|箱|件|台|辆|张|桌|人|斤|公斤|千克|次|间|套|份|瓶|盒|单|场|条|只|本|页"
    r"|道|题|家|层|袋|包|把|棵|株|头|匹|成|%)"
)
# Not an amount: "一下", "一点", "一些", "一会儿", "两倍".
# Nor a rough one: "十几个", "二十多箱", "一块多".
_ZH_NOT_AMOUNT = r"(?!下|点|些|会|起|遍|倍|直|样|般|共|定|几|多|来|余)"

_ZH_NOT_ROUGH = rf"(?!\s*(?:{_ZH_MONEY_UNIT}|{_ZH_CLASSIFIER})(?:多|来|几|左右))"

# Particles and fillers that end a Chinese counted noun ("再加两个吧").
_ZH_PARTICLES = Joined("relative", "particles")

# Counted nouns that are talk, not quantities ("two more questions", "one more thing").
_TALK_NOUNS = frozenset(
    "thing things question questions point points note notes idea ideas example examples "
    "detail details comment comments tip tips suggestion suggestions time times reminder "
    "reminders favour favor favours favors minute second try look word words rule rules change "
    "changes request requests update updates correction corrections thought thoughts".split()
)
_ZH_TALK_NOUNS = ("问题", "事", "点", "句", "下", "遍", "次机会")

# Words around a change that say what kind of change it is, not what it changes.
_CUE_WORDS = frozenset(
    "add adding another extra additional more fewer less allow allowing raise increase bump "
    "boost lift cut reduce lower drop trim decrease shrink knock shave slash take remove push "
    "move slide shift delay postpone pull bring later earlier sooner back forward whole said "
    "say let's lets go plus up down by than originally planned before total".split()
)


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


def _stem(word: str) -> str:
    word = word.lower()
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _currency(text: str) -> str:
    low = text.lower()
    for unit, marks in (
        ("usd", ("$", "dollar", "buck")), ("eur", ("€", "euro")), ("gbp", ("£", "pound", "quid")),
        ("cny", ("元", "块", "毛", "￥")),
    ):  # fmt: skip
        if any(mark in low for mark in marks):
            return unit
    return "?"


def _number(text: str) -> float | None:
    """The number an amount says: "$1.5k" 1,500, "两千" 2,000, "half an hour" 0.5, "a week" 1."""
    low = text.lower().strip()
    if low.startswith("half") or low.startswith("半"):
        return 0.5
    if low.startswith("a couple"):
        return 2.0
    if re.match(r"an?\b", low):
        return 1.0
    n = _read_number(text, scaled=True)
    if n is not None and re.search(r"\d\s?千", text):
        n *= 1000
    if n is not None and re.search(r"\bgrand\b", low):
        n *= 1000
    return n


_EN_DURATION_MINUTES = {"minute": 1, "min": 1, "hour": 60, "hr": 60}
_EN_DURATION_DAYS = {"day": 1, "week": 7}
_ZH_DURATION = {
    "分钟": ("minutes", 1), "个小时": ("minutes", 60), "小时": ("minutes", 60),
    "个钟头": ("minutes", 60), "钟头": ("minutes", 60), "天": ("days", 1), "日": ("days", 1),
    "个星期": ("days", 7), "星期": ("days", 7), "礼拜": ("days", 7), "周": ("days", 7),
    "个月": ("months", 1),
}  # fmt: skip


def _en_amount(amount: str, noun: str) -> tuple[float, str, str] | None:
    """(number, measure, unit) of an English amount and the noun after it."""
    low = amount.lower()
    n = _number(amount)
    if n is None:
        return None
    if re.search(_EN_MONEY, amount, re.IGNORECASE) and re.fullmatch(_EN_MONEY, amount, re.I):
        return n, "money", _currency(amount)
    if re.search(r"points?$", low):
        return n, "points", "%"
    if re.search(r"%|percent", low):
        return n, "percent", "%"
    unit = re.search(_EN_DUR_UNIT + "$", low)
    if unit:
        word = _stem(unit.group(0)).rstrip("s")
        if word in _EN_DURATION_MINUTES:
            return n * _EN_DURATION_MINUTES[word], "minutes", ""
        if word in _EN_DURATION_DAYS:
            return n * _EN_DURATION_DAYS[word], "days", ""
        return n, "months", ""
    if noun in _TALK_NOUNS:
        return None
    # "two more" counts whatever the topic names; "two more guards" counts guards
    return n, ("count" if noun else "number"), _stem(noun) if noun else ""


# -- reading a change -------------------------------------------------------

_EN_NOUN = r"(?:\s+(?:more\s+|extra\s+|additional\s+)?(?P<noun>[a-z][a-z-]+))?"
# Words after an amount that are not the counted noun ("two more than I said").
_NOT_NOUN = frozenset(
    "to than for on in at of please and or but so because this that per each if then now too "
    "as by from with into onto off it them is are was be more extra additional later earlier "
    "sooner back forward out up down instead total overall altogether".split()
)
_EN_INCREASE = [
    # "add twelve cases", "add another $300 to the budget", "add an extra guard"
    re.compile(
        rf"\b(?:add|adding|tack on|throw in)\s+(?:(?:another|an? extra|an additional)\s+)?"
        rf"(?P<amt>{_EN_AMOUNT}){_EN_NOUN}",
        re.IGNORECASE,
    ),
    re.compile(
        r"\b(?:add|adding)\s+(?P<amt>another|an? extra|an additional)\s+(?P<noun>[a-z][a-z-]+)",
        re.IGNORECASE,
    ),
    # "another $300", "another two cases", "an extra 2 days"
    re.compile(
        rf"\b(?:another|an extra|an additional)\s+(?P<amt>{_EN_AMOUNT}){_EN_NOUN}", re.IGNORECASE
    ),
    # "two more", "$300 more", "12 extra cases"
    re.compile(
        rf"(?<!\bno )(?<!\bany )\b(?P<amt>{_EN_AMOUNT})\s+(?:more|extra|additional)\b{_EN_NOUN}",
        re.IGNORECASE,
    ),
    # "raise the budget by $300", "bump it up by two", "up by 10%"
    re.compile(
        r"\b(?:raise|increase|bump|boost|lift|grow|extend|expand|up)\b[^.;!?]{0,30}?"
        rf"\bby\s+(?P<amt>{_EN_AMOUNT}){_EN_NOUN}",
        re.IGNORECASE,
    ),
]
_EN_DECREASE = [
    # "one fewer guard", "$200 less"
    re.compile(rf"\b(?P<amt>{_EN_AMOUNT})\s+(?:fewer|less)\b{_EN_NOUN}", re.IGNORECASE),
    # "cut it by 10%", "reduce the budget by $200", "down by two"
    re.compile(
        r"\b(?:cut|reduce|lower|drop|trim|decrease|shrink|slash|down)\b[^.;!?]{0,30}?"
        rf"\bby\s+(?P<amt>{_EN_AMOUNT}){_EN_NOUN}",
        re.IGNORECASE,
    ),
    # "cut two guards", "knock $200 off", "take 5 cases off"
    re.compile(
        r"\b(?:cut|remove|drop|subtract|knock|shave|take|trim)\s+(?:off\s+)?"
        rf"(?P<amt>{_EN_AMOUNT}){_EN_NOUN}",
        re.IGNORECASE,
    ),
]
# A shift in time needs a verb that moves something ("push it back a week",
# "slide the whole thing two hours later"), said now, not told as a story.
_EN_MOVE = Joined("relative", "moving_verb")
_EN_LATER = Joined("relative", "shift_later")
_EN_EARLIER = Joined("relative", "shift_earlier")

_ZH_NOUN = r"(?P<noun>[\u4e00-\u9fff]{0,4})"
_ZH_INCREASE = re.compile(
    r"(?:(?<![参附叠])再加上?|(?<![参附叠增追])加上?|增加|追加|添|涨|提高|上调|再来|多加|多订|多买|多招|多请"
    r"|多要|多给|多放|(?<![不差很许最至好太更])多(?!少))了?"
    rf"(?P<amt>{_ZH_AMT}){_ZH_NOT_AMOUNT}{_ZH_NOT_ROUGH}\s*(?P<cls>{_ZH_MONEY_UNIT}|{_ZH_CLASSIFIER})?"
    rf"{_ZH_NOUN}"
)
_ZH_DECREASE = re.compile(
    r"(?:减少|减掉|减去|(?<![增加])减|砍掉|砍|降低|下调|降|便宜|去掉|少订|少买|少招|少要|少给|少放"
    r"|(?<![至最多不很太减缺])少)了?"
    rf"(?P<amt>{_ZH_AMT}){_ZH_NOT_AMOUNT}{_ZH_NOT_ROUGH}\s*(?P<cls>{_ZH_MONEY_UNIT}|{_ZH_CLASSIFIER})?"
    rf"{_ZH_NOUN}"
)
_ZH_LATER = re.compile(
    r"(?:推迟|往后推|往后挪|往后延|往后移|延后|推后|顺延|延迟|挪后|(?<![早傍今昨明前每])晚)了?"
    rf"(?P<amt>{_ZH_AMT}|一个半)\s*(?P<cls>{_ZH_DUR_UNIT})"
)
_ZH_EARLIER = re.compile(
    r"(?:提前|往前挪|往前推|往前移|提早|(?<![提最很太稍])早)了?"
    rf"(?P<amt>{_ZH_AMT}|一个半)\s*(?P<cls>{_ZH_DUR_UNIT})"
    # "提前两天告诉我": how far ahead to do something, not a shift of a plan.
    r"(?!告诉|通知|提醒|说|联系|到|来|去|准备|预订|订|买|出发|走|下单|报名|交|发|打电话"
    # "提前24小时以上取消": a notice period, not a shift
    r"|以上|以内|之内|内|前|以前|之前|取消|退|预约|确认)"
)

# A change that is not (yet) made: a question, a condition, a refusal.
_NOT_DECIDED = Joined("relative", "not_decided")
# Said of the change itself: "don't add two more", "we can't cut it by 10%", "别再加了".
_REFUSED = Joined("relative", "refused")


def _en_changes(sentence: str) -> list[Change]:
    # A moving verb with a length of time shifts a date or a clock time; only
    # without one is "two more days" a longer stay.
    shift = _en_shift(sentence)
    if shift is not None:
        return [shift]
    out: list[Change] = []
    for sign, patterns in ((1, _EN_INCREASE), (-1, _EN_DECREASE)):
        for pattern in patterns:
            for m in pattern.finditer(sentence):
                change = _en_change(sentence, m, sign)
                if change is not None:
                    out.append(change)
    return _distinct(out)


def _distinct(changes: list[Change]) -> list[Change]:
    """One change per span: "add another $300" is read by two patterns."""
    out: list[Change] = []
    for c in sorted(changes, key=lambda c: (c.start, -c.end)):
        if not any(o.start < c.end and c.start < o.end for o in out):
            out.append(c)
    return out


def _en_change(sentence: str, m: re.Match[str], sign: int) -> Change | None:
    amount = m.group("amt").strip()
    noun = (m.groupdict().get("noun") or "").lower()
    if noun in _NOT_NOUN:
        noun = ""
    if re.fullmatch(r"another|an? extra|an additional", amount, re.IGNORECASE):
        amount = "one"
    after = sentence[m.end("amt") :].lower()
    # "two more than the others" compares; "two more than I said" revises.
    if re.match(r"\s+(?:more|extra|fewer|less)?\s*than\b", after) and not re.match(
        r"\s+(?:more|fewer|less)?\s*than (?:i|we) (?:said|had|planned|wanted|agreed|asked"
        r"|budgeted|set)|\s+(?:more|fewer|less)?\s*than (?:before|originally|planned|agreed)",
        after,
    ):
        return None
    if _REFUSED.search(sentence[: m.start()]):
        return None
    unit = re.search(_EN_DUR_UNIT + "$", amount.lower())
    if unit:
        # "add an hour to each session": a length counted in hours, like "3 nights";
        # "cut an hour ago" is a story, and shifts are read with their moving verb.
        n = _number(amount)
        if n is None or re.match(r"\s+(?:ago|later|earlier|before|after|back)\b", after):
            return None
        return Change(sign, n, "count", _stem(unit.group(0)), amount, sentence, m.start(), m.end())
    read = _en_amount(amount, noun)
    if read is None:
        return None
    number, measure, unit_name = read
    return Change(sign, number, measure, unit_name, amount, sentence, m.start(), m.end())


_EN_SHIFT_AMOUNT = re.compile(_EN_DURATION, re.IGNORECASE)


def _en_shift(sentence: str) -> Change | None:
    """ "push the first session back a week", "slide the whole thing two hours later"."""
    m = _EN_SHIFT_AMOUNT.search(sentence)
    move = _EN_MOVE.search(sentence)
    if m is None or move is None or _REFUSED.search(sentence[: move.start()]):
        return None
    later = bool(_EN_LATER.search(sentence))
    earlier = bool(_EN_EARLIER.search(sentence))
    if later == earlier:
        return None
    read = _en_amount(m.group(0), "")
    if read is None:
        return None
    number, measure, _ = read
    return Change(1 if later else -1, number, measure, "", m.group(0), sentence,
                  min(m.start(), move.start()), max(m.end(), move.end()))  # fmt: skip


def _zh_noun(raw: str) -> str:
    noun = _ZH_PARTICLES.sub("", raw)
    return "" if any(noun.startswith(t) for t in _ZH_TALK_NOUNS) else noun


def _zh_changes(sentence: str) -> list[Change]:
    out: list[Change] = []
    for sign, pattern in ((1, _ZH_INCREASE), (-1, _ZH_DECREASE)):
        for m in pattern.finditer(sentence):
            change = _zh_change(sentence, m, sign)
            if change is not None:
                out.append(change)
    for sign, pattern in ((1, _ZH_LATER), (-1, _ZH_EARLIER)):
        for m in pattern.finditer(sentence):
            if _REFUSED.search(sentence[: m.start()]):
                continue
            measure, per = _ZH_DURATION[m.group("cls")]
            amt = m.group("amt")
            n = 1.5 if amt == "一个半" else _number(amt)
            if n is None:
                continue
            out.append(Change(sign, n * per, measure, "", amt + m.group("cls"), sentence,
                              m.start(), m.end()))  # fmt: skip
    return _distinct(out)


def _zh_change(sentence: str, m: re.Match[str], sign: int) -> Change | None:
    cls = m.group("cls") or ""
    raw_noun = m.group("noun") or ""
    if not cls and raw_noun[:1] in ("年", "月", "号", "日", "点", "岁", "层", "楼"):
        return None  # "加两年" is read as a duration elsewhere; "少三岁" is an age
    if _REFUSED.search(sentence[: m.start()]):
        return None
    n = _number(m.group("amt"))
    if n is None or m.group("amt") == "半":
        return None
    text = m.group("amt") + cls
    if cls in ("块钱", "块", "元", "毛"):
        return Change(sign, n * (0.1 if cls == "毛" else 1), "money", "cny", text, sentence,
                      m.start(), m.end())  # fmt: skip
    if cls == "%":
        return Change(sign, n, "percent", "%", text, sentence, m.start(), m.end())
    if cls == "个百分点":
        return Change(sign, n, "points", "%", text, sentence, m.start(), m.end())
    if cls == "成":
        return Change(sign, n * 10, "percent", "%", text, sentence, m.start(), m.end())
    noun = _zh_noun(raw_noun)
    if raw_noun and not noun and any(raw_noun.startswith(t) for t in _ZH_TALK_NOUNS):
        return None
    # "砍掉两千": money or a count, as the topic says; "少订15桶" counts barrels
    measure = "count" if cls or noun else "number"
    specific = "" if cls in ("个", "名", "位") else cls
    return Change(sign, n, measure, noun, text, sentence, m.start(), m.end(), specific)


def read_changes(sentence: str) -> list[Change]:
    """The relative changes a sentence decides (none for a question or a condition)."""
    if is_question(sentence) or _NOT_DECIDED.search(sentence) or read_cues(sentence).reported:
        return []
    if re.search(r"[\u4e00-\u9fff]", sentence):
        found = _zh_changes(sentence)
        return found or _en_changes(sentence)
    return _en_changes(sentence)


# -- quantities held by items --------------------------------------------------


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


_EN_COUNT = re.compile(
    rf"(?<![\w.,$€£¥/-])(?P<n>{_DIGITS}|{_EN_WORD_NUM})(?:\s+|-)(?P<w>(?:[a-z][a-z-]*[\s,]+){{0,3}}"
    r"[a-z][a-z-]*)",
    re.IGNORECASE,
)
_ZH_COUNT = re.compile(
    rf"(?P<n>\d+(?:\.\d+)?|{_ZH_NUM})\s*(?P<c>{_ZH_CLASSIFIER})"
    # "一个月", "两个小时": lengths of time, not counts of things
    r"(?!月|小时|星期|钟头|礼拜)(?P<w>[\u4e00-\u9fff]{0,4})"
)
# Not a settled amount: a rough range ("四五个人", "two or three"), or how it used to be.
_ROUGH = Joined("relative", "rough_range")
_PAST = Joined("relative", "used_to_be")
# The comma of "Monday, September 8" sits inside one date, not between clauses: the
# words before the weekday ("Start date Monday, …") say what that date is.
_NOT_AFTER_WEEKDAY = (
    r"(?<!monday)(?<!tuesday)(?<!wednesday)(?<!thursday)(?<!friday)(?<!saturday)(?<!sunday)"
    r"(?<!mon)(?<!tue)(?<!wed)(?<!thu)(?<!fri)(?<!sat)(?<!sun)"
)
_CLAUSE = re.compile(
    rf"[，；。！？、：]|{_NOT_AFTER_WEEKDAY},(?=\s)|[;:](?=\s)|[.!?](?=\s|$)", re.IGNORECASE
)


def _rough(text: str, start: int) -> bool:
    """ "四五个人" read from its second digit is still a rough range."""
    before = text[max(0, start - 4) : start]
    return bool(
        _ROUGH.match(text[start:])
        or re.search(r"[一二两三四五六七八九]$|\d\s?(?:-|–|~|to|or|、)\s?$", before)
    )


def _clause_at(text: str, start: int, end: int) -> str:
    lo = max((m.end() for m in _CLAUSE.finditer(text, 0, start)), default=0)
    hi = _CLAUSE.search(text, end)
    return text[lo : hi.start() if hi else len(text)]


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
            n = _number(m.group("n"))
            if n is None:
                continue
            groups = m.groupdict()
            cls = groups.get("c") or ""
            window = cls + m.group("w")
            unit = cls if cls and cls not in ("个", "名", "位") else ""
            end = m.end("n") + len(cls)
            out.append(Held(s, end, n, "count", unit, window, text[s:end], text))
    return out


# The derivation this module appends to a restated quantity: "(40 + 12: "Add twelve…")".
_DERIVATION = re.compile(r"\s?[(（][^()（）]*[:：]\s?[\"“][^\"”]*[\"”][)）]\s*$")


def _own(value: str) -> str:
    """An item's own words, without the derivation it may carry (a prefix of `value`)."""
    m = _DERIVATION.search(value)
    return value[: m.start()] if m else value


def _values(text: str) -> list[Held]:
    """Quantities of an item's own words (not of the derivation it may carry)."""
    text = _own(text)
    out: list[Held] = []
    for v in extract_values(text):
        window = text[v.end : v.end + 40]
        if (v.kind == "money" and v.number is not None) or (
            v.kind == "bound" and v.number is not None and re.search(r"[$€£元块]", v.text)
        ):
            out.append(Held(v.start, v.end, v.number, "money", _currency(v.text), window, v.text))
        elif v.kind == "percent" and v.number is not None:
            out.append(Held(v.start, v.end, v.number, "percent", "%", window, v.text))
        elif v.kind == "time":
            out.append(Held(v.start, v.end, 0.0, "clock", "", window, v.text))
        elif v.kind == "date" and _parse_date(v.text) is not None:
            out.append(Held(v.start, v.end, 0.0, "date", "", window, v.text))
    return out + _counts(text)


# -- fitting a change to a held quantity ----------------------------------------


def _bag(text: str) -> set[str]:
    """Terms of `text`, English ones stemmed ("lights" meets "light")."""
    return {_stem(t) if t.isascii() else t for t in terms(text)} - _CUE_WORDS


def _topic(sentence: str, change: Change) -> set[str]:
    """What the sentence names besides the change itself ("cut the venue quote by 10%":
    venue, quote): its words without the cue words and the amount."""
    text = sentence.replace(change.amount_text, " ", 1)
    return {t for t in _bag(text) if not re.fullmatch(r"[\d.,%]+", t)}


def _fits_measure(change: Change, held: Held) -> bool:
    if change.measure == "count":
        return held.measure == "count"
    if change.measure == "number":
        return held.measure in ("count", "money")
    if change.measure == "money":
        return held.measure == "money" and (
            change.unit == held.unit or "?" in (change.unit, held.unit)
        )
    if change.measure == "percent":
        return held.measure in ("money", "count")
    if change.measure == "points":
        return held.measure == "percent"
    if change.measure == "minutes":
        return held.measure == "clock"
    return held.measure == "date"  # days, months


_FUNCTION_WORDS = frozenset("to of a an the per for in on at and or by from with than".split())
# Measures, not things counted: "再加两个" never means two more kilos.
_MEASURE_UNITS = frozenset(("斤", "公斤", "千克", "成", "%"))


def _counted_words(window: str) -> list[str]:
    """The first words after a number, up to a function word: "security guards",
    "fish total", not "to a case"."""
    out: list[str] = []
    for word in re.findall(r"[a-z][a-z-]*", window.lower())[:3]:
        if word in _FUNCTION_WORDS:
            break
        out.append(_stem(word))
    return out[:2]


def _names_what(change: Change) -> bool:
    """Does the change say what it counts ("two more guards", "少订20箱")?"""
    return bool(change.unit or change.cls)


# Units of room, not of what fills it: "add thirty more spots" raises the cap on
# hackers, "再加20个名额" the cap on participants.
_ROOM_NOUNS = frozenset(("spot", "place", "seat", "slot", "opening", "space"))
_ZH_ROOM_NOUNS = ("名额", "席位", "位置", "座位")
_CAP_WORDS = Joined("relative", "cap_words")


def _room_for(change: Change, held: Held, clause: str) -> bool:
    """A change in places ("thirty more spots") fits a capped count of something named
    ("cap it at 150 hackers", "最多招60人"), whatever it counts."""
    room = change.unit in _ROOM_NOUNS or any(change.unit.startswith(n) for n in _ZH_ROOM_NOUNS)
    if not room or not _CAP_WORDS.search(clause):
        return False
    if re.search(r"[\u4e00-\u9fff]", held.window):
        return bool(held.window.strip())
    return bool(_counted_words(held.window))


def _noun_matches(change: Change, held: Held) -> bool:
    unit = change.unit
    if change.cls or re.search(r"[\u4e00-\u9fff]", unit):
        if unit:
            return unit in held.window or (len(unit) >= 2 and unit[:2] in held.window)
        # "少订20箱" after "订了40箱": the classifier says what, when no noun does
        return held.window.startswith(change.cls)
    return unit in _counted_words(held.window)


# Words before a Chinese change that are not what it changes: "我们再加两个", "那就少一个".
_ZH_LABEL_STOP = Joined("relative", "label_stop")
_ZH_LABEL_END = Joined("relative", "label_end")


def _zh_label(change: Change) -> str:
    """What a Chinese change names right before its cue, as a list's item names its
    count: "冲的再加两个" → 冲, "保底的减两个" → 保底 ("" when it names nothing)."""
    s = change.sentence
    lo, _ = _clause_span(s, change.start, change.end)
    label = _ZH_LABEL_END.sub("", s[lo : change.start].strip())
    label = re.sub(r"^(?:那|把|给|让|将)", "", label)
    if not re.fullmatch(r"[\u4e00-\u9fff]{1,4}", label) or _ZH_LABEL_STOP.match(label):
        return ""
    return label


def _labels_match(change: Change, held: Held) -> bool:
    """ "冲8个、稳20个、保12个" then "冲的再加两个": the count the change's label names
    right before its number, in that count's own clause."""
    label = _zh_label(change)
    if not label or not held.owner:
        return False
    lo, _ = _clause_span(held.owner, held.start, held.end)
    return held.owner[lo : held.start].endswith(label)


def _partitive(held: Held, topic: set[str]) -> bool:
    """ "20 cases of the run" is a share of the run: adding to the run changes its total."""
    m = re.search(r"\bof (?:the|our|this|that|my) ([a-z]+)", held.window.lower())
    if m and _stem(m.group(1)) in topic:
        return True
    return bool(re.match(r"[^，。,.]{0,6}(?:中的|里的|其中)", held.window))


def _level(change: Change, held: Held, clause: str, now: set[str], before: set[str]) -> float:
    """How well `held` fits `change`: 0 (not at all) .. 4 (the named noun)."""
    if not _fits_measure(change, held) or _partitive(held, now):
        return 0.0
    if held.measure == "count":
        if _names_what(change):
            if _noun_matches(change, held):
                return 4.0
            return 3.5 if _room_for(change, held, clause) else 0.0
        if _labels_match(change, held):
            return 3.5
        if held.unit in _MEASURE_UNITS:
            return 0.0
        if re.search(r"[\u4e00-\u9fff]", held.window):
            # the noun after the classifier: "名保安" counts 保安
            noun = _ZH_PARTICLES.sub("", held.window.lstrip(held.window[:1]))
            window = _bag(noun) | ({noun} if len(noun) == 1 else set())
        else:
            window = set(_counted_words(held.window))
        if window & now:
            return 3.0
        if window & before:
            return 2.0
    in_clause = _bag(clause)
    if in_clause & now:
        return 1.5
    if in_clause & before:
        return 1.0
    if (
        held.measure == "date"
        and _GENERIC_DATE.match(_LEADING_LINK.sub("", clause.strip()))
        and not _HAPPENED.search(change.sentence[change.start : change.end + 2])
        and not _HAPPENED_EN.search(change.sentence)
    ):
        # "日期定在10月16日", "The date is March 3": the date of what the whole
        # conversation plans, whatever word a decided shift names it by ("体检往后推一周");
        # not a shift told as news of something else ("我妈的体检推了两天").
        return 0.5
    return 0.0


_HAPPENED = Joined("relative", "perfective_le")
_HAPPENED_EN = Joined("relative", "shift_told")
# A clause that names its date by no event, only as "the date".
_GENERIC_DATE = Joined("relative", "generic_date")


# -- computing the new value ------------------------------------------------------


def _fmt_number(n: float, like: str) -> str:
    decimals = len(like.split(".")[1]) if re.search(r"\d\.\d", like) else 0
    if decimals == 0 and abs(n - round(n)) > 1e-9:
        decimals = 2
    text = (
        f"{n:,.{decimals}f}"
        if "," in like or (n >= 10_000 and re.search(r"[$€£]", like))
        else (f"{n:.{decimals}f}")
    )
    return text


def _new_amount(change: Change, held: Held) -> float | None:
    if change.measure in ("count", "number", "money", "points"):
        new = held.number + change.sign * change.amount
    else:  # percent of an amount
        new = held.number * (1 + change.sign * change.amount / 100)
    if new < 0 or (new == 0 and held.measure == "count"):
        return None
    if held.measure == "count" and abs(new - round(new)) > 1e-9:
        return None  # "cut the 45 guests by 10%": no whole number of guests
    return round(new, 2)


_NUM_IN = re.compile(
    rf"\d+(?:,\d{{3}})*(?:\.\d+)?(?:\s?[kK万千](?![a-zA-Z]))?|{_ZH_NUM}|\b{_EN_WORD_NUM}\b", re.I
)


def _restate_amount(held: Held, new: float) -> str | None:
    """`held.text` with its number replaced by `new` ("$1,500" → "$1,800", "八名" → "10名")."""
    if re.search(r"[一二两三四五六七八九]成半?$", held.text):
        return f"{new:g}%"  # "三成" raised by five points is 35%, not "35成"
    m = _NUM_IN.search(held.text)
    if m is None:
        return None
    like = m.group(0)
    scale = 1.0
    if re.search(r"[kK]$", like):
        scale = 1000.0
    elif like.endswith("万"):
        scale = 10_000.0
    elif like.endswith("千") and re.match(r"\d", like):
        scale = 1000.0
    value = new / scale
    digits = _fmt_number(value, like)
    suffix = like[-1] if scale != 1.0 else ""
    return held.text[: m.start()] + digits + suffix + held.text[m.end() :]


_CLOCK = re.compile(
    r"(?P<zh>早上|上午|中午|下午|晚上|凌晨)?(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s?(?P<ampm>am|pm)?"
    r"(?P<dian>点半?)?(?P<fen>\d+分)?",
    re.IGNORECASE,
)
_ZH_HALF = {"早上": 0, "上午": 0, "凌晨": 0, "中午": 12, "下午": 12, "晚上": 12}


def _shift_clock(text: str, minutes: float) -> str | None:
    """Every clock time in `text` moved by `minutes` ("10am to 8pm" +120 → "12pm to 10pm")."""
    out, last, moved = [], 0, 0
    for m in _CLOCK.finditer(text):
        # A bare hour counts only as one end of a span ("9 to 5pm").
        bare = not (m.group("ampm") or m.group("m") or m.group("dian"))
        if bare and not re.match(r"\s?(?:to|until|till|-|–|到|至)", text[m.end() :], re.I):
            continue
        hour = int(m.group("h"))
        minute = int(m.group("m") or 0)
        if m.group("dian") == "点半":
            minute = 30
        if m.group("fen"):
            minute = int(m.group("fen")[:-1])
        ampm = (m.group("ampm") or "").lower()
        if not ampm:
            nxt = re.search(r"\d\s?(am|pm)", text[m.end() :], re.IGNORECASE)
            ampm = nxt.group(1).lower() if nxt else ""
        if ampm:
            hour = hour % 12 + (12 if ampm == "pm" else 0)
        elif m.group("zh") and hour < 12:
            hour += _ZH_HALF[m.group("zh")]
        total = (hour * 60 + minute + int(minutes)) % (24 * 60)
        out.append(text[last : m.start()] + _clock_text(m, total, bool(ampm)))
        last = m.end()
        moved += 1
    if not moved:
        return None
    return "".join(out) + text[last:]


def _clock_text(m: re.Match[str], total: int, meridiem: bool) -> str:
    hour, minute = divmod(total, 60)
    if meridiem:
        h12 = hour % 12 or 12
        mins = f":{minute:02d}" if minute or m.group("m") else ""
        return f"{h12}{mins}{'pm' if hour >= 12 else 'am'}"
    if m.group("dian"):
        zh = m.group("zh") or ""
        if zh:
            zh = (
                "凌晨"
                if hour < 5
                else "上午"
                if hour < 12
                else "中午"
                if hour < 13
                else ("下午" if hour < 18 else "晚上")
            )
        h = hour % 12 if zh and hour > 12 else hour
        tail = "点半" if minute == 30 else f"点{minute}分" if minute else "点"
        return f"{zh}{h}{tail}"
    return f"{hour:02d}:{minute:02d}" if m.group("h").startswith("0") else f"{hour}:{minute:02d}"


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


def _parse_date(text: str) -> dt.date | None:
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


def _shift_date(text: str, change: Change) -> str | None:
    date = _parse_date(text)
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


def _restated(change: Change, held: Held) -> tuple[str, str] | None:
    """(the held value's new text, the derivation) or None when it cannot be computed."""
    if change.measure == "minutes":
        new = _shift_clock(held.text, change.sign * change.amount)
        return (new, "") if new else None
    if change.measure in ("days", "months"):
        new = _shift_date(held.text, change)
        return (new, "") if new else None
    amount = _new_amount(change, held)
    if amount is None:
        return None
    new = _restate_amount(held, amount)
    if new is None:
        return None
    old_n = _fmt_number(held.number, held.text)
    if change.measure == "percent":
        delta = f"{'+' if change.sign > 0 else '−'} {change.amount:g}%"
    else:
        delta = f"{'+' if change.sign > 0 else '−'} {_fmt_number(change.amount, held.text)}"
    return new, f"{old_n} {delta}"


_QUOTE_CLAUSE = re.compile(r"[，,;；:：]\s*")


def _quote(change: Change) -> str:
    """The words that made the change, short: the clause holding the cue ("let's allow
    two more than I said", "首播往后推一周吧"), or the cue alone when that clause is long."""
    s = change.sentence
    lo = max((m.end() for m in _QUOTE_CLAUSE.finditer(s, 0, change.start)), default=0)
    hi = _QUOTE_CLAUSE.search(s, change.end)
    clause = s[lo : hi.start() if hi else len(s)]
    if len(clause) > 45:
        clause = s[change.start : change.end]
    return " ".join(clause.split()).strip().rstrip("。.!！")


# Where a comma-level clause ends (as `policies.language.segment.without_clause` reads them).
_CLAUSE_END = re.compile(
    rf"[，；;、]\s*|{_NOT_AFTER_WEEKDAY},(?!\d{{3}}\b)\s*|\s+(?:and|but)\s+|[。.!?！？]\s*$",
    re.IGNORECASE,
)
# "Monday, " right before a date: no longer the right day once the date moves by days
# that are not whole weeks (the year, and so the new weekday, is not known).
_WEEKDAY_BEFORE = Joined("relative", "weekday_before")
_LEADING_LINK = Joined("relative", "leading_link")


def _clause_span(text: str, start: int, end: int) -> tuple[int, int]:
    lo = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    hi = _CLAUSE_END.search(text, end)
    return lo, hi.start() if hi else len(text)


def _derived(item: MemoryItem, held: Held, new_text: str, derivation: str, change: Change) -> str:
    """The clause that held the quantity, at its new value, with how it was derived:
    "至少10名保安（8 + 2：“再加两个”）". Only that clause: the replacement is what a
    stale mention of the old value gets annotated with, and must stay short."""
    own = _own(item.value)
    lo, hi = _clause_span(own, held.start, held.end)
    before = own[lo : held.start]
    if change.measure == "days" and change.amount % 7:
        before = _WEEKDAY_BEFORE.sub("", before)
    clause = before + new_text + own[held.end : hi]
    clause = _LEADING_LINK.sub("", clause.strip())
    zh = bool(re.search(r"[\u4e00-\u9fff]", change.sentence))
    quote = _quote(change)
    if not derivation:
        sign = "+" if change.sign > 0 else "−"
        derivation = f"{sign}{change.amount_text}"
    body = f"{derivation}：“{quote}”" if zh else f'{derivation}: "{quote}"'
    return f"{clause}（{body}）" if zh else f"{clause} ({body})"


# A limit with its number in words ("teams of up to four") is a value of its own.
_WORDED_BOUND = re.compile(
    rf"\b(?:up to|at most|at least|no more than|no fewer than|max(?:imum)?(?: of)?"
    rf"|min(?:imum)?(?: of)?)\s+(?:{_EN_WORD_NUM})\b",
    re.IGNORECASE,
)


def _rest(item: MemoryItem, held: Held) -> str | None:
    """The other clauses of the item ("Canning day is Thursday, May 8"): they still hold."""
    own = _own(item.value)
    lo, hi = _clause_span(own, held.start, held.end)
    return _rest_around(item, own, lo, hi)


def _rest_around(item: MemoryItem, own: str, lo: int, hi: int) -> str | None:
    head = own[:lo].rstrip()
    head = re.sub(r"(?:\s+(?:and|but|so))?[\s，,；;、]*$", "", head)
    tail = own[hi:].lstrip(" ，,；;、")
    if not re.search(r"\w", tail):
        tail = ""
    sep = "，" if re.search(r"[\u4e00-\u9fff]$", head) else ", "
    rest = (head + sep + tail if head and tail else head or tail).strip()
    rest = rest.rstrip("，,；;、 ")
    content = [t for t in terms(rest) if not re.fullmatch(r"[\d.,%]+", t)]
    valued = bool(_values(rest)) or bool(_WORDED_BOUND.search(rest))
    if len(content) < 3 and not valued:
        return None
    # What is left of a rule must still ask for something or hold a value of its own
    # (as the revision resolver keeps the rest of a revised item); the reasons given
    # for the old value ("we're home in the evenings") are no requirement.
    if item.type in ("constraint", "preference") and not valued and read_cues(rest).requirement < 2:
        return None
    return rest


# -- entry point ------------------------------------------------------------------


@dataclass(slots=True)
class Relative:
    """What the relative changes of one message do: ops, and the sentences they used."""

    ops: list[MemoryOp] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)
    targets: set[str] = field(default_factory=set)

    def replace(self, old: MemoryItem, value: str, ordinal: int, new_id: Callable[[], str]) -> None:
        """Supersede `old` by the user's restatement `value` (same type, slot, weight)."""
        self.ops.append(Supersede(old.id, _restatement(old, value, ordinal, new_id)))
        self.targets.add(old.id)

    def absorb(self, other: Relative) -> None:
        """Add what another change reader did with the same message."""
        self.ops += other.ops
        self.sentences += other.sentences
        self.targets |= other.targets

    def untouched(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """`items` no change read so far has superseded."""
        return [it for it in items if it.id not in self.targets]

    def used(self, statement_text: str) -> bool:
        """Was a statement's sentence read as a relative change (so it is no item of its own)?"""
        return any(_norm(s) in _norm(statement_text) or _norm(statement_text) in _norm(s)
                   for s in self.sentences)  # fmt: skip


def _restatement(
    old: MemoryItem, value: str, ordinal: int, new_id: Callable[[], str]
) -> MemoryItem:
    """A new user item said at `ordinal` in place of (part of) `old`: its type, slot, weight."""
    return MemoryItem(
        id=new_id(),
        type=old.type,
        slot=old.slot,
        value=value,
        source="user",
        source_ordinal=ordinal,
        importance=old.importance,
    )


def _norm(text: str) -> str:
    return re.sub(r"[\s，。,.!?！？；;：:]+", "", text)


@dataclass(frozen=True, slots=True)
class _Pick:
    item: MemoryItem
    held: Held
    level: float


def _pick(change: Change, previous: str, items: Sequence[MemoryItem]) -> _Pick | None:
    now = _topic(change.sentence, change)
    before = set(terms(previous)) - _CUE_WORDS
    best: list[_Pick] = []
    for item in items:
        for held in _values(item.value):
            clause = _clause_at(_own(item.value), held.start, held.end)
            if _PAST.search(clause):
                continue
            level = _level(change, held, clause, now, before)
            if level <= 0:
                continue
            if not best or level > best[0].level:
                best = [_Pick(item, held, level)]
            elif level == best[0].level:
                best.append(_Pick(item, held, level))
    if not best:
        return None
    latest = max(p.item.source_ordinal for p in best)
    recent = [p for p in best if p.item.source_ordinal == latest]
    # Two quantities of the most recent item fit equally: which one is meant is unclear.
    if len({(p.item.id, p.held.start) for p in recent}) > 1:
        return None
    return recent[0]


def _states_new_value(change: Change, held: Held) -> bool:
    """ "换成10月27号的航班，晚一周", "少订一间，那就是4间吧": the sentence also says the
    new value itself; that is an absolute change, which the revision resolver links."""
    text = change.sentence
    rest = text[: change.start] + " " * (change.end - change.start) + text[change.end :]
    return any(_same_quantity(held, h) for h in _values(rest))


def _dormant(history: Sequence[MemoryItem], change: Change) -> list[MemoryItem]:
    """Superseded items whose quantity no later item restated.

    A supersession that does not restate the quantity (a rule reworded, an
    item replaced by an unrelated one) leaves the number as the user last
    said it: "no more than 4 fish" is still the cap after a sentence about
    the lease took its place. What the user withdrew (revoked) is not.
    """
    by_id = {it.id: it for it in history}
    out: list[MemoryItem] = []
    for item in history:
        if item.status != "superseded" or item.source != "user":
            continue
        held = [h for h in _values(item.value) if _fits_measure(change, h)]
        if not held:
            continue
        successor, seen, restated = by_id.get(item.superseded_by or ""), set(), False
        while successor is not None and successor.id not in seen and not restated:
            seen.add(successor.id)
            later = _values(successor.value)
            restated = any(_same_quantity(a, b) for a in held for b in later)
            successor = by_id.get(successor.superseded_by or "")
        if not restated:
            out.append(item)
    return out


def _what(held: Held) -> str:
    """What a quantity counts: "fish", "保安", "箱"; a currency; "" for times and dates."""
    if held.measure != "count":
        return held.unit
    if re.search(r"[\u4e00-\u9fff]", held.window):
        return held.unit or _ZH_PARTICLES.sub("", held.window[1:])[:2]
    words = _counted_words(held.window)
    return words[0] if words else ""


def _same_quantity(a: Held, b: Held) -> bool:
    """Do two quantities measure the same thing (so that `b` restates `a`)?"""
    return a.measure == b.measure and (_what(a) == _what(b) or not _what(a) or not _what(b))


@dataclass(frozen=True, slots=True)
class _Fit:
    pick: _Pick
    new_text: str
    derivation: str
    change: Change


def _in_own_clause(change: Change) -> Change:
    """The change read within its own clause: "冲的再加两个，保的减两个" holds two."""
    lo, hi = _clause_span(change.sentence, change.start, change.end)
    return replace(change, sentence=change.sentence[lo:hi], start=change.start - lo,
                   end=change.end - lo)  # fmt: skip


def _several_fits(changes: Sequence[Change], pool: Sequence[MemoryItem]) -> list[_Fit]:
    """Several changes in one sentence ("冲的再加两个，保的减两个", "two more vans and one
    fewer driver"): each, in its own clause, must name the quantity it changes (its
    noun, or the label a listed count carries) and no two may change the same one;
    otherwise none is applied."""
    spans = [_clause_span(c.sentence, c.start, c.end) for c in changes]
    if len(set(spans)) != len(spans):
        return []
    fits: list[_Fit] = []
    for change in map(_in_own_clause, changes):
        pick = _pick(change, "", pool)
        if pick is None or pick.level < 3 or _states_new_value(change, pick.held):
            return []
        restated = _restated(change, pick.held)
        if restated is None:
            return []
        fits.append(_Fit(pick, restated[0], restated[1], change))
    held = {(f.pick.item.id, f.pick.held.start) for f in fits}
    return fits if len(held) == len(fits) else []


def _by_item(fits: Sequence[_Fit]) -> list[tuple[MemoryItem, list[_Fit]]]:
    out: dict[str, tuple[MemoryItem, list[_Fit]]] = {}
    for fit in fits:
        out.setdefault(fit.pick.item.id, (fit.pick.item, []))[1].append(fit)
    return list(out.values())


def _derived_together(item: MemoryItem, fits: Sequence[_Fit]) -> str:
    """The clauses holding the changed quantities, each at its new value, with the
    derivations and the sentence that made them: "冲10个、稳20个、保10个（8 + 2、12 − 2：…）"."""
    if len(fits) == 1:
        f = fits[0]
        return _derived(item, f.pick.held, f.new_text, f.derivation, f.change)
    own = _own(item.value)
    spans = [_clause_span(own, f.pick.held.start, f.pick.held.end) for f in fits]
    lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
    text = own
    for f in sorted(fits, key=lambda f: f.pick.held.start, reverse=True):
        text = text[: f.pick.held.start] + f.new_text + text[f.pick.held.end :]
    grown = len(text) - len(own)
    clause = _LEADING_LINK.sub("", text[lo : hi + grown].strip())
    zh = bool(re.search(r"[\u4e00-\u9fff]", fits[0].change.sentence))
    parts = [f.derivation or f"{'+' if f.change.sign > 0 else '−'}{f.change.amount_text}"
             for f in fits]  # fmt: skip
    quotes = [_quote(f.change) for f in fits]
    if zh:
        return f"{clause}（{'、'.join(parts)}：“{'，'.join(quotes)}”）"
    return f'{clause} ({", ".join(parts)}: "{", ".join(quotes)}")'


def relative_changes(
    message: str,
    live: Sequence[MemoryItem],
    ordinal: int,
    new_id: Callable[[], str],
    history: Sequence[MemoryItem] = (),
) -> Relative:
    """Ops that restate earlier quantities the message changes relatively.

    `history`: every item of the session (all statuses), for quantities a
    supersession left standing (`_dormant`).
    """
    out = Relative()
    candidates = [
        it for it in live
        if it.status in _LIVE and it.source == "user" and it.type in _RULES_OR_FACTS
    ]  # fmt: skip
    sentences = split_sentences(message)
    for i, sentence in enumerate(sentences):
        changes = read_changes(sentence)
        if not changes:
            continue
        if len(changes) > 1:
            pool = [it for it in candidates if it.id not in out.targets]
            fits = _several_fits(changes, pool)
            if not fits:
                continue  # which change goes where is unclear
            for old, mine in _by_item(fits):
                out.replace(old, _derived_together(old, mine), ordinal, new_id)
                own = _own(old.value)
                spans = [_clause_span(own, f.pick.held.start, f.pick.held.end) for f in mine]
                rest = _rest_around(old, own, min(a for a, _ in spans), max(b for _, b in spans))
                if rest is not None:
                    out.ops.append(Add(_restatement(old, rest, ordinal, new_id)))
            out.sentences.append(sentence)
            continue
        change = changes[0]
        pool = [it for it in candidates if it.id not in out.targets]
        pool += [it for it in _dormant(history, change) if it.type in _RULES_OR_FACTS]
        pick = _pick(change, sentences[i - 1] if i else "", pool)
        if pick is None or _states_new_value(change, pick.held):
            continue
        restated = _restated(change, pick.held)
        if restated is None:
            continue
        new_text, derivation = restated
        old = pick.item
        out.replace(old, _derived(old, pick.held, new_text, derivation, change), ordinal, new_id)
        rest = _rest(old, pick.held)
        if rest is not None:
            out.ops.append(Add(_restatement(old, rest, ordinal, new_id)))
        out.sentences.append(sentence)
    return out
