"""Choices that point at the assistant's list: "let's go with the second one", "就第二个吧".

The user picks an option by its position in the numbered (or bulleted) list
of the assistant message they answer. Kept verbatim, such a sentence says
nothing on its own ("the third one" of what?), so the option it names is
resolved against that list and written next to it: the user made the
choice, the option's words are what was chosen.

The words of a choice and of what makes it none are rules kept as data
(`policies/rules/<lang>/choices.yaml`); the shapes of a list line stay here.
"""

from __future__ import annotations

import re

from policies.language.matching import weighted_terms
from policies.rulebook import Joined

_NUMBERED = re.compile(
    r"^\s*(?:\(?(\d{1,2})[.)、．:：]|第([一二三四五六七八九十])[个种条套点]?[：:、.])\s*(.+)$"
)
_BULLET = re.compile(r"^\s*[-*•·]\s+(.+)$")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_HEAD_END = re.compile(r"\s*(?:[:：]|\s[—–-]\s|——|[，,。；;(（]|$)")
_ZH_NUM = {c: i for i, c in enumerate("一二三四五六七八九十", 1)}
_EN_ORD = {
    "first": 1, "1st": 1, "one": 1, "second": 2, "2nd": 2, "two": 2, "third": 3, "3rd": 3,
    "three": 3, "fourth": 4, "4th": 4, "four": 4, "fifth": 5, "5th": 5, "five": 5,
    "last": -1, "final": -1, "middle": 0,
}  # fmt: skip
_MAX_HEAD = 60

# "the second one", "option 2", "#3", "that last option"; "第二个", "选2", "方案三".
_CHOICE_EN = Joined("choices", "choice", ("en",))
_CHOICE_ZH = Joined("choices", "choice", ("zh",))
# A choice is made, not asked about ("is the second one cheaper?") or rejected
# ("not the first one"): the caller checks questions; this checks negation.
_NOT = Joined("choices", "not")


def list_options(message: str) -> list[str]:
    """The options of the numbered list in `message` (bullets if no numbers), in order:
    each option's head (its bold part, else the text up to its first separator)."""
    return [_head(option) for option in _option_lines(message)]


def _option_lines(message: str) -> list[str]:
    """The whole line of each option of the list in `message`, in order."""
    numbered: dict[int, str] = {}
    bullets: list[str] = []
    for line in message.splitlines():
        m = _NUMBERED.match(line)
        if m:
            index = int(m.group(1)) if m.group(1) else _ZH_NUM[m.group(2)]
            numbered.setdefault(index, m.group(3))
            continue
        b = _BULLET.match(line)
        if b:
            bullets.append(b.group(1))
    if len(numbered) >= 2:
        top = max(numbered)
        if sorted(numbered) != list(range(1, top + 1)):
            return []
        return [numbered[i] for i in range(1, top + 1)]
    if len(bullets) >= 2:
        return bullets
    return []


def _head(option: str) -> str:
    bold = _BOLD.search(option)
    if bold and bold.start() <= 2:
        head = bold.group(1) or bold.group(2) or ""
    else:
        plain = option.replace("**", "").replace("__", "")
        end = _HEAD_END.search(plain, 1)
        head = plain[: end.start()] if end else plain
    head = head.strip().strip("\"“”'`").strip()
    return head if len(head) <= _MAX_HEAD else head[: _MAX_HEAD - 1] + "…"


# How an item shows the option a pick resolved to: "就第二个吧 → 老码头环线".
CHOICE_MARK = " → "


def picked(value: str) -> str | None:
    """The option an item's value says was chosen from the assistant's list, if any."""
    _, mark, option = value.rpartition(CHOICE_MARK)
    return option.strip() or None if mark else None


def chosen_option(sentence: str, options: list[str]) -> str | None:
    """The option `sentence` picks from `options` by position, if it picks one."""
    if not options:
        return None
    index = _index(_position(sentence), len(options))
    return None if index is None else options[index - 1]


def _index(position: int | None, size: int) -> int | None:
    """1-based index of `position` in a list of `size` options ("last" is -1, "middle" 0)."""
    if position is None:
        return None
    if position == -1:
        return size
    if position == 0:
        return (size + 1) // 2 if size % 2 else None  # no middle in an even list
    return position if 1 <= position <= size else None


# An ordinal that ranks a person, not an option: someone is first to do something
# ("我第一个就种芹菜", "他第一个报了名", "she was the first one to sign up").
_DOER_BEFORE = Joined("choices", "doer_before")
_DOER_AFTER = Joined("choices", "doer_after")


def _position(sentence: str) -> int | None:
    for m in _CHOICE_EN.finditer(sentence):
        if _NOT.search(sentence[: m.start()]) or _DOER_AFTER.search(sentence[m.end() :]):
            continue
        word = (m.group(1) or m.group(2)).lower()
        return int(word) if word.isdigit() else _EN_ORD.get(word)
    for m in _CHOICE_ZH.finditer(sentence):
        if _NOT.search(sentence[: m.start()]) or _DOER_BEFORE.search(sentence[: m.start()]):
            continue
        if m.group(4):
            return -1
        if m.group(5):
            return 0
        token = next(g for g in m.groups()[:3] if g)
        return int(token) if token.isdigit() else _ZH_NUM.get(token)
    return None


LOOKBACK = 3  # assistant messages back that "the second one" may still point into


def answered_list(assistant_texts: list[str], reply: str = "") -> str:
    """The assistant message a choice by position points into, from the assistant
    messages before a user turn, newest first: the newest that holds a list, within
    `LOOKBACK` (a digression may sit between the list and "let's go with the second
    one"); otherwise the newest one.

    When several of them hold a list, the `reply` may say which by its reasons: "the
    last one, the brick glows at sunset" picks the list whose last option speaks of
    brick and sunset, not a newer list of unrelated tips."""
    lists = [text for text in assistant_texts[:LOOKBACK] if list_options(text)]
    if not lists:
        return assistant_texts[0] if assistant_texts else ""
    position = _position(reply) if reply and len(lists) > 1 else None
    if position is None:
        return lists[0]
    words = {t for t, w in weighted_terms(reply).items() if w >= 1}

    def shared(text: str) -> int:
        lines = _option_lines(text)
        index = _index(position, len(lines))
        if index is None:
            return -1
        return len(words & {t for t, w in weighted_terms(lines[index - 1]).items() if w >= 1})

    best = max(lists, key=shared)  # the newest among equals
    return best if shared(best) > max(shared(lists[0]), 0) else lists[0]
