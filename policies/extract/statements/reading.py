"""The walk over one user message: each sentence read with its neighbours' state.

`read_statements` carries what one sentence tells about the next (an aside marker, a
reported wish, a list header, a change cue, a self-correction, an open quote) and asks
the deciders of the other modules in order; its output is the message's statements.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass

from policies.extract.choices import CHOICE_MARK, chosen_option
from policies.extract.statements.classify import fact_type
from policies.extract.statements.others import others_wish, without_disowned
from policies.extract.statements.questions import classify_or_premise, or_leaned
from policies.extract.statements.regroup import (
    PASTED_QUOTE,
    content_headers,
    instead_rule,
    pasted_statement,
    replaces_rule,
    rule_before_question,
    still_pasting,
    with_accepted_asks,
    with_announced_topic,
    with_inline_headers,
    with_next,
)
from policies.extract.statements.statement import STRONG_KINDS, SentencePlace, Statement, clean
from policies.language.cues import (
    CONTINUATION,
    LIST_HEADER,
    STANDING,
    Cues,
    contrast_terms,
    read_cues,
)
from policies.language.questions import CHALLENGE, is_question, recap_request
from policies.language.segment import split_sentences
from policies.language.values import extract_values
from policies.rulebook import Joined

_ASIDE_END = Joined("statements", "aside_ends")


def _still_aside(aside: bool, text: str, cues: Cues) -> bool:
    """Asides last from their marker to the end of the message, unless the
    speaker comes back ("Anyway.", "言归正传") or corrects themselves."""
    if _ASIDE_END.match(text):
        aside = False
    return (aside or cues.aside) and not cues.correction


@dataclass(frozen=True, slots=True)
class _Message:
    """One user message cut into sentences, with what each is before the walk
    (`_split_message`); indices are the sentences'."""

    raw: list[str]  # as written (for the paste and semicolon marks)
    sentences: list[str]  # cleaned
    headers: set[int]  # list headers (content headers included)
    contents: set[int]  # content headers: split off their first item, or said alone
    announced: set[int]  # joined to their announcement: they carry a change cue
    recaps: list[bool]  # asks for a recap
    raw_ends: list[bool]  # ends on a semicolon: one piece of a chained sentence
    questions: list[bool]


def _split_message(message: str) -> _Message:
    """The message's sentences, regrouped (rules fused with a rhetorical question
    split off, accepted asks and announced topics joined, inline headers split)."""
    raw = [part for s in split_sentences(message) for part in rule_before_question(s)]
    raw = with_accepted_asks(raw)
    raw, announced = with_announced_topic(raw)
    raw, announced, headers = with_inline_headers(raw, announced)
    contents = content_headers(raw)
    headers |= contents
    sentences = [clean(s) for s in raw]
    # A header only names the rules that follow it; it asks nothing ("几个…要求：").
    recaps = [recap_request(s) and i not in headers for i, s in enumerate(sentences)]
    raw_ends = [s.rstrip().endswith((";", "；")) for s in raw]
    questions = [
        is_question(s) and not CHALLENGE.search(s) and i not in headers
        for i, s in enumerate(sentences)
    ]
    return _Message(raw, sentences, headers, contents, announced, recaps, raw_ends, questions)


def _where(
    m: _Message,
    i: int,
    cues: Cues,
    topic: Container[str],
    opening: bool,
    first: bool,
    aside: bool,
    prev_reported: bool,
    listed: bool,
) -> SentencePlace:
    """Where sentence `i` sits (`SentencePlace`). Pieces of one semicolon-chained
    sentence share its speaker; what follows someone else's wish answers it."""
    reported = cues.reported or (prev_reported and i > 0 and m.raw_ends[i - 1])
    answering = not reported and (prev_reported or (i > 0 and others_wish(m.sentences[i - 1])))
    return SentencePlace(topic, opening, first, aside,
                  i + 1 < len(m.sentences) and m.questions[i + 1],
                  i > 0 and m.questions[i - 1], reported, listed,
                  answering)  # fmt: skip


def _after_admission(i: int, text: str, cues: Cues) -> Statement | None:
    """ "My mistake. 8 people." / "是我记错了。3.8公斤。": after a self-correction,
    a sentence that is only a strong value is the corrected value."""
    values = extract_values(text)
    if any(v.kind in STRONG_KINDS for v in values):
        return Statement(i, text, cues, values, fact_type(values, text), 0.9, correction=True)
    return None


def _own_item(st: Statement | None, i: int, m: _Message, chained: bool) -> bool:
    """Whether the next sentence stands on its own, never read as the
    continuation of this one.

    Items of one listed chain are separate rules, and a header is never the
    continuation of the statement before it. What replaces a revoked rule is a
    rule of its own, kept after the revocation ("不过每段加个小标题"); one that
    continues it ("Instead, …") is read with it.
    """
    item = (chained and m.raw_ends[i]) or i + 1 in m.headers
    return item or (
        st is not None and st.revoke and i + 1 < len(m.sentences)
        and not CONTINUATION.match(m.sentences[i + 1])
        and replaces_rule(m.sentences[i + 1], read_cues(m.sentences[i + 1]))
    )  # fmt: skip


def _with_choice(
    st: Statement | None, i: int, text: str, cues: Cues, options: Sequence[str]
) -> Statement | None:
    """The statement with the option the sentence picks by position ("let's go
    with the second one") written out, or a new one for it; else as it was."""
    choice = chosen_option(text, list(options))
    if choice is None or choice in text:
        return st
    if st is None:
        st = Statement(i, text, cues, extract_values(text), "fact", 0.85)
    st.text = f"{st.text}{CHOICE_MARK}{choice}"
    # A choice made from a list is a decision as concrete as a date.
    st.importance = max(st.importance, 0.95)
    return st


def _settle(st: Statement, change: int, correcting: bool) -> None:
    """The cue the statement carries (the strongest seen since the last one),
    whether it corrects the user, and the terms it contrasts with."""
    st.change = max(change, st.cues.change)
    st.correction = st.correction or (correcting and st.cues.change >= 1)
    if st.change >= 1 or st.correction or st.cues.revoke_span is not None:
        st.contrast = contrast_terms(st.text)


def read_statements(
    message: str, topic: Container[str], opening: bool, options: Sequence[str] = ()
) -> list[Statement]:
    """Statements of one user message, in order.

    `options`: the numbered list of the assistant message this one answers
    (`policies.extract.choices`); a sentence that picks one by position ("let's go
    with the second one") is kept with the option it names.

    A change cue may sit in a sentence that is not itself a statement
    ("是我说错了！", "Change of plan on comments.") yet governs the sentences
    that follow: each statement carries the strongest cue seen so far.
    """
    m = _split_message(message)
    raw, sentences, questions, recaps = m.raw, m.sentences, m.questions, m.recaps
    out: list[Statement] = []
    aside = prev_reported = listed = chained = correcting = pasting = False
    carried = 0
    revoked_at = -9
    i = 0
    while i < len(sentences):
        text, cues = sentences[i], read_cues(sentences[i])
        # A cue in a sentence that is no statement itself ("Change of plan.",
        # "是我说错了！") governs the next statement only.
        change = max(carried, cues.change, 1 if i in m.announced else 0)
        aside = _still_aside(aside, text, cues)
        correcting = correcting or cues.correction
        if i in m.headers or LIST_HEADER.search(text):
            # A header on its own line heads the rest of the message; one with its
            # first item after the colon, only its own semicolon chain.
            chained = i in m.headers and i not in m.contents
            listed = listed or not chained
            i += 1
            continue
        if pasting or PASTED_QUOTE.search(raw[i]):
            # Pasted material (a quote, an email, a document): data, not requirements.
            st = pasted_statement(i, text, cues)
            if st is not None:
                out.append(st)
            pasting = still_pasting(raw[i], pasting)
            i += 1
            continue
        where = _where(m, i, cues, topic, opening, not out, aside, prev_reported, listed or chained)
        prev_reported = where.reported
        after = sentences[i + 1] if where.before_question else ""
        st = None if recaps[i] else classify_or_premise(i, text, cues, where, questions[i], after)
        st, i = or_leaned(st, i, sentences, questions, recaps[i] or where.aside, topic)
        if st is None and correcting and not recaps[i] and not questions[i]:
            st = _after_admission(i, text, cues)
        st = st or instead_rule(i, text, cues, revoked_at >= i - 2 and not questions[i])
        if st is not None and any(recaps) and not _survives_recap(st):
            st = None
        item = _own_item(st, i, m, chained)
        if st is not None and i + 1 < len(sentences) and not questions[i + 1] and not item:
            joined = with_next(st, text, cues, sentences[i + 1], where, change, carried)
            if joined is not None:
                st, change = joined
                i += 1
        if options and not questions[i] and not recaps[i] and not where.aside:
            st = _with_choice(st, i, text, cues, options)
        chained = chained and m.raw_ends[i]
        revoked_at = i if st is not None and st.cues.revoke_span is not None else revoked_at
        if st is not None:
            _settle(st, change, correcting)
            out.append(st)
            carried = 0
        else:
            carried = change
        i += 1
    return without_disowned(out, sentences)


def _survives_recap(st: Statement) -> bool:
    """In a message asking for a recap, only concrete news or a standing rule is new."""
    return bool(st.strong_values) or (st.cues.directive >= 3 and bool(STANDING.search(st.text)))
