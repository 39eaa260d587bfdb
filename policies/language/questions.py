"""zh/en cues of questions: a question asked (`is_question`), one only reported
(`asked`), a statement put up for a nod (`check_question`), a challenge
(`CHALLENGE`), and a request to recap what was agreed (`recap_request`).

Their rules are kept as data in policies/rules/<lang>/questions.yaml.
"""

from __future__ import annotations

import re

from policies import rulebook
from policies.language.lexicon import Lexicon, scripts

QUESTION_START = rulebook.Joined("questions", "question_start", ("en",), flags=re.IGNORECASE)
QUESTION_ZH = rulebook.Joined("questions", "question_words", ("zh",), flags=0)

# "Give me the complete list of everything we settled", "把所有要求完整列一遍": a
# request to recap memory. It and its qualifiers ("only what's current", "以最新
# 的为准，改过的别列了") are about the answer, not new requirements or revocations.
_RECAP_EN = rulebook.Joined("questions", "recap_list", ("en",), flags=re.IGNORECASE)
_RECAP_ALL_EN = rulebook.Joined("questions", "recap_whole", ("en",), flags=re.IGNORECASE)
_RECAP_ZH = rulebook.Joined("questions", "recap_whole_list", ("zh",), flags=0)
# Not "你给我的所有报价和对比都用列表": what you give me, a rule about every answer.
_RECAP_ASK_ZH = rulebook.Joined("questions", "recap_asked", ("zh",), flags=0)


def recap_request(text: str) -> bool:
    """Does `text` ask for a recap of what was agreed?"""
    latin, cjk = scripts(text)
    if latin and _RECAP_EN.search(text) and _RECAP_ALL_EN.search(text):
        return True
    return cjk and bool(_RECAP_ZH.search(text)) and bool(_RECAP_ASK_ZH.search(text))


# "My friend asked if…", "小杨问我能不能…": a question, only reported.
_ASKED = Lexicon.named("questions", "asked")


def asked(text: str) -> bool:
    """A question someone else asked, reported by the user: answered, not remembered."""
    return bool(_ASKED.search(text))


# "Why did you mark it urgent? Urgency is Omar's call": a challenge, not a question to
# answer; what follows it is the correction, not an elaboration of a question.
CHALLENGE = Lexicon.named("questions", "challenge")


# "Annual billing gets 2 months free, right?", "定金就收三成，没问题吧？": a statement
# put up for a nod. What comes before the tag is the user's proposal, not a question.
_CHECK_TAG = Lexicon.named("questions", "check_tag")


def check_question(text: str) -> bool:
    """A statement with a tag asking for a nod ("…, right?", "…，没问题吧？")."""
    stripped = text.rstrip(" 　~～…")
    m = _CHECK_TAG.search(stripped)
    if m is None:
        return False
    head = stripped[: m.start()].rstrip(" ,，、")
    if not head or "?" in head or "？" in head:
        return False
    latin, cjk = scripts(head)
    if latin and QUESTION_START.match(head):
        return False
    return not (cjk and QUESTION_ZH.search(head))


def is_question(text: str) -> bool:
    stripped = text.rstrip(" 　~～…")
    if stripped.endswith(("?", "？")):
        return not check_question(stripped)
    latin, cjk = scripts(stripped)
    if latin and QUESTION_START.match(stripped) and len(stripped) < 160:
        return True
    return cjk and bool(QUESTION_ZH.search(stripped)) and not stripped.endswith(("。", "!", "！"))
