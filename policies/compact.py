"""Shorter item lines: the clauses that hold the requirement, without their asides.

Items are the user's sentences, verbatim, and people wrap a requirement in
reasons and chatter ("…at 5am Eastern, which is when our listeners get off
shift, it's kind of our thing", "预算还是放到2500吧，一辈子就一次六岁生日").
In the working-memory block every token counts against the history budget,
so a line drops such clauses, whole: nothing is rewritten inside a clause,
and a clause that carries a value (digits, a date, an ID), a quote, a name, a
negation or a requirement cue is never dropped, whatever else it says. A
clause goes only when it is chatter ("by the way", "I mean it this time",
"你记一下") or small talk on its own, or when the speaker took it back in the
same sentence ("8寸的——不对，…是10寸的"). The item itself keeps its full text (revision
matching and the stale filter read it); only the rendered line is shorter.
"""

from __future__ import annotations

import re
from functools import lru_cache

from policies.cues import negated, read_cues, small_talk

# Clause boundaries: zh/en commas, semicolons and sentence ends, and dashes.
# ASCII marks only before a space: "$1,900" and "3.5" stay whole.
_BOUNDARY = re.compile(r"(?<=[，；。！？])\s*|(?<=[,;.!?])\s+|\s+(?=—|–|→)|(?<=——)")
# How a clause that only explains, hedges or chats begins.
# How a clause that only chats begins: interjections, "by the way", "I mean it",
# "你记一下". Reasons ("because…", "反正…") are kept: they often name what
# the decision is about ("反正上下肢分化练下来挺顺的").
_FILLER_START = re.compile(
    r"^(?:(?:and|but|so|also|plus|oh|well),? )?(?:i mean it\b|honestly$|to be honest$|tbh$"
    r"|frankly$|by the way$|btw$|lol\b|haha|just saying\b|you know$|if that makes sense\b"
    r"|it'?s (?:kind of|sort of|kinda) (?:our|my|a) thing\b|i (?:got|get) chills\b"
    r"|fingers crossed\b|no pressure\b|for what it'?s worth\b|as you can imagine\b"
    r"|(?:just )?so you know$|(?:please )?(?:keep|bear) (?:that|this|it) in mind$|note that down$)"
    r"|^(?:哈哈+|嘿嘿|说实话|讲真|说真的|你懂的|好吧|行吧|慢慢来|(?:你)?(?:帮我)?(?:记一下|记住|记着|记好)"
    r"|我记在[^，。]{0,8}了?)[。！!~]*$",
    re.IGNORECASE,
)
_PROTECTED = re.compile(
    r"\d|[一二三四五六七八九十百千万两]+(?:[个次位名天周月年岁号点块元分钟小时公斤斤克寸层])"
    r"|[\"“”《》「」→]|(?<!^)(?<![.!?] )\b[A-Z][a-z]+"
)
_MIN_CHARS = 20  # a short line is kept whole: nothing worth the risk


# A retraction inside the sentence: "订的是8寸的——不对，…是10寸的", "at 10 — no wait, …".
_RETRACT = re.compile(
    r"\s*(?:——|—|–|--)\s*(?:不对|不是|错了|说错了|no wait|wait,? no|sorry|actually|i mean)"
    r"[，,!！.。]?\s*",
    re.IGNORECASE,
)


@lru_cache(maxsize=8192)
def compact_value(text: str) -> str:
    """`text` without its filler clauses (see the module doc); never empty."""
    if len(text) < _MIN_CHARS:
        return text
    text = _retracted(text)
    parts = [p for p in _BOUNDARY.split(text) if p]
    if len(parts) < 2:
        return text
    kept = [p for i, p in enumerate(parts) if i == 0 or not _filler(p)]
    if len(kept) == len(parts):
        return text
    out = _join(kept)
    return out if out.strip() else text


def _retracted(text: str) -> str:
    """Without what the speaker took back in the same sentence: the clause
    before "——不对" / "— no wait" (unless it opens the sentence: it names the
    subject) and the explaining clauses up to the one with the right value."""
    m = _RETRACT.search(text)
    if m is None:
        return text
    head = text[: m.start()]
    cut = max(head.rfind(mark) for mark in "，,；;。")
    if cut < 0:
        return text
    after = [p for p in _BOUNDARY.split(text[m.end() :]) if p]
    while after and not _restating(after[0].strip().rstrip("，,；;。.").strip()):
        after.pop(0)
    if not after:
        return text
    return head[: cut + 1] + ("" if head[cut] in "，；。" else " ") + _join(after)


_RESTATES = re.compile(
    r"^(?:so |but )?(?:是|应该是|其实是|而是|改成|换成"
    r"|it'?s|it is|it was|that'?s|make (?:it|that))",
    re.IGNORECASE,
)


def _restating(clause: str) -> bool:
    """Gives the right value: one of the protected kinds, or "是…" / "it's…"."""
    return _protected(clause) or bool(_RESTATES.search(clause))


def _filler(clause: str) -> bool:
    body = clause.strip().rstrip("，,；;。！？!?.").strip()
    if not body:
        return False
    if _protected(body):
        return False
    return bool(_FILLER_START.search(body)) or small_talk(body)


def _protected(clause: str) -> bool:
    if _PROTECTED.search(clause) or negated(clause):
        return True
    cues = read_cues(clause)
    return (
        cues.requirement >= 2 or cues.change >= 1 or cues.revoke_span is not None or cues.correction
    )


def _join(parts: list[str]) -> str:
    out = ""
    for part in parts:
        if part.lstrip().startswith("→"):
            out = out.rstrip().rstrip(",，")
        if (
            out
            and not part.startswith(" ")
            and not re.search(r"[\s\u3000-\u9fff，。；！？—]$", out)
        ):
            out += " "
        out += part
    out = out.rstrip()
    # A line that lost its last clause ends on the comma before it.
    if out.endswith((",", "，", ";", "；")):
        out = out[:-1] + ("。" if re.search(r"[\u3400-\u9fff]", out) else ".")
    return out
