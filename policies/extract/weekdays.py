"""One day of a weekly schedule moved, the rest kept (zh + en).

A schedule that names several weekdays ("choir practice every Monday and
Wednesday at 7pm", "每周一、三晚上七点上课") is often changed one day at a time:
"move the Wednesday one to Thursday, the rest stays", "周三那节课换到周四，别的照旧".
The sentence names two days and no other value, so the revision resolver
cannot tell which item it changes, and the old schedule stays current with
the day that moved.

Here such a move is read (the old day, a moving verb, the new day), the one
live item whose schedule lists the old day among others is found, and it is
restated with that day swapped, plus where the change came from:
"每周一、四晚上七点上课（周三→周四：“周三那节课换到周四”）". The old item is
superseded, so the stale filter marks old mentions of it. When no item, or
more than one, lists the old day among others, nothing happens: a single-day
schedule moved ("put the sessions on Tuesdays then") is the resolver's.

The words of a day and of a move are rules kept as data
(`policies/rules/<lang>/weekdays.yaml`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from policies.extract.relative import Relative
from policies.language.questions import is_question
from policies.language.segment import split_sentences
from policies.language.text import terms
from policies.rulebook import Joined
from policies.types import MemoryItem

_LIVE = frozenset({"active", "pending"})
_KINDS = frozenset({"constraint", "preference", "fact", "goal", "state", "entity", "directive"})

_EN_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_EN_DAY = Joined("weekdays", "day", ("en",))
ZH_DIGIT = "一二三四五六日天"  # the rules' fragment digit, read as numbers
# "周二", "星期四", "礼拜天"; a list continues without the prefix: "周二、四", "周一和三".
_ZH_DAY = Joined("weekdays", "day", ("zh",))
_ZH_MORE = Joined("weekdays", "more_day")


@dataclass(frozen=True, slots=True)
class _Day:
    number: int  # 1 (Monday) .. 7 (Sunday)
    start: int
    end: int
    text: str  # as written: "Thursday", "Thursdays", "周四", "四" (in "周二、四")


def _zh_number(char: str) -> int:
    return 7 if char in "日天" else ZH_DIGIT.index(char) + 1


def _days(text: str) -> list[_Day]:
    """Every weekday `text` names, in order."""
    out: list[_Day] = []
    for m in _EN_DAY.finditer(text):
        number = [d[:3] for d in _EN_DAYS].index(m.group(1)[:3].lower()) + 1
        out.append(_Day(number, m.start(), m.end(), m.group(0)))
    for m in _ZH_DAY.finditer(text):
        out.append(_Day(_zh_number(m.group(1)), m.start(), m.end(1), text[m.start() : m.end(1)]))
        for more in _ZH_MORE.finditer(m.group(2)):
            at = m.start(2) + more.start()
            out.append(_Day(_zh_number(more.group(0)), at, at + 1, more.group(0)))
    return sorted(out, key=lambda d: d.start)


# -- reading a move -------------------------------------------------------------

_EN_MOVE = Joined("weekdays", "move", ("en",))
_ZH_MOVE = Joined("weekdays", "move", ("zh",))
_NOT_NOW = Joined("weekdays", "not_now")
# "Don't move the Wednesday class to Friday", "周三的别改到周五": the schedule stays.
_REFUSED = Joined("weekdays", "refused")
_INSTEAD_OF = Joined("weekdays", "instead_of")


@dataclass(frozen=True, slots=True)
class _Move:
    old: _Day
    new: _Day
    sentence: str
    refused: bool = False  # said not to happen: the schedule stays as it is


def read_move(sentence: str) -> _Move | None:
    """One weekday moved to another: "move the Thursday one to Friday", "周四那场挪到周五"."""
    if is_question(sentence) or _NOT_NOW.search(sentence):
        return None
    days = _days(sentence)
    if len(days) != 2 or days[0].number == days[1].number:
        return None
    first, second = days
    between = sentence[first.end : second.start]
    refused = bool(_REFUSED.search(sentence[: second.start]))
    if _INSTEAD_OF.search(between):
        return _Move(second, first, sentence, refused)  # "Friday instead of Thursday"
    verb = _ZH_MOVE.search(between) or _EN_MOVE.search(sentence[: second.start])
    if verb is None:
        return None
    return _Move(first, second, sentence, refused)


# -- the schedule it changes -------------------------------------------------------


def _schedules(items: Sequence[MemoryItem], old: int, new: int) -> list[MemoryItem]:
    """Live items whose text lists `old` among other weekdays, and not `new`."""
    out = []
    for item in items:
        numbers = {d.number for d in _days(item.value)}
        if old in numbers and new not in numbers and len(numbers) >= 2:
            out.append(item)
    return out


# The moved day named by what it is to the schedule: "the Thursday one", "周四那场".
_GENERIC = Joined("weekdays", "generic")
_MOVE_WORDS = frozenset(
    {"move", "moving", "moves", "moved", "shift", "switch", "swap", "change", "push", "bump",
     "put", "make", "instead", "rest", "stays", "stay", "same", "else", "everything", "keep",
     "let", "let's", "lets", "now", "then", "from", "ok", "okay", "please", "do", "don't",
     "挪到", "改到", "换到", "调到", "移到", "改成", "换成", "推到", "其他", "照旧", "不变"}
)  # fmt: skip


def _about(move: _Move, item: MemoryItem) -> bool:
    """Is the move about this schedule: the day named as one of its sessions, or a
    word of the schedule said with it? ("Move my dentist appointment from Wednesday
    to Friday" moves no yoga class.)"""
    if _GENERIC.search(move.sentence[move.old.end :]):
        return True
    days = {d.text.lower() for d in _days(move.sentence)}
    own = {
        t for t in terms(move.sentence)
        if t not in _MOVE_WORDS and t not in days and not any(c in t for c in "周星礼")
    }  # fmt: skip
    # Nothing but days and a move ("Let's do Saturdays instead of Fridays from now
    # on"): about the schedule that has the day, when only one has it.
    return not own or bool(own & set(terms(item.value)))


def _swap(text: str, move: _Move) -> str:
    """`text` with every mention of the old day written as the new one, in its style."""
    parts: list[str] = []
    at = 0
    for day in _days(text):
        if day.number != move.old.number:
            continue
        parts.append(text[at : day.start])
        parts.append(_written_like(day.text, move.new.number))
        at = day.end
    parts.append(text[at:])
    return "".join(parts)


def _written_like(written: str, number: int) -> str:
    if re.match(r"[a-z]", written, re.IGNORECASE):
        name = _EN_DAYS[number - 1]
        name += "s" if written.lower().endswith("s") else ""
        return name.capitalize() if written[0].isupper() else name
    digit = "日" if number == 7 else ZH_DIGIT[number - 1]
    return written[:-1] + digit


def _quote(sentence: str) -> str:
    return sentence.strip().rstrip("。.！!；;，,")


def weekday_moves(
    message: str, live: Sequence[MemoryItem], ordinal: int, new_id: Callable[[], str]
) -> Relative:
    """Ops that move one day of a listed weekly schedule (see the module's docstring)."""
    out = Relative()
    candidates = [
        it for it in live if it.status in _LIVE and it.source == "user" and it.type in _KINDS
    ]
    for sentence in split_sentences(message):
        move = read_move(sentence)
        if move is None:
            continue
        pool = [it for it in candidates if it.id not in out.targets]
        targets = [
            it for it in _schedules(pool, move.old.number, move.new.number) if _about(move, it)
        ]
        if len(targets) != 1:
            continue  # none, or several schedules it could be: unclear
        old = targets[0]
        out.sentences.append(sentence)
        if move.refused:
            continue  # no item of its own, and no change: the schedule stands
        zh = bool(re.search(r"[\u4e00-\u9fff]", old.value))
        was, now = move.old.text, move.new.text
        if zh:
            derivation = f"（{was}→{now}：“{_quote(sentence)}”）"
        else:
            derivation = f' ({was} → {now}: "{_quote(sentence)}")'
        out.replace(old, _swap(old.value, move) + derivation, ordinal, new_id)
    return out
