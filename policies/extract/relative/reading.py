"""Reading the relative changes a sentence decides (zh + en).

A change is a direction cue and an amount: "two more", "add another $300", "cut it
by 10%", "push it back a week", "再加两个", "提前半小时". Shifts in time need a verb
that moves something; a question, a condition, a refusal or a change told as a story
decides nothing and reads as no change.
"""

from __future__ import annotations

import re

from policies.extract.relative.amounts import (
    EN_DUR_UNIT_END,
    ZH_DURATION,
    ZH_PARTICLES,
    ZH_TALK_NOUNS,
    Change,
    amount_number,
    en_amount,
    singular,
)
from policies.language.cues import read_cues
from policies.language.questions import is_question
from policies.rulebook import Joined

# Words after an amount that are not the counted noun ("two more than I said").
_NOT_NOUN = frozenset(
    "to than for on in at of please and or but so because this that per each if then now too "
    "as by from with into onto off it them is are was be more extra additional later earlier "
    "sooner back forward out up down instead total overall altogether".split()
)
# The change patterns (policies/rules/en/relative.yaml): group amt is the amount,
# noun what it counts.
_EN_INCREASE = [
    Joined("relative", "add_amount"),  # "add twelve cases", "add another $300"
    Joined("relative", "add_extra"),  # "add an extra guard"
    Joined("relative", "another_amount"),  # "another $300", "an extra 2 days"
    Joined("relative", "amount_more"),  # "two more", "$300 more", "12 extra cases"
    Joined("relative", "raised_by"),  # "raise the budget by $300", "up by 10%"
]
_EN_DECREASE = [
    Joined("relative", "amount_fewer"),  # "one fewer guard", "$200 less"
    Joined("relative", "lowered_by"),  # "cut it by 10%", "down by two"
    Joined("relative", "cut_amount"),  # "cut two guards", "knock $200 off"
]
# A shift in time needs a verb that moves something ("push it back a week",
# "slide the whole thing two hours later"), said now, not told as a story.
_EN_MOVE = Joined("relative", "moving_verb")
_EN_LATER = Joined("relative", "shift_later")
_EN_EARLIER = Joined("relative", "shift_earlier")

# policies/rules/zh/relative.yaml: groups amt, cls (classifier or unit) and noun.
_ZH_INCREASE = Joined("relative", "increase")
_ZH_DECREASE = Joined("relative", "decrease")
_ZH_LATER = Joined("relative", "later_by")
_ZH_EARLIER = Joined("relative", "earlier_by")

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
    unit = EN_DUR_UNIT_END.search(amount.lower())
    if unit:
        # "add an hour to each session": a length counted in hours, like "3 nights";
        # "cut an hour ago" is a story, and shifts are read with their moving verb.
        n = amount_number(amount)
        if n is None or re.match(r"\s+(?:ago|later|earlier|before|after|back)\b", after):
            return None
        return Change(
            sign, n, "count", singular(unit.group(0)), amount, sentence, m.start(), m.end()
        )
    read = en_amount(amount, noun)
    if read is None:
        return None
    number, measure, unit_name = read
    return Change(sign, number, measure, unit_name, amount, sentence, m.start(), m.end())


_EN_SHIFT_AMOUNT = Joined("relative", "shift_amount")


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
    read = en_amount(m.group(0), "")
    if read is None:
        return None
    number, measure, _ = read
    return Change(1 if later else -1, number, measure, "", m.group(0), sentence,
                  min(m.start(), move.start()), max(m.end(), move.end()))  # fmt: skip


def _zh_noun(raw: str) -> str:
    noun = ZH_PARTICLES.sub("", raw)
    return "" if any(noun.startswith(t) for t in ZH_TALK_NOUNS) else noun


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
            measure, per = ZH_DURATION[m.group("cls")]
            amt = m.group("amt")
            n = 1.5 if amt == "一个半" else amount_number(amt)
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
    n = amount_number(m.group("amt"))
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
    if raw_noun and not noun and any(raw_noun.startswith(t) for t in ZH_TALK_NOUNS):
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
