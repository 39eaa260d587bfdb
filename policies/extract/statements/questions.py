"""What a question keeps: the settled premise, plan, proposal or choice inside it.

A question is answered, not remembered; but it may carry what the user takes as
settled ("Since the tasting moved to Friday, …?"), their own plan or proposal put up
for a check, a trait of their own put up for featuring, a choice already made, or a
proposal they then lean to. Those parts are kept as said.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Container, Sequence

from policies.extract.statements.classify import classify_sentence, fact_type
from policies.extract.statements.statement import (
    CHITCHAT,
    NARRATIVE,
    RELEVANT_OVERLAP,
    STRONG_KINDS,
    SentencePlace,
    Statement,
    content_word_count,
)
from policies.language.cues import Cues, read_cues
from policies.language.lexicon import Lexicon
from policies.language.matching import topical_overlap, weighted_terms
from policies.language.questions import check_question, is_question
from policies.language.values import extract_values
from policies.rulebook import Joined


def classify_or_premise(
    index: int, text: str, cues: Cues, where: SentencePlace, question: bool, after: str = ""
) -> Statement | None:
    """`after`: the question right after `text`, if one follows it."""
    st = classify_sentence(index, text, cues, where)
    asked = question or bool(check_question(text.rstrip("。.!！")))
    chosen = _choice_before_consequence(text) if st is None and asked and not where.aside else ""
    if chosen:
        return Statement(index, chosen, read_cues(chosen), extract_values(chosen), "fact", 0.65)
    if st is None and (question or where.before_question) and not where.aside:
        st = _premise(index, text, where, question)
    if st is None and question and not where.aside and not where.reported:
        st = _proposal(index, text, cues)
    if st is None and (question or after) and not where.aside and not where.reported:
        st = _own_trait_to_feature(index, text, after)
    return st


# What the user's own product or practice is, put up for whether to feature it: "我们家
# 的茶是手工炒的，当天包装，这点要不要写进详情页？", "Our honey is never heated, should
# I mention that on stream?". The trait is theirs, whatever the answer: kept as said.
_OWN_THING = Joined("statements", "own_thing")


_FEATURE_ASK = Lexicon.named("statements", "feature_ask")


def _own_trait_to_feature(index: int, text: str, asked: str = "") -> Statement | None:
    """`text` ends in the ask, or `asked` (the next sentence) is it."""
    if asked:
        m = _FEATURE_ASK.search(asked)
        if m is None or m.start() != 0:
            return None
        end = len(text)
    else:
        m = _FEATURE_ASK.search(text)
        if m is None or m.start() == 0:
            return None
        end = m.start()
    if not _OWN_THING.search(text):
        return None
    head = text[:end].rstrip(" ,，.。")
    if _SUPPOSED.search(head) or is_question(head) or not content_word_count(head):
        return None
    head += "。" if _CJK.search(head[-1:]) else "."
    return Statement(index, head, read_cues(head), extract_values(head), "fact", 0.65)


# The user's own plan put up for a check, the value inside the question: "Is it okay
# to set the sign-up cutoff at noon Friday, or is that too tight?", "Would a rule like
# 'home until 24 hours fever-free' be too strict?", "截止时间定在周日早上9点可以吗？",
# "像“退烧24小时才能来”这样的规定会不会太严？". What is proposed is the plan unless
# the answer changes it. Not a question about doing something now ("is it okay to
# eat sushi at 3am?"): the verb sets or arranges something.
_PROPOSAL = Lexicon.named("statements", "proposal")


_QUOTED_RULE = re.compile(r"[“\"「『'][^”\"」』']{6,80}[”\"」』']")


def _proposal(index: int, text: str, cues: Cues) -> Statement | None:
    if not _PROPOSAL.search(text) or cues.reported:
        return None
    values = extract_values(text)
    if not any(v.kind in STRONG_KINDS for v in values) and not _QUOTED_RULE.search(text):
        return None
    return Statement(index, text, cues, values, "fact", 0.6)


# A premise given as settled news, not as part of the question ("练了两周了，正常吗？").
_SETTLED = Joined("statements", "settled_premise")


_CLAUSE_BREAK = re.compile(r"[，,；;]\s*")


# The user's own plan or target, put to the assistant for an opinion: "We're
# planning to seat 120 in the east hall, is that too many?", "我给自己定了个目标：三个月
# 跑完一次半马，你觉得现实吗？". The plan is theirs whatever the answer: kept as said.
_OWN_PLAN = Joined("statements", "own_plan")


# ...unless it is a supposition: "If we plan to invite 120, how many tables?"
_SUPPOSED = Joined("statements", "supposition")


# A count the question takes as the case: "With 38 guests, do we need another
# table?", "有了80个报名的，场地还够吗？". Not one put up to weigh ("With 100 guests,
# would the hall be big enough?", "有100个人的话…"): a would/could or a condition.
_WITH_COUNT = Joined("statements", "given_count")


_WEIGHED = Joined("statements", "weighed")


def _given_count(premise: str, text: str) -> bool:
    return bool(_WITH_COUNT.search(premise)) and not (
        _WEIGHED.search(text) or _SUPPOSED.search(text)
    )


def _premise(index: int, text: str, where: SentencePlace, question: bool) -> Statement | None:
    """What a question takes as settled: "Since the tasting's on Friday the 14th now,
    can you draft the menu?", "名单收齐了，45人，场地够吧？". The leading clauses up
    to the last one holding a value (or the whole sentence right before the question),
    if they are said as settled, or as the user's own plan put up for an opinion."""
    # An own plan may name its figure bare ("卖到2000单": orders, a unit of no one list).
    own_plan = bool(_OWN_PLAN.search(text)) and not _SUPPOSED.search(text)
    kinds = STRONG_KINDS | {"number"} if own_plan else STRONG_KINDS
    premise = _leading_values(text, kinds) if question else text
    if not premise or not any(v.kind in kinds for v in extract_values(premise)):
        return None
    cues = read_cues(premise)
    own_plan = own_plan and bool(_OWN_PLAN.search(premise))
    given = _given_count(premise, text)
    if given:
        # A count taken as the case now is the count now: it revises an older one,
        # as "now that we have 36" does.
        cues = dataclasses.replace(cues, change=max(cues.change, 1))
    if cues.question or cues.reported or not (_SETTLED.search(premise) or own_plan or given):
        return None
    plain = dataclasses.replace(where, before_question=False, after_question=False)
    st = classify_sentence(index, premise, cues, plain)
    if st is None and not (CHITCHAT.search(premise) or NARRATIVE.search(premise)):
        # Settled news about the plan, even when its words are new to the conversation.
        values = extract_values(premise)
        st = Statement(index, premise, cues, values, fact_type(values, premise), 0.65)
    return st


_CJK = re.compile(r"[\u4e00-\u9fff]")


# The user's own leaning, said right after asking for an opinion: "我倾向于加",
# "I'm leaning towards yes".
_LEAN = Joined("statements", "own_leaning")


# Where a question's asking starts: "你觉得…", "what do you think", "is that…".
_ASKING = Joined("statements", "asking")


def or_leaned(
    st: Statement | None,
    i: int,
    sentences: Sequence[str],
    questions: Sequence[bool],
    aside: bool,
    topic: Container[str],
) -> tuple[Statement | None, int]:
    """`st`, or else the proposal question `i` puts up when the next sentence leans to
    it; and the index of the last sentence read (the leaning one goes with its proposal)."""
    if st is not None or aside or not questions[i]:
        return st, i
    if i + 1 >= len(sentences) or questions[i + 1]:
        return None, i
    st = _leaned_proposal(i, sentences[i], sentences[i + 1], topic)
    return st, (i if st is None else i + 1)


def _leaned_proposal(
    index: int, question: str, lean: str, topic: Container[str]
) -> Statement | None:
    """ "门口再放一块指示牌，你觉得值不值得？我倾向于放。", "Add a second
    photographer for the reception, what do you think? I'm leaning yes.": a proposal
    put up for an opinion and then leaned to is the user's plan. Kept as the proposal's
    clauses (before the asking) with the leaning."""
    if not _LEAN.search(lean):
        return None
    parts = _CLAUSE_BREAK.split(question)
    ask = next((k for k, part in enumerate(parts) if _ASKING.search(part.strip())), None)
    if not ask:
        return None
    proposal = (
        "，".join(p.strip() for p in parts[:ask])
        if _CJK.search(question)
        else ", ".join(p.strip() for p in parts[:ask])
    )
    cues = read_cues(proposal)
    if (
        cues.question
        or cues.reported
        or _SUPPOSED.search(proposal)
        or content_word_count(proposal) < 2
    ):
        return None
    if topical_overlap(weighted_terms(proposal), topic) < RELEVANT_OVERLAP:
        return None  # "我家猫老是半夜跑酷，你觉得正常吗？我倾向于不管它": an aside
    text = f"{proposal}{'。' if _CJK.search(proposal) else '. '}{lean}"
    values = extract_values(text)
    return Statement(index, text, read_cues(text), values, "preference", 0.75)


# A question about what follows from what was just said: "…，这样周末也能送货吧？",
# "…, so the van can park there, right?".
_CONSEQUENCE = Joined("statements", "consequence_question")


# A choice already made, stated as such: "她选的是物理+化学+生物", "we went with the oak".
_CHOICE_MADE = Joined("statements", "choice_made")


def _choice_before_consequence(text: str) -> str:
    """ "他报的是钢琴+乐理，这样明年考级应该都赶得上吧？": a choice the user states as
    made, then asks what follows from it. The question is answered; the choice is a
    fact of the plan. Its clauses before the consequence ("" if there is none)."""
    parts = _CLAUSE_BREAK.split(text)
    k = next((k for k, p in enumerate(parts) if k and _CONSEQUENCE.search(p.strip())), 0)
    if not k:
        return ""
    sep = "，" if _CJK.search(text) else ", "
    premise = sep.join(p.strip() for p in parts[:k])
    cues = read_cues(premise)
    if (
        not _CHOICE_MADE.search(premise) or cues.question or cues.reported
        or _SUPPOSED.search(premise) or content_word_count(premise) < 2
    ):  # fmt: skip
        return ""
    return premise


def _leading_values(text: str, kinds: frozenset[str] = STRONG_KINDS) -> str:
    """The clauses of a question up to the last one holding a value, before the asking."""
    end = 0
    for m in _CLAUSE_BREAK.finditer(text):
        if any(v.kind in kinds for v in extract_values(text[end : m.start()])):
            end = m.start()
        elif end:
            break
        if is_question(text[: m.start()]):
            return ""
    return text[:end]
