"""Reading the relative changes a sentence decides (zh + en).

A change is a direction cue and an amount: "two more", "add another $300", "cut it
by 10%", "push it back a week", "再加两个", "提前半小时". Shifts in time need a verb
that moves something; a question, a condition, a refusal or a change told as a story
decides nothing and reads as no change.
"""

from __future__ import annotations

import re

from policies.extract.relative.amounts import (
    _EN_AMOUNT,
    _EN_DUR_UNIT,
    _EN_DURATION,
    _ZH_AMT,
    _ZH_CLASSIFIER,
    _ZH_DUR_UNIT,
    _ZH_DURATION,
    _ZH_MONEY_UNIT,
    _ZH_NOT_AMOUNT,
    _ZH_NOT_ROUGH,
    _ZH_PARTICLES,
    _ZH_TALK_NOUNS,
    Change,
    _en_amount,
    _number,
    _stem,
)
from policies.language.cues import is_question, read_cues
from policies.rulebook import Joined

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
