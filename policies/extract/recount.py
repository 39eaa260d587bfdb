"""A head count told again as the whole group now (zh + en).

People give the size of the group a plan is for early ("全公司大概120人", "we'll be
about 40 guests", "现在员工一共6个人") and later the count as it stands, often with
another wording and with no change cue, sometimes inside a request: "报名表收齐了，
138人", "下个月9个人的排班表你帮我弄一下", "we're at 46 people in total now". The
counted word differs (人 / 个人, guests / people), so nothing links the two and the
old count stays current next to the new one.

A recount is read only from what is stated: the old count is of a whole group and
marked as a guess or as the whole (大概 / 约 / about / 一共 / 全公司 / in total), the
new one is marked as the whole now (一共 / 收齐 / 到时候 / 现在 / now / in total /
final), both count people, and exactly one live item holds such a whole count. A
count of a part ("其中30人是外地的", "12 of them are vegetarian"), of a unit ("每桌
10人", "6 people per table"), of a much smaller or larger group ("销售部一共30人"
after "全公司大概120人": more than half again apart) or told in a story ("去年年会来了
90人") is no recount.

The words of a whole count and of a story are rules kept as data
(`policies/rules/<lang>/recount.yaml`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from policies.extract.relative import Relative
from policies.language.questions import is_question
from policies.language.segment import split_sentences
from policies.language.values import Value, extract_values
from policies.memory.slots import same_unit_change
from policies.rulebook import Joined
from policies.types import MemoryItem

_LIVE = frozenset({"active", "pending"})

# A head count told as the whole of a group, or as the whole now.
_WHOLE = Joined("recount", "whole", ("zh", "en"))
# A number given as a guess: "大概120人", "about 40 guests", "30人左右". The guess
# and part patterns stay code: each has one group of both scripts' words, which split
# into halves would be other branches.
_GUESS_BEFORE = re.compile(
    r"(?:大概|大约|约|预计|估计|差不多|about|around|roughly|approximately|an estimated)"
    r"\W{0,2}[^，。,.;；]{0,4}$",
    re.IGNORECASE,
)
_GUESS_AFTER = re.compile(r"^\s*(?:左右|上下|or so|-ish)", re.IGNORECASE)
# A count of a part or of a unit, not of the whole group: "其中30人", "每桌10人",
# "12 of them", "6 people per table", "each car takes 4 people".
_PART_BEFORE = re.compile(
    r"(?:其中|里面|当中|中有|每|单|第[一二三四五六七八九十\d]+[批组轮场天队桌车]"
    r"|\bper\b|\beach\b|\bevery\b"
    r"|\b(?:first|second|third|fourth|last|next) (?:batch|group|round|wave|shift|session)\b)"
    r"\W{0,2}[^，。,.;；]{0,6}$",
    re.IGNORECASE,
)
_PART_AFTER = re.compile(
    r"^\s*(?:of (?:them|whom|us|those|the)\b|per\b|each\b|a (?:table|car|room|team|group)\b"
    r"|一桌|一车|一组|一间|一队|每|/)",
    re.IGNORECASE,
)
# A count in a story of another time: "去年年会来了90人", "back then we were 12 people".
_STORY = Joined("recount", "story", ("zh", "en"))
_CLAUSE_END = re.compile(r"[，,。;；!?！？—\n]|\.(?=\s|$)")


def _clause_text(text: str, v: Value) -> str:
    """The clause holding `v` and the one before it ("报名表今天收齐了，138人")."""
    ends = [m.end() for m in _CLAUSE_END.finditer(text, 0, v.start)]
    lo = ends[-2] if len(ends) > 1 else 0
    m = _CLAUSE_END.search(text, v.end)
    return text[lo : m.start() if m else len(text)]


def _guessed(text: str, v: Value) -> bool:
    return bool(
        _GUESS_BEFORE.search(text[max(0, v.start - 12) : v.start])
        or _GUESS_AFTER.match(text[v.end : v.end + 6])
    )


def _people_counts(text: str, values: Sequence[Value]) -> list[Value]:
    """Counts of people that count a whole group, not a part or a unit of it."""
    if _STORY.search(text):
        return []
    return [
        v for v in values
        if v.kind == "qty" and v.unit in ("人", "person") and v.number is not None
        and not _PART_BEFORE.search(text[max(0, v.start - 14) : v.start])
        and not _PART_AFTER.match(text[v.end : v.end + 12])
    ]  # fmt: skip


def whole_counts(text: str) -> list[Value]:
    """Counts of a whole group of people in `text`, told as a guess or as the whole."""
    return [
        v for v in _people_counts(text, extract_values(text))
        if _guessed(text, v) or _WHOLE.search(_clause_text(text, v))
    ]  # fmt: skip


def recounted_pair(text: str, values: Sequence[Value], old_text: str) -> tuple[Value, Value] | None:
    """The (new, old) counts when `text` tells the whole count now and `old_text` held
    a whole or guessed count of people that differs."""
    new = [
        v for v in _people_counts(text, values)
        if not _guessed(text, v) and _WHOLE.search(_clause_text(text, v))
    ]  # fmt: skip
    old = whole_counts(old_text)
    return next(
        ((a, b) for a in new for b in old if same_unit_change([a], [b]) and _close(a, b)),
        None,
    )


def _close(a: Value, b: Value) -> bool:
    """A group recounted grows or shrinks by a few, not by half: "销售部一共30人" after
    "全公司大概120人" counts another, smaller group."""
    x, y = a.number or 0.0, b.number or 0.0
    return min(x, y) > 0 and max(x, y) / min(x, y) <= 1.5


def sole_count(live: Sequence[MemoryItem], exclude: str = "") -> MemoryItem | None:
    """The only live user item holding a whole count of people, if there is one: with
    two ("全公司120人" and "销售部30人"), nothing says which group is counted now."""
    counted = [
        it for it in live
        if it.status in _LIVE and it.source == "user" and it.value != exclude
        and whole_counts(it.value)
    ]  # fmt: skip
    return counted[0] if len(counted) == 1 else None


def recount_replacements(
    message: str,
    live: Sequence[MemoryItem],
    read: Sequence[str],
    ordinal: int,
    new_id: Callable[[], str],
) -> Relative:
    """A recount said in a sentence that is no statement of its own (a request, `read`
    holding the statements): "下个月9个人的排班表，你帮我想想怎么分". A statement is
    left to the resolver."""
    out = Relative()
    old_item = sole_count(live)
    if old_item is None:
        return out
    for sentence in split_sentences(message):
        s = sentence.strip()
        if not s or is_question(s) or any(s in r or r in s for r in read):
            continue
        if recounted_pair(s, extract_values(s), old_item.value) is None:
            continue
        out.sentences.append(s)
        out.replace(old_item, s, ordinal, new_id)
        break
    return out
