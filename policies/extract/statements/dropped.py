"""What is said but not kept: thinking aloud, chatter, errands, asides, one-off requests.

Each test here names a way a sentence can look like a rule or a fact and still bind
nobody: a hedge, talk between people, the user's own errand or condition, an aside,
a question, a request done once in this reply. Only a strong cue (a standing rule, a
hard limit, a revision) keeps such a sentence.
"""

from __future__ import annotations

import re

from policies.extract.chatter import addressed, chatter, told_memory
from policies.extract.statements.others import OTHERS_WISH
from policies.extract.statements.statement import (
    CHITCHAT,
    HARD_LIMIT,
    NARRATIVE,
    STRONG_KINDS,
    SentencePlace,
    content_word_count,
    cue_free_memo,
)
from policies.language.cues import (
    CONDITION,
    MEMO,
    STANDING,
    Cues,
    negated,
    read_cues,
)
from policies.language.segment import clauses
from policies.language.values import extract_values
from policies.rulebook import Joined

# Asks for something now, wherever it sits in the sentence.
_REQUEST = Joined("statements", "request_now")


# Someone else offering to help ("他说可以帮我内推") is news, not a request to the assistant.
_OFFER = Joined("statements", "others_offer_help")


# The user's own errand ("I need to book flights", "我得去接孩子"), not a rule for the assistant.
_PERSONAL_NEED = Joined("statements", "personal_need")


# Hedged, speculative sentences ("which might mean…", "我可能会…") are
# thinking aloud, not decisions.
_HEDGE = Joined("statements", "hedge")


def chatter_only(text: str, cues: Cues) -> bool:
    """Talk between people ("别担心，你肯定行的", "make sure you rest") in every clause
    that reads as a rule: "Don't worry, you can drop the word limit" still revokes.
    An explicit revision ("actually, …") is never chatter."""
    if cues.change >= 2 or not chatter(text):
        return False
    # A story of the speaker's past runs on to the sentence's end ("我小时候根本没有…，
    # 如今的年轻人个个都离不开手机"): only a clause turned to the assistant breaks out of it.
    story = told_memory(text)
    parts = [part for part in clauses(text) if _binding(read_cues(part))]
    if story:
        return not any(addressed(part.strip()) for part in clauses(text))
    return all(chatter(part) for part in parts)


def _binding(cues: Cues) -> bool:
    """Could this clause set, change or drop a rule? ("wait" or "now" alone cannot.)"""
    return cues.requirement >= 2 or cues.change >= 2 or cues.revoke_span is not None


# The user's own next step ("I'll ask Mei", "我问问周会计再说"): nothing to keep.
_INTENT = Joined("statements", "own_next_step")


# The user announcing material they are about to hand over ("我先把现在的简历贴给你",
# "Let me paste our current price list", "here's the draft"): a step of the
# conversation, done by the next message; the material itself is what counts.
_HANDING_OVER = Joined("statements", "handing_over")


# How the speaker themself is doing, measured ("I'm running on four hours of sleep",
# "I've been tempted for three years", "昨晚只睡了四个小时", "这个念头我都憋了两年了"):
# the number describes the speaker's body or feelings, not anything to plan. A
# limit on the time they can give ("I only have four hours a day for this") has a
# requirement cue and is read before this.
_OWN_CONDITION = Joined("statements", "own_condition")


def _own_condition(text: str) -> bool:
    return bool(_OWN_CONDITION.search(text)) and not _ASKS_SOMEONE.search(text)


# A clause that asks something of anyone ("so keep it short", "以后别找他们").
_ASKS_SOMEONE = Joined("statements", "asks_someone")


# The user's own errand for family or friends ("I have to call my uncle back about
# the boat", "我得给我妈回个电话"): their private to-do, said in passing, not a
# rule for the task. With a value or an ask ("…, so keep Friday free") it is read
# as usual.
_PRIVATE_ERRAND = Joined("statements", "private_errand")


def _private_errand(text: str, cues: Cues, strong: bool) -> bool:
    if strong or cues.change >= 2 or cues.revoke_span is not None or STANDING.search(text):
        return False
    return bool(_PRIVATE_ERRAND.search(text)) and not _ASKS_SOMEONE.search(text)


# A running total ("一共15个小朋友了", "that brings us to 40 volunteers"): the count the
# plan now stands at, even inside a story about the day.
_TOTAL = Joined("statements", "running_total")


def is_running_total(text: str, strong: bool) -> bool:
    return strong and bool(_TOTAL.search(text))


def is_idle(text: str, cues: Cues, strong: bool, revoke: bool) -> bool:
    """Thinking aloud or chatting: a hedge with nothing concrete, or small talk.

    Only a strong cue (a standing rule, a hard limit, a revision) keeps such a
    sentence: "I'm exhausted, no more than 3 meetings a day" still binds.
    """
    if (
        _HEDGE.search(text)
        and not strong
        and cues.directive < 3
        and cues.change < 2
        and all(_HEDGE.search(part) for part in clauses(text) if _cued(read_cues(part)))
    ):
        # "which might mean the tent isn't the big purchase after all"; but "还是让她上公立
        # 小学，……我们可能会待更久" decides in one clause and hedges in another.
        return True
    if _private_errand(text, cues, strong):
        return True
    if cues.requirement >= 3 or cues.change >= 2 or revoke:
        return False
    if _INTENT.search(text) and not strong:
        return True
    if _HANDING_OVER.search(text) and not strong:
        return True
    if _own_condition(text):
        return True
    if MEMO.search(text) and content_word_count(cue_free_memo(text)) < 2 and not strong:
        return True  # "你记着点。", "Keep that in mind."
    if is_running_total(text, strong):
        return False
    return bool(CHITCHAT.search(text) or NARRATIVE.search(text)) and cues.requirement < 3


def _cued(cues: Cues) -> bool:
    return cues.requirement >= 2 or cues.change >= 1 or cues.revoke_span is not None


# Money the user has for something ("I've got 1.5k set aside for the POS", "装修预算准备了
# 8万"): a budget, even when it comes right after a question.
_SET_ASIDE = Joined("statements", "money_set_aside")


def _money_set_aside(text: str) -> bool:
    return bool(_SET_ASIDE.search(text)) and any(v.kind == "money" for v in extract_values(text))


def is_dropped(text: str, cues: Cues, where: SentencePlace, revoke: bool) -> bool:
    """Questions, asides and one-off requests, unless they carry a rule."""
    for_me = not (_PERSONAL_NEED.search(text) or OTHERS_WISH.search(text))
    if where.aside and not (STANDING.search(text) or (for_me and (revoke or cues.directive >= 3))):
        # "Switching topics: I need to book flights" is the user's errand; "By the
        # way, the council wants every stall closed by 9pm" is news from
        # elsewhere, however strongly worded. A rule for the assistant said in
        # passing ("oh, and for every stop add a fun fact", "side note: stop
        # adding emojis") still binds; news in an aside ("random thing, I
        # switched to new beans on Monday") does not.
        return True
    if (
        where.after_question
        and not where.opening
        and not revoke
        and cues.change < 2
        and (cues.requirement < 3 or _soft_scope(text, cues))
        and not _money_set_aside(text)
    ):
        return True  # elaborates the question just asked, it sets no rule
    if revoke or cues.change >= 2:
        return False
    if cues.question and not (cues.directive >= 3 and STANDING.search(text)):
        # "…every time he drops the bar, is that normal?" describes someone's
        # habit; "can you always…from now on?" asks for a rule. The opening
        # request states the task.
        return not (where.opening and where.first)
    if _one_off(text, cues):
        return True
    # The opening request *is* the goal ("想请你帮我排一下这学期的复习计划"); "记一下：…"
    # asks to remember what follows.
    if where.opening or MEMO.search(text):
        return False
    return (
        bool(_REQUEST.search(text))
        and not _OFFER.search(text)
        and cues.requirement < 3
        and not _decision_beside_request(text)
    )


def _decision_beside_request(text: str) -> bool:
    """ "那就按9月3号开课来定吧，招生的海报你帮我写一下", "Let's set the launch for
    May 3rd, can you draft the invite?": a decision with its value, and a request
    that builds on it. The request is done once; the decision stands."""
    return any(
        not _REQUEST.search(part)
        and (_DECIDE.match(part) or read_cues(part).requirement >= 2)
        and any(v.kind in STRONG_KINDS for v in extract_values(part))
        for part in clauses(text)
    )


_DECIDE = Joined("statements", "decision_word")


def _soft_scope(text: str, cues: Cues) -> bool:
    """A limit that only scopes the question before it ("Any ideas for the picnic?
    Budget is basically sandwiches."): no negation, no hard word, no value, no standing cue."""
    return not (
        negated(text)
        or HARD_LIMIT.search(text)
        or CONDITION.search(text)
        or STANDING.search(text)
        or cues.directive >= 3
        or any(v.kind in STRONG_KINDS for v in extract_values(text))
    )


# A request for one deliverable now ("Give me three options.", "Write the
# fiddle leaf fig one now", "Draft the refund macro and mention the code"):
# done once, in this reply. A manner right after the object ("write the
# summaries in bullet points") or a standing cue makes it a rule instead.
_ONE_OFF = Joined("statements", "one_off_deliverable")


_MANNER = frozenset("in as using with without under within following per".split())


def _one_off(text: str, cues: Cues) -> bool:
    if STANDING.search(text) or cues.directive >= 3 or cues.constraint >= 3:
        return False
    m = _ONE_OFF.match(text)
    if m is None:
        return False
    rest = re.findall(r"[A-Za-z][\w'-]*", m.group("rest"))[:5]
    return not any(w.lower() in _MANNER for w in rest)
