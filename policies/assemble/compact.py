"""Shorter item lines: the clauses that hold the requirement, without their asides.

Items are the user's sentences, verbatim, and people wrap a requirement in
reasons and chatter ("…at 7am sharp, which is when the ferry crew clocks in,
it's kind of our thing", "场地费还是定在800吧，毕竟一年就办这一回").
In the working-memory block every token counts against the history budget,
so a line drops such clauses, whole: nothing is rewritten inside a clause,
and a clause that carries a value (digits, a date, an ID), a quote, a name, a
negation or a requirement cue is never dropped, whatever else it says. A
clause goes only when it is chatter ("by the way", "I mean it this time",
"你记一下") or small talk on its own, or when the speaker took it back in the
same sentence ("8寸的——不对，…是10寸的"). The item itself keeps its full text (revision
matching and the stale filter read it); only the rendered line is shorter.

When the block is short of room, a rule's line goes further down to its core
(`core_value`): the clauses that state the requirement, without the reasons
and the story around it. The same care applies: whole clauses only, and a
value, a name, a negation or a scope word the rule needs always stays.

The word and cue patterns are data (`policies/rules/<lang>/compact.yaml`); what stays
here reads the shape of text: clause boundaries, digits, quotes, script.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from policies.language.cues import negated, read_cues
from policies.language.names import ROLE, person_names
from policies.language.social import small_talk
from policies.language.values import extract_values, value_signature
from policies.rulebook import Joined

# Clause boundaries: zh/en commas, semicolons and sentence ends, and dashes.
# ASCII marks only before a space: "$1,900" and "3.5" stay whole.
_BOUNDARY = re.compile(r"(?<=[，；。！？])\s*|(?<=[,;.!?])\s+|\s+(?=—|–|→)|(?<=——)")
# How a clause that only chats begins: interjections, "by the way", "I mean it",
# "你记一下". Reasons ("because…", "反正…") are kept: they often name what
# the decision is about ("反正这套排班轮下来大家都习惯了").
_FILLER_START = Joined("compact", "filler_start")
_PROTECTED = re.compile(
    r"\d|[一二三四五六七八九十百千万两]+(?:[个次位名天周月年岁号点块元分钟小时公斤斤克寸层])"
    r"|[\"“”《》「」→]|(?<!^)(?<![.!?] )\b[A-Z][a-z]+"
)
_MIN_CHARS = 20  # a short line is kept whole: nothing worth the risk


# A retraction inside the sentence: "订的是8寸的——不对，…是10寸的", "at 10 — no wait, …".
_RETRACT = Joined("compact", "retraction")


@lru_cache(maxsize=8192)
def compact_value(text: str) -> str:
    """`text` without its filler clauses (see the module doc); never empty."""
    if len(text) < _MIN_CHARS:
        return text
    text = _retracted(text)
    parts = [p for p in _BOUNDARY.split(text) if p]
    if len(parts) < 2:
        return text
    kept = [p for i, p in enumerate(parts) if not (_speaker_aside(p) if i == 0 else _filler(p))]
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


_RESTATES = Joined("compact", "restates")


def _restating(clause: str) -> bool:
    """Gives the right value: one of the protected kinds, or "是…" / "it's…"."""
    return _protected(clause) or bool(_RESTATES.search(clause))


# What the speaker says about their own telling, not about the plan: that they
# are repeating themselves ("just reminding you", "再强调一下") or that they got a
# value wrong before ("I always flip those two digits", "我老是把中间两位记反", "I
# misread my notes"). The value itself is in the clauses around it; such a clause
# holds no requirement, whatever correction or "always" cue it carries.
_SPEAKER_ASIDE = Joined("compact", "speaker_aside")


def _speaker_aside(clause: str) -> bool:
    body = clause.strip().rstrip("，,；;。！？!?.").strip()
    return bool(body) and not re.search(r"\d", body) and bool(_SPEAKER_ASIDE.search(body))


def _filler(clause: str) -> bool:
    body = clause.strip().rstrip("，,；;。！？!?.").strip()
    if not body:
        return False
    if _speaker_aside(body):
        return True
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
            and not re.search(r"[\s\u3000-\u9fff，。；！？：—]$", out)
        ):
            out += " "
        out += part
    out = out.rstrip()
    # A line that lost its last clause ends on the comma before it.
    if out.endswith((",", "，", ";", "；")):
        out = out[:-1] + ("。" if re.search(r"[\u3400-\u9fff]", out) else ".")
    return out


# --- the core of a line, for a block over its room --------------------------------------

# A clause that asks for something: a modal, "just…"/"only…", an imperative, "…吧",
# "直接…就行". Such a clause may be the requirement itself ("just write it as short
# paragraphs"), so it is kept even when it holds no value.
_ASKS = Joined("compact", "asks")
# Who the user is: "I'm …", "我叫…".
_SELF = Joined("compact", "self_intro")
# A clause that modifies the one before it ("…, ever", "…, except on Fridays",
# "…，包括集体照"): part of that clause's requirement, kept with it.
_ATTACHED = Joined("compact", "attached")
# One that adds an item to a list ("…, and the lawn", "…，以及车库"): read first, it
# is kept only while short; a long clause after "and" says something of its own.
_LIST_JOINT = Joined("compact", "list_joint")
# An opening clause naming what the rest is about ("for the internet, …", "路线的话，…").
_TOPIC = Joined("compact", "topic")
# A connective that only tied the clause to a reason now left out ("so let's…", "所以…").
_LEAD = Joined("compact", "lead")
# Clause boundaries of the core: those of `compact_value`, and a colon (what comes
# before it announces or names the topic: "有个变化跟你说下：…", "Data residency: …").
_CORE_BOUNDARY = re.compile(rf"{_BOUNDARY.pattern}|(?<=：)\s*|(?<=[^\d\s]:)\s+")
_HAS_CJK = re.compile(r"[\u3400-\u9fff]")
_CJK_END = re.compile(r"[\u3400-\u9fff，。；！？：」”》）]$")


# Cached like `compact_value`: the block is laid out again on most requests at
# tight budgets, from the same slowly changing items.
@lru_cache(maxsize=8192)
def core_value(text: str, replaced: str | None = None, about: tuple[str, ...] = ()) -> str:
    """`text` (its compact form) down to the clauses that state the requirement.

    Kept: a clause holding a value, a name or role, a quote, a negation, a
    requirement or change cue, or asking for something ("just…", "let's…",
    an imperative, "…吧"), or one of the terms in `about` (what the item is
    about: its slot); a short clause (a list item, a scope word, an opening
    topic); and around a kept clause, the clauses that modify it (an adjunct
    after it, a topic before it) and what a bare value is of ("贝那普利，每天
    半片"). What goes is the reasons and the story around the requirement
    ("问了三家，月租两千以内的都离地铁太远，要么没电梯，房租上限还是提到
    两千五吧" -> "房租上限还是提到两千五吧"), and a clause that only restates
    the value the item replaced (`replaced`: the line shows it already). Never
    cuts inside a clause; `text` itself when nothing can go or nothing would be left.
    """
    text = compact_value(text)
    parts = [p for p in _CORE_BOUNDARY.split(text) if p.strip()]
    if len(parts) < 2:
        return text
    old = _old_values(replaced)
    about = tuple(a.lower() for a in about if len(a) >= 2)
    bodies = [_body(p) for p in parts]
    # Clauses that may go whatever else holds: chatter, and the replaced value.
    spare = [
        not b or _filler(p) or _restates_old(b, old) for p, b in zip(parts, bodies, strict=True)
    ]
    keep = [not x and _states(b, about) for b, x in zip(bodies, spare, strict=True)]
    if not any(keep):
        return text
    for i, body in enumerate(bodies):
        if not keep[i] and not spare[i]:
            keep[i] = _short(body)  # a list item or a scope word: worth its few tokens
    for i in range(len(parts) - 1, 0, -1):
        if keep[i] and not keep[i - 1] and _leans_back(bodies[i]):
            # "…贝那普利，每天半片", "我爸妈离婚了，见面也尴尬，他俩不能同桌": back to
            # the clause kept before it, the one that may say what it is about.
            j = i - 1
            while j >= 0 and not keep[j]:
                keep[j] = not spare[j]
                j -= 1
    for i in range(1, len(parts)):
        if keep[i - 1] and not keep[i] and not spare[i] and _modifies(bodies[i]):
            keep[i] = True
    for i in range(len(parts) - 2, -1, -1):
        if keep[i + 1] and not keep[i] and not spare[i]:
            # What the rest is about: "路线的话，…", an opening "The guest network, …".
            keep[i] = bool(_TOPIC.search(bodies[i])) or (i == 0 and _short(bodies[i], 4, 6))
    if all(keep):
        return text
    out = _join_core(parts, keep)
    return out if out.strip() else text


def _body(clause: str) -> str:
    return clause.strip().strip("，,；;。.！!？?:：—–- ").strip()


def _old_values(replaced: str | None) -> tuple[frozenset[str], str]:
    if not replaced:
        return frozenset(), ""
    return frozenset(value_signature(v) for v in extract_values(replaced)), replaced


def _states(body: str, about: Sequence[str]) -> bool:
    """Does the clause state (part of) the requirement? See `core_value`."""
    low = body.lower()
    return (
        _protected(body)
        or bool(extract_values(body))
        or bool(_ASKS.search(body) or _SELF.search(body))
        or bool(person_names(body) or ROLE.search(body))
        or any(a in low for a in about)
    )


def _without_values(body: str) -> tuple[int, str]:
    """How many values `body` holds, and `body` without them."""
    values = extract_values(body)
    rest = body
    for v in sorted(values, key=lambda v: v.start, reverse=True):
        rest = rest[: v.start] + " " + rest[v.end :]
    return len(values), rest


def _restates_old(body: str, old: tuple[frozenset[str], str]) -> bool:
    """Only the replaced value, nothing new: no value of its own, no negation, no change."""
    sigs, text = old
    if not text:
        return False
    values = extract_values(body)
    if not values or any(value_signature(v) not in sigs and v.text not in text for v in values):
        return False
    _, rest = _without_values(body)
    return not (_PROTECTED.search(rest) or negated(rest) or read_cues(body).change)


def _modifies(body: str) -> bool:
    """An adjunct of the clause before it; a list goes on only in short items."""
    if _LIST_JOINT.search(body):
        return _short(body, 5, 8)
    return _ATTACHED.search(body) is not None


def _short(body: str, words: int = 2, cjk: int = 4) -> bool:
    """At most `words` words, or `cjk` characters of Chinese."""
    if _HAS_CJK.search(body):
        return len(re.sub(r"\s", "", body)) <= cjk
    return len(body.split()) <= words


# A clause that opens on a pronoun: what it stands for is in a clause before.
_PRONOUN_START = Joined("compact", "pronoun_start")


def _leans_back(body: str) -> bool:
    """Means little without the clauses before it: one opening on a pronoun
    ("…，他俩不能同桌"), or a value or a name with next to nothing around it
    ("每天半片", "$150", "说要两周", "a plumber, Dana Reyes")."""
    if _PRONOUN_START.search(body):
        return True
    found, rest = _without_values(body)
    names = person_names(rest)
    for name in names:
        rest = rest.replace(name, " ")
    rest = rest.strip(" ，,。.")
    return (found > 0 or bool(names)) and (not rest or _short(rest))


_SENTENCE_END = re.compile(r"[。！？.!?]$")


def _join_core(parts: list[str], keep: list[bool]) -> str:
    """The kept clauses as one line. A clause whose next ones went ends the way
    the last of them did (a sentence end stays one), and is never left
    without a mark before the next kept clause."""
    out: list[str] = []
    for i, part in enumerate(parts):
        if not keep[i]:
            continue
        part = part.rstrip()
        if i == 0 or not keep[i - 1]:
            # What tied it to the clause before is gone with that clause.
            part = _LEAD.sub("", part if out else part.lstrip(" —–-"), count=1)
        if part.startswith("→"):
            part = " " + part  # the choice a pick stands for: "就第二个吧 → 老码头环线"
        j = next((k for k in range(i + 1, len(parts)) if keep[k]), len(parts))
        nxt = parts[j].lstrip() if j < len(parts) else ""
        cjk = bool(_CJK_END.search(part))
        if j > i + 1 and _SENTENCE_END.search(parts[j - 1].rstrip()):
            part = re.sub(r"[，,；;:：]$", "", part)
            if not _SENTENCE_END.search(part):
                part += "。" if cjk else "."
        if nxt[:1] in ("→", "—", "–"):
            part += " "
        elif nxt and not re.search(r"[，,；;。.！!？?:：]$", part):
            part += "，" if cjk else ","
        out.append(part)
    return _join(out)
