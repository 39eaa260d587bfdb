"""How well one held quantity fits one change: a level from 0 (not at all) to 4.

A holder must measure the same thing (same counted noun or classifier, same currency,
a clock time for a shift in minutes, a date for a shift in days). Unless the change
names what it counts, the topic of its sentence (or of the sentence before) must name
the holder's noun or clause; a change in places fits a capped count.
"""

from __future__ import annotations

import re

from policies.extract.relative.amounts import ZH_PARTICLES, Change, singular
from policies.extract.relative.clauses import LEADING_LINK, clause_span
from policies.extract.relative.held import Held
from policies.language.text import terms
from policies.rulebook import Joined

# Words around a change that say what kind of change it is, not what it changes.
CUE_WORDS = frozenset(
    "add adding another extra additional more fewer less allow allowing raise increase bump "
    "boost lift cut reduce lower drop trim decrease shrink knock shave slash take remove push "
    "move slide shift delay postpone pull bring later earlier sooner back forward whole said "
    "say let's lets go plus up down by than originally planned before total".split()
)


def _bag(text: str) -> set[str]:
    """Terms of `text`, English ones stemmed ("lights" meets "light")."""
    return {singular(t) if t.isascii() else t for t in terms(text)} - CUE_WORDS


def topic_terms(sentence: str, change: Change) -> set[str]:
    """What the sentence names besides the change itself ("cut the venue quote by 10%":
    venue, quote): its words without the cue words and the amount."""
    text = sentence.replace(change.amount_text, " ", 1)
    return {t for t in _bag(text) if not re.fullmatch(r"[\d.,%]+", t)}


def fits_measure(change: Change, held: Held) -> bool:
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


def counted_words(window: str) -> list[str]:
    """The first words after a number, up to a function word: "security guards",
    "fish total", not "to a case"."""
    out: list[str] = []
    for word in re.findall(r"[a-z][a-z-]*", window.lower())[:3]:
        if word in _FUNCTION_WORDS:
            break
        out.append(singular(word))
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
    return bool(counted_words(held.window))


def _noun_matches(change: Change, held: Held) -> bool:
    unit = change.unit
    if change.cls or re.search(r"[\u4e00-\u9fff]", unit):
        if unit:
            return unit in held.window or (len(unit) >= 2 and unit[:2] in held.window)
        # "少订20箱" after "订了40箱": the classifier says what, when no noun does
        return held.window.startswith(change.cls)
    return unit in counted_words(held.window)


# Words before a Chinese change that are not what it changes: "我们再加两个", "那就少一个".
_ZH_LABEL_STOP = Joined("relative", "label_stop")
_ZH_LABEL_END = Joined("relative", "label_end")


def _zh_label(change: Change) -> str:
    """What a Chinese change names right before its cue, as a list's item names its
    count: "红的再加三个" → 红, "备用的减一个" → 备用 ("" when it names nothing)."""
    s = change.sentence
    lo, _ = clause_span(s, change.start, change.end)
    label = _ZH_LABEL_END.sub("", s[lo : change.start].strip())
    label = re.sub(r"^(?:那|把|给|让|将)", "", label)
    if not re.fullmatch(r"[\u4e00-\u9fff]{1,4}", label) or _ZH_LABEL_STOP.match(label):
        return ""
    return label


def _labels_match(change: Change, held: Held) -> bool:
    """ "红5个、蓝9个、白3个" then "红的再加三个": the count the change's label names
    right before its number, in that count's own clause."""
    label = _zh_label(change)
    if not label or not held.owner:
        return False
    lo, _ = clause_span(held.owner, held.start, held.end)
    return held.owner[lo : held.start].endswith(label)


def _partitive(held: Held, topic: set[str]) -> bool:
    """ "20 cases of the run" is a share of the run: adding to the run changes its total."""
    m = re.search(r"\bof (?:the|our|this|that|my) ([a-z]+)", held.window.lower())
    if m and singular(m.group(1)) in topic:
        return True
    return bool(re.match(r"[^，。,.]{0,6}(?:中的|里的|其中)", held.window))


def fit_level(change: Change, held: Held, clause: str, now: set[str], before: set[str]) -> float:
    """How well `held` fits `change`: 0 (not at all) .. 4 (the named noun)."""
    if not fits_measure(change, held) or _partitive(held, now):
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
            noun = ZH_PARTICLES.sub("", held.window.lstrip(held.window[:1]))
            window = _bag(noun) | ({noun} if len(noun) == 1 else set())
        else:
            window = set(counted_words(held.window))
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
        and _GENERIC_DATE.match(LEADING_LINK.sub("", clause.strip()))
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
