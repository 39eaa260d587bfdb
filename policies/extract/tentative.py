"""A provisional value replaced by a later concrete one for the same thing (zh + en).

People often put a value down provisionally ("开工先定3月2日吧", "验收暂定周五",
"let's tentatively say March 12 for the tasting") and later name the real one
without any change cue, often inside a request: "3月4日进场的材料你帮我列一下",
"book the tasting for March 14". The request is no requirement of its own, and
without a cue the resolver does not link the two, so the provisional value stays
current and the real one is lost.

Here a live user item that marks its value as provisional (先定 / 暂定 / 先这样 /
tentatively / pencil in / for now) and holds exactly one value of a replaceable
kind (a date, time, amount) is superseded by a later sentence that is no question,
holds a different value of that kind, and shares an event word with the item (an
English content word, or a Chinese content character outside both values:
"回程" / "回北京"). The later sentence, verbatim, becomes the item. A firm value
is never replaced this way: without the provisional mark, a later value in a
request may be about something else.

The marks of a provisional value, an estimate and an outcome are rules kept as
data (`policies/rules/<lang>/tentative.yaml`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from itertools import pairwise

from policies.extract.relative import Relative
from policies.language.questions import is_question
from policies.language.segment import split_sentences
from policies.language.text import terms
from policies.language.values import Value, extract_values
from policies.rulebook import Joined
from policies.types import MemoryItem

_LIVE = frozenset({"active", "pending"})
_KINDS = frozenset({"date", "time", "money"})

_ZH_FIRST = ("zh", "en")
_TENTATIVE = Joined("tentative", "tentative", _ZH_FIRST)
# Words that say how firm a value is, or are about the date itself, not the event.
_NOT_EVENT = Joined("tentative", "not_event", _ZH_FIRST)
# Chinese characters that carry no event: particles, pronouns, date and time words,
# request verbs ("你帮我看看").
_ZH_STOP = frozenset(
    "的了吧呢吗啊呀哦嗯你我他她它们您这那个些就都也还再又先暂定是在有和与跟及或"
    "帮看查订买一二三四五六七八九十年月日号天周星期礼拜点半分时早中晚上下午前后今明"
    "去来要想能会可以把给让请麻烦下"
)
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _shift(value: Value, offset: int) -> Value:
    return replace(value, start=value.start - offset, end=value.end - offset)


def _values(text: str) -> list[Value]:
    return [v for v in extract_values(text) if v.kind in _KINDS]


def _without(text: str, values: Sequence[Value]) -> str:
    for v in sorted(values, key=lambda v: v.start, reverse=True):
        text = text[: v.start] + " " + text[v.end :]
    return _NOT_EVENT.sub(" ", text)


# Where a clause ends: the event a value is for is named in the value's own clause.
_CLAUSE_END = re.compile(r"[，,；;。！!？?]")


def _event_words(text: str, values: Sequence[Value]) -> set[str]:
    """Event words of the clauses that hold `values`: a long item's other clauses
    ("外婆90岁，5月3日过大寿") say nothing about what the value is for."""
    bounds = [0, *(m.end() for m in _CLAUSE_END.finditer(text)), len(text) + 1]
    spans = {(a, b) for a, b in pairwise(bounds) for v in values if a <= v.start < b}
    parts = [
        _without(text[a:b], [_shift(v, a) for v in values if a <= v.start < b]) for a, b in spans
    ]
    rest = " ".join(parts)
    words = {t for t in terms(rest) if not _CJK.match(t) and not t.isdigit()}
    return words | {ch for ch in _CJK.findall(rest) if ch not in _ZH_STOP}


# An estimate is provisional too ("她自己估分620分左右", "we expect around 60 guests"):
# the real figure, once known, replaces it ("成绩出来了！628分", "the final count came
# in at 72 guests"). It is replaced only by a sentence that reports that outcome (or
# follows one that does, in the same message) with a different value measured in the
# same unit; a mere second guess ("maybe 70") or another figure is no outcome.
_ESTIMATE = Joined("tentative", "estimate", _ZH_FIRST)
_OUTCOME = Joined("tentative", "outcome", _ZH_FIRST)
# A count of people or things settled later is linked by the resolver
# (`revision._estimate_settled`); here, what it does not read: bare figures ("620分"),
# amounts, dates, and an outcome announced in the sentence before its figure.
_ESTIMATE_KINDS = frozenset({"date", "time", "money", "number"})


def _measure(value: Value, text: str) -> str:
    """What a value measures: its kind, and for a count or a bare number its unit
    ("620分" 分, "60 guests" person)."""
    if value.kind == "qty":
        return f"qty:{value.unit}"
    if value.kind == "number":
        after = re.match(r"\s?([\u4e00-\u9fff]|[a-z]+)", text[value.end :], re.IGNORECASE)
        return f"number:{after.group(1).lower() if after else ''}"
    return value.kind


def _outcome_of(old: Value, old_text: str, new: Value, text: str, words: set[str]) -> bool:
    """Is `new` (in `text`) the outcome of the estimate `old`? The same measure, a
    different value, and either near it (an outcome lands within half of its estimate
    either way) or, for a date or a time, said of the same event."""
    if new.text == old.text or _measure(new, text) != _measure(old, old_text):
        return False
    if old.number is not None and new.number is not None:
        return old.number > 0 and abs(new.number - old.number) <= 0.5 * old.number
    return bool(words & _event_words(old_text, [old]))


def estimate_replacements(
    message: str, live: Sequence[MemoryItem], ordinal: int, new_id: Callable[[], str]
) -> Relative:
    """Ops that replace an estimated value by the outcome it estimated."""
    out = Relative()
    estimates = []
    for it in live:
        if it.status not in _LIVE or it.source != "user" or not _ESTIMATE.search(it.value):
            continue
        held = [v for v in extract_values(it.value) if v.kind in _ESTIMATE_KINDS]
        if len(held) == 1:
            estimates.append((it, held[0]))
    if not estimates:
        return out
    sentences = split_sentences(message)
    for i, sentence in enumerate(sentences):
        outcome = _OUTCOME.search(sentence) or (i and _OUTCOME.search(sentences[i - 1]))
        if not outcome or is_question(sentence) or _ESTIMATE.search(sentence):
            continue
        said = extract_values(sentence)
        words = _event_words(sentence, said)
        targets = [
            it for it, old in estimates
            if it.id not in out.targets
            and any(_outcome_of(old, it.value, v, sentence, words) for v in said)
            and not any(v.text == old.text for v in said)
        ]  # fmt: skip
        if len(targets) != 1:
            continue
        out.sentences.append(sentence)
        out.replace(targets[0], sentence.strip(), ordinal, new_id)
    return out


def tentative_replacements(
    message: str, live: Sequence[MemoryItem], ordinal: int, new_id: Callable[[], str]
) -> Relative:
    """Ops that replace a provisional value by a later one (see the module's docstring)."""
    out = Relative()
    provisional = []
    for it in live:
        if it.status not in _LIVE or it.source != "user" or not _TENTATIVE.search(it.value):
            continue
        held = _values(it.value)
        if len(held) == 1:
            provisional.append((it, held[0]))
    if not provisional:
        return out
    for sentence in split_sentences(message):
        if is_question(sentence) or _TENTATIVE.search(sentence):
            continue
        values = _values(sentence)
        words = _event_words(sentence, values)
        targets = [
            it
            for it, old in provisional
            if it.id not in out.targets
            and any(v.kind == old.kind and v.text != old.text for v in values)
            and not any(v.text == old.text for v in values)
            and words & _event_words(it.value, [old])
        ]
        if len(targets) != 1:
            continue  # none, or several provisional values it could replace: unclear
        old_item = targets[0]
        out.sentences.append(sentence)
        out.replace(old_item, sentence.strip(), ordinal, new_id)
    return out
