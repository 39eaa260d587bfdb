"""What an older assistant turn or tool result keeps in the backbone.

The user's turns carry the conversation's requirements; the assistant's
replies are most of its tokens and matter later only in a few ways (DESIGN
"The backbone"): the options a later pick refers to ("the second one"),
values it worked out that the user then took up (a total, a balance), and
what it proposed or committed to. A tool result matters by its key fields
(IDs, dates, amounts, statuses, errors), and only until a newer result about
the same object replaces it.

Everything here is a pure function of the turn and the user turn after it,
so a digest is the same bytes on every request (the prompt cache) and can be
memoised by text.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any

from policies.assemble.summary import sentence_score
from policies.extract.choices import chosen_option, list_options
from policies.extract.observations import compact_tool_result
from policies.language.cue import Cue
from policies.language.dates import strip_marker
from policies.language.segment import split_sentences
from policies.language.values import extract_values

# The user takes up what the assistant just said: its figures become the user's.
ACCEPTANCE = Cue(
    "acceptance",
    re.compile(
        r"^\W*(?:ok(?:ay)?|sure|yes|yep|yeah|great|perfect|deal|agreed|sounds (?:good|right|fine)"
        r"|that works|works for me|let'?s do (?:that|it|this)|go (?:with|for) (?:that|it)"
        r"|fine by me|makes sense|looks (?:good|right))\b"
        r"|^\W*(?:好的|(?:好|行|对)(?=[，,。.!！~ ]|$)|可以|没问题|就这么(?:定|办)|就这样"
        r"|同意|嗯|那就这样"
        r"|按你说的)",
        re.IGNORECASE,
    ),
    (
        "Sounds good, let's lock that in.",
        "ok, that works for me",
        "Perfect — thanks!",
        "好的，就按这个来。",
        "可以，就这么定了",
    ),
    (
        "Is that okay with the landlord?",
        "I'm not sure about that total.",
        "好像不太对",
        "对了，顺便问一下停车的事",
        "行李太多了怎么办",
        "Perfectionism is my problem.",
    ),
)

# A sentence in which the assistant works a figure out: what a later "ok" accepts.
DERIVATION = Cue(
    "derivation",
    re.compile(
        r"=|\b(?:total|comes? to|works? out|in all|altogether|balance|remaining|left over"
        r"|per (?:person|head|unit|month|week)|each|sum|subtotal"
        r"|after (?:the )?(?:deposit|discount)"
        r"|including|plus|minus|times)\b|合计|一共|总共|总计|共计|余额|剩下|还剩|每人|人均|折后|含|加上|减去|乘以",
        re.IGNORECASE,
    ),
    (
        "That comes to $1,240 in all.",
        "4 boxes × 12 = 48 jars.",
        "After the deposit the balance is 3,200.",
        "合计是4,560元。",
        "每人大概摊到85块。",
    ),
    ("I love that idea.", "Here are a few tips.", "这个想法不错。"),
)

# What the assistant says it will do (a plan the user may hold it to).
COMMITMENT = Cue(
    "commitment",
    re.compile(
        r"\b(?:i'?ll|i will|i'?ve (?:booked|set|added|scheduled|reserved|noted)"
        r"|i have (?:booked|set)"
        r"|booked|reserved|scheduled|confirmed)\b|我(?:会|来|已经|已)(?:帮你|给你|为你)?(?:订|安排|记|预约|设置|加)",
        re.IGNORECASE,
    ),
    (
        "I'll keep every reply under 100 words.",
        "I've booked the 7:40 slot for you.",
        "我已经帮你预约了周三上午。",
    ),
    ("You could book it online.", "Bookings open at nine.", "你可以自己预约。"),
)

CUES = (ACCEPTANCE, DERIVATION, COMMITMENT)


def accepts(user_text: str) -> bool:
    """Whether a user turn opens by taking up the assistant's last answer."""
    return bool(ACCEPTANCE.pattern.search(strip_marker(user_text).strip()))


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@lru_cache(maxsize=8192)
def digest_assistant(text: str, next_user: str, sentences: int, max_chars: int) -> str:
    """The lines of an assistant reply worth keeping once it is older ("" if none).

    - the option list, when the next user turn picks one by position;
    - the sentences that work out a value, all of them when the next user
      turn accepts the answer, else the most informative ones;
    - what the assistant committed to.
    """
    lines: list[str] = []
    options = list_options(text)
    if options and next_user and chosen_option(next_user, options) is not None:
        lines.append("Options offered: " + "; ".join(f"{i}. {o}" for i, o in enumerate(options, 1)))
    taken = accepts(next_user) if next_user else False
    scored: list[tuple[float, int, str]] = []
    for i, sentence in enumerate(split_sentences(strip_marker(text))):
        flat = " ".join(sentence.split())
        if not flat or len(flat) > max_chars * 2:
            continue
        score, _ = sentence_score(flat, "assistant")
        has_value = bool(extract_values(flat))
        if DERIVATION.pattern.search(flat) and has_value:
            score += 1.5 if taken else 0.6
        if COMMITMENT.pattern.search(flat):
            score += 0.8
        if score >= 0.9:
            scored.append((score, i, flat))
    limit = sentences * (2 if taken else 1)
    best = sorted(scored, key=lambda s: (-s[0], s[1]))[:limit]
    lines += [_clip(s[2], max_chars) for s in sorted(best, key=lambda s: s[1])]
    return "\n".join(lines)


@lru_cache(maxsize=8192)
def digest_tool(text: str) -> str:
    """A tool result cut to its key fields (IDs, dates, amounts, statuses, errors)."""
    return compact_tool_result(text) or _clip(text, 120)


def call_keys(raw: dict[str, Any]) -> dict[str, str]:
    """Tool call id -> what the call is about (function name and arguments).

    Two calls with the same key ask about the same object: the newer result
    replaces the older one."""
    out: dict[str, str] = {}
    for call in raw.get("tool_calls") or ():
        if not isinstance(call, dict):
            continue
        fn = call.get("function") or {}
        name = str(fn.get("name", ""))
        args = fn.get("arguments", "")
        try:
            parsed = json.loads(args) if isinstance(args, str) and args else args
            canon = json.dumps(parsed, sort_keys=True, ensure_ascii=False)
        except (ValueError, TypeError):
            canon = str(args)
        out[str(call.get("id", ""))] = f"{name}:{canon}"
    return out


def _clip_value(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return _clip(value, limit)
    if isinstance(value, dict):
        return {k: _clip_value(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_clip_value(v, limit) for v in value[:5]]
    return value


def clip_call(call: Any, limit: int = 60) -> Any:
    """A tool call of an older turn with long string arguments cut (the call's
    name, ids and short arguments are what later turns refer to)."""
    if not isinstance(call, dict):
        return call
    fn = call.get("function")
    if not isinstance(fn, dict) or not isinstance(fn.get("arguments"), str):
        return call
    try:
        args = json.loads(fn["arguments"])
    except ValueError:
        return call
    clipped = json.dumps(_clip_value(args, limit), ensure_ascii=False)
    if len(clipped) >= len(fn["arguments"]):
        return call
    return {**call, "function": {**fn, "arguments": clipped}}
