"""How the sentences of a message are grouped before and while they are read.

Sentence splitting cuts where punctuation says, not where meaning does: a rule-list
header and its first item share a line, an announcement ("Correction on the venue.")
and its value are two sentences, someone's ask and the user taking it up are two, a
rule may carry a rhetorical question, a quote spans many sentences, and a statement
may be continued, fixed or replaced by the sentence after it. These functions join or
split them so each statement is read whole.
"""

from __future__ import annotations

import dataclasses
import re

from policies.extract.chatter import chatter
from policies.extract.statements.classify import classify_sentence
from policies.extract.statements.statement import (
    STRONG_KINDS,
    SentencePlace,
    Statement,
    content_word_count,
    has_strong_value,
    join_sentences,
    semicolon_after,
)
from policies.language.cues import (
    ACCEPTED,
    CONTINUATION,
    LIST_HEADER,
    Cues,
    contrast_terms,
    negated,
    read_cues,
)
from policies.language.lexicon import Lexicon
from policies.language.questions import is_question
from policies.language.segment import SELF_FIX, self_fixed
from policies.language.social import small_talk
from policies.language.values import extract_values
from policies.rulebook import Joined

# "几个格式要求：标题用黑体；…", "A few rules for the drafts: bullet points only; …": a
# header naming rules, with the first of them after its colon on the same line.
_INLINE_HEADER = re.compile(r"^(?P<head>[^：:。.!！?？；;]{2,40}?[：:])\s*(?P<rest>\S.*)$", re.S)


def with_inline_headers(
    raw: list[str], announced: set[int]
) -> tuple[list[str], set[int], set[int]]:
    """Sentences with a rule-list header split off the first item it introduces, so
    each item of the list is read as the rule it is (the header alone is no rule);
    `announced` shifted to match, and the indices of the headers split off."""
    out: list[str] = []
    shifted: set[int] = set()
    headers: set[int] = set()
    for i, sentence in enumerate(raw):
        m = _INLINE_HEADER.match(sentence.strip())
        # Only a list: one rule after its header ("Standing rule: …") reads whole.
        listing = m is not None and (
            (m["rest"].rstrip().endswith((";", "；")) and bool(LIST_HEADER.search(m["head"])))
            or bool(_CONTENT_HEADER.search(m["head"]))
        )
        if m is not None and listing and not is_question(m["rest"]):
            headers.add(len(out))
            out.append(m["head"])
            sentence = m["rest"]
        if i in announced:
            shifted.add(len(out))
        out.append(sentence)
    return out, shifted, headers


# "Health stuff you need to put in: …", "Things to include in the lease: …",
# "合同里要写进去的：…": a header naming what follows as content for the work. Every
# sentence after it in the message is part of that content, however plainly said
# ("His inhaler lives in the red pouch").
_CONTENT_HEADER = Lexicon.named("statements", "content_header")


def content_headers(raw: list[str]) -> set[int]:
    """Indices of sentences that are a content header only (split off their first item
    by `with_inline_headers`, or said alone)."""
    return {i for i, s in enumerate(raw) if _CONTENT_HEADER.search(s.strip())}


# A sentence that only announces that something changes, naming what but not the new
# value: "Correction on the oven temperature.", "The pickup day moves.", "Bad news about
# the venue.", "关于交稿时间，我再说一下。", "集合地点有变。". The value comes in a
# sentence after it, which alone may name nothing ("Sunday the 15th works better.",
# "改到下周一吧。"): the two are one revision of the thing named.
_ANNOUNCE = Joined("statements", "announced_change")


_ANNOUNCE_REACH = 2  # the value may follow a sentence of reasons


def with_announced_topic(raw: list[str]) -> tuple[list[str], set[int]]:
    """Sentences with each announcement joined to the sentence that gives its value,
    and the indices of those joined sentences (they carry a change cue).

    Only when the announcement itself holds no value, and a sentence within reach
    holds one (and is no question): otherwise it is left as it was said."""
    out: list[str] = []
    announced: set[int] = set()
    pending: str | None = None
    between: list[str] = []  # sentences said after the announcement, before its value
    for sentence in raw:
        text = sentence.strip()
        if pending is None:
            if _ANNOUNCE.search(text) and not has_strong_value(text):
                pending = text
            else:
                out.append(sentence)
            continue
        if has_strong_value(text) and not is_question(text):
            out.extend(between)
            announced.add(len(out))
            out.append(join_sentences(pending, text))
            pending, between = None, []
        elif len(between) + 1 < _ANNOUNCE_REACH:
            between.append(sentence)
        else:
            out.extend([pending, *between, sentence])
            pending, between = None, []
    if pending is not None:
        out.extend([pending, *between])
    return out, announced


def with_accepted_asks(raw: list[str]) -> list[str]:
    """Someone's ask and the user taking it up, read as one sentence: "Tomas wants
    $45 per lesson; he's good, so we'll pay that", "房东说要涨到4500。那就按他说的来吧".
    Said apart, the ask is another party's position (kept out of the plan) and the
    acceptance names no value; together they are the user's decision."""
    out: list[str] = []
    for sentence in raw:
        prev = out[-1].strip() if out else ""
        taken = ACCEPTED.search(sentence)
        if (
            taken is not None
            and prev
            and read_cues(prev).reported
            and has_strong_value(prev)
            and not is_question(prev)
            and not is_question(sentence)
            # "…so we'll do thirty, and $25 for overtime" sets a value of its own.
            and not has_strong_value(sentence[: taken.start()] + " " + sentence[taken.end() :])
        ):
            out[-1] = join_sentences(prev, sentence.strip())
            continue
        out.append(sentence)
    return out


def with_next(
    st: Statement, text: str, cues: Cues, nxt: str, where: SentencePlace, change: int, carried: int
) -> tuple[Statement, int] | None:
    """The statement read together with the next sentence, when that one only
    continues it ("…gas. Induction range, electric everything.") or gives the right
    value ("…isn't X. Sorry, it's Y."); with the change cue it then carries."""
    restated = (cues.correction or bool(contrast_terms(text))) and _restates(nxt)
    # "order 5580213 — no wait, that's the old cart; the live one is 5580231":
    # the marker's fix comes after the break.
    fix_pending = bool(SELF_FIX.search(text)) and not self_fixed(text)
    restated = restated or (fix_pending and _restates(nxt))
    if not (CONTINUATION.match(nxt) or _fragment(nxt) or restated):
        return None
    merged = text + semicolon_after(text) + nxt if fix_pending else join_sentences(text, nxt)
    mcues = read_cues(merged)
    st = classify_sentence(st.index, merged, mcues, where) or st
    if not fix_pending:
        return st, max(change, mcues.change)
    # The marker fixes a value of this very sentence, not an earlier one.
    unfixed = read_cues(SELF_FIX.sub(", ", merged)).change
    st.cues = dataclasses.replace(st.cues, change=unfixed)
    return st, max(carried, unfixed)


_LAST_CLAUSE = re.compile(r"[，,;；]\s*(?=[^，,;；]*$)")


def rule_before_question(sentence: str) -> list[str]:
    """ "展台上绝对不能用明火，烧着了谁赔得起？", "No shellfish at all, who
    wants an allergy scare?": a firm rule with a rhetorical question fused on. The
    rule stands on its own; the question is asked of nobody."""
    if not is_question(sentence):
        return [sentence]
    m = _LAST_CLAUSE.search(sentence)
    if m is None:
        return [sentence]
    head, tail = sentence[: m.start()], sentence[m.end() :]
    cues = read_cues(head)
    if is_question(head) or cues.question or cues.requirement < 3 or not negated(head):
        return [sentence]
    return [head + ("。" if re.search(r"[\u3400-\u9fff]$", head) else "."), tail]


_CLAUSE_WORDS = Joined("statements", "clause_words")


def _fragment(text: str) -> bool:
    """A verbless English phrase that elaborates the sentence before it
    ("…we're getting rid of gas. Induction range, electric everything.")."""
    words = text.split()
    latin, cjk = re.search(r"[A-Za-z]", text), re.search(r"[\u3400-\u9fff]", text)
    return (
        bool(latin) and not cjk and 2 <= len(words) <= 6 and not _CLAUSE_WORDS.search(text)
        and not re.search(r"\d", text)
    )  # fmt: skip


# "Pasting the relevant part of the quote: \"…\"", "邮件原文如下：“…”": what follows is
# someone else's text, quoted; its lines are data, whatever their wording.
PASTED_QUOTE = Joined("statements", "pasted_quote")


def still_pasting(raw_sentence: str, pasting: bool) -> bool:
    """Is the quote still open after this sentence?"""
    quotes = raw_sentence.count('"') + raw_sentence.count("“") + raw_sentence.count("”")
    return pasting != (quotes % 2 == 1)


def pasted_statement(index: int, text: str, cues: Cues) -> Statement | None:
    values = extract_values(text)
    if not any(v.kind in STRONG_KINDS for v in values) and not negated(text):
        return None
    return Statement(index, text, cues, values, "fact", 0.4)


_RESTATE = Joined("statements", "restated_value")


def _restates(text: str) -> bool:
    """ "…the product isn't X. Sorry, it's Y.": the next sentence gives the right value."""
    return len(text) <= 120 and (bool(_RESTATE.match(text)) or read_cues(text).correction)


# A bare imperative ("Just write short paragraphs.", "直接写成段落就行").
_IMPERATIVE = Joined("statements", "bare_imperative")


# What replaces a rule just dropped, said without a rule word: set against the
# dropped rule ("不过每段开头加个小标题", "But put a heading on each section") or
# approved as the new way ("Casual is fine, short sentences", "口语一点就行"). Not a
# sentence about someone or something else ("不过我今天有点累", "But the weather is
# nice", "that's fine"): those open with a subject of their own or name nothing.
_REPLACEMENT = Joined("statements", "replacement")


def instead_rule(index: int, text: str, cues: Cues, after_revoke: bool) -> Statement | None:
    """ "Stop doing the numbered lists. Just write short paragraphs.": what to do instead
    of a rule just revoked is a rule itself, however plainly put."""
    if not after_revoke or not (_IMPERATIVE.search(text) or replaces_rule(text, cues)):
        return None
    return Statement(index, text, cues, extract_values(text), "directive", 0.8)


def replaces_rule(text: str, cues: Cues) -> bool:
    return (
        bool(_REPLACEMENT.search(text))
        and not cues.question
        and not small_talk(text)
        and not chatter(text)
        and content_word_count(text) >= 1
    )
