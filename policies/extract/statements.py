"""Which sentences of a user message are worth remembering, and as what.

A sentence becomes a `Statement` when its phrasing binds the assistant
(directive/constraint/preference cues), when it carries a concrete value
that belongs to the conversation (dates, amounts, counts, IDs), or when it
sets the scene in the opening message. Questions, chit-chat, other
parties' positions and asides are left to the raw transcript: they are
answered, not remembered.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

from policies.extract.chatter import addressed, chatter, told_memory
from policies.extract.choices import CHOICE_MARK, chosen_option
from policies.language.cues import (
    ACCEPTED,
    CHALLENGE,
    CHANGE,
    CONDITION,
    CONTINUATION,
    FIRST_PERSON,
    IDENTITY,
    LIST_HEADER,
    MEMO,
    PERMISSION,
    RESTORE,
    STANDING,
    Cues,
    Lexicon,
    check_question,
    contrast_terms,
    cue_free,
    is_question,
    negated,
    read_cues,
    recap_request,
    small_talk,
    strip_filler,
)
from policies.language.dates import strip_marker
from policies.language.idioms import media_only
from policies.language.matching import topical_overlap, weighted_terms
from policies.language.names import ROLE, person_names
from policies.language.segment import SELF_FIX, clauses, self_fixed, split_sentences
from policies.language.value_roles import example_spans, is_example
from policies.language.values import Value, contact_details, extract_values
from policies.types import ItemType

# Starts like a one-off task ("Check PAY-2294", "拉华东前10家门店"): a
# request to act now, not a fact to keep.
_TASK = re.compile(
    r"^(?:(?:go ahead|can you|could you|set|apply|close|open|pull|check|run"
    r"|show|give me|write me|tell|send|do|try|look|find|search|start with|help me)\b"
    r"|(?:先|再|你)?(?:帮我|给我|帮忙|麻烦你|请你|帮|拉|查|跑|算|写个|列个|画个|来个)|先出|再出)",
    re.IGNORECASE,
)
# Asks for something now, wherever it sits in the sentence.
_REQUEST = re.compile(
    r"^(?:please )?(?:give|assign|send|put|move|add|post|mark|set|label|tag|close|file|forward|hand"
    r"|route|pass) (?:it|that|this|them|those|these|both|the (?:first|second|last|other) one)"
    r" (?:to|on|in|into|as|under|over)\b|\bshow me\b|\bgive me (?:a|an|the|some)\b|\btell me\b"
    r"|\bwrite me\b|\bcan you (?:write|give"
    r"|show|draft|tell|explain|recommend|help)\b|(?<![他她它会能说])帮我|你帮"
    r"|给我[^，。；]{0,6}(?:写|讲|出|拉|算|排|列|做|来)",
    re.IGNORECASE,
)
# Someone else offering to help ("他说可以帮我内推") is news, not a request to the assistant.
_OFFER = re.compile(
    r"(?:他|她|他们|她们|对方)[^，。；]{0,4}(?:说|会|能|可以|愿意)[^，。；]{0,4}帮我"
)
_HELP = re.compile(
    r"\b(?:help|assist)\b[^.]*\b(?:me|us|with)\b|\bi'?d (?:love|like) (?:your |some )?help\b"
    r"|想请你|请你帮|帮我|帮帮我|麻烦你",
    re.IGNORECASE,
)
# People and their roles are entities worth keeping ("Dmitri is on call").
_COPULA = re.compile(
    r"\b(?:is|are|was|were|goes|go|gets|will be|stays?|lives?)\b|=|是|为|叫|在|用", re.IGNORECASE
)
_PLAN_KINDS = frozenset(
    {"date", "time", "money", "percent", "version", "label", "grade", "freq", "title", "qty",
     "bound"}
)  # fmt: skip
_NARRATIVE = re.compile(
    r"^(?:i|my|we|our|it|it's|today|yesterday|last night|this morning|lol|haha)\b[^.?!]*"
    r"\b(?:went|ran"
    # "I've got the permit" is what the user has now, not a story.
    r"|had|(?<!'ve )(?<!have )got|was|were|did|snowed|rained|ate|watched|saw|bought|played"
    r"|scored|broke|knocked"
    r"|spent|took|grew up)\b|^(?:今天|昨天|刚才|刚刚|我今天|我昨天|哈哈)[^。！？]*了"
    r"|\b(?:went|turned out) (?:great|well|fine|ok|okay|badly|smoothly|perfectly|better|worse"
    r"|really well|so well)\b|\b(?:loved|hated|liked) it\b",
    re.IGNORECASE,
)
_CHITCHAT = re.compile(
    r"\b(?:weather|rain(?:ing|ed|y)?|snow(?:ed|ing|y)?|pouring|sunny|freezing|hungover|tired"
    r"|exhausted|bored|lol|haha+|omg|ugh)\b|\b\d+ degrees (?:in here|outside|today)\b"
    r"|\((?:laughs|lol)\)|天气|下(?:大|小|暴)?雨|下(?:大)?雪"
    r"|降温|好热|好冷|累死|忙死|困死|哈哈|无聊|郁闷|[（(]笑[）)]|气死",
    re.IGNORECASE,
)
_WE = re.compile(r"\b(?:we|we're|we'll|we've|we'd|our|us)\b|我们|咱们|我家|我们家", re.IGNORECASE)
# "X is called Y", "named Y", "Town: Gullhaven": naming a person, place or thing.
_NAMING = re.compile(
    r"\b(?:called|named|known as|goes by|titled)\b|^[\w' -]{1,24}: [A-Z][\w-]+"
    r"|\b(?:the|our|my) [a-z]+(?: [a-z]+)? (?:is|will be|'s) (?:the |a |an )?(?:[a-z-]+ )?"
    r"[A-Z][a-z]+"
    r"|叫[“\"「]?[\u4e00-\u9fff]{1,4}|名字(?:是|叫)"
)
# The user's own errand ("I need to book flights", "我得去接孩子"), not a rule for the assistant.
_PERSONAL_NEED = re.compile(
    r"\b(?:i|we)(?:'ll| will)? (?:\w+ )?(?:have|has|need|needs|got) to\b|我(?:得|要)去",
    re.IGNORECASE,
)
# Hedged, speculative sentences ("which might mean…", "我可能会…") are
# thinking aloud, not decisions.
_HEDGE = re.compile(
    r"\b(?:might|maybe|perhaps|possibly|probably|i guess|not sure|i wonder|could be)\b"
    r"|也许|或许|说不定|不一定|可能(?:会|要|得|是)?(?!性)",
    re.IGNORECASE,
)
# Hard limits rank first: safety (allergies, injuries, surgery), absolute words.
_HARD = re.compile(
    r"allerg|过敏|\bnever\b|绝对|一定要|必须|\bmust\b|full stop|red line|non-negotiable|hard"
    r"|injur|surger|\bmedical\b|手术|受伤|伤病|旧伤|医嘱|病史",
    re.I,
)
_STRONG_KINDS = frozenset(
    {"money", "percent", "date", "time", "qty", "label", "grade", "version", "id", "freq", "title",
     "bound"}
)  # fmt: skip
_BASE_IMPORTANCE: dict[str, float] = {
    "directive": 0.85, "constraint": 0.85, "preference": 0.6, "fact": 0.65, "entity": 0.6,
    "goal": 0.9, "state": 0.5,
}  # fmt: skip
_RELEVANT = 1.0


@dataclass(slots=True)
class Statement:
    """One candidate memory item from a user message."""

    index: int  # sentence position in the message
    text: str  # verbatim value
    cues: Cues
    values: tuple[Value, ...]
    type: ItemType
    importance: float
    revoke: bool = False
    reported: bool = False
    consumed: bool = False  # merged into another statement's item
    restore: bool = False  # "back to the original": undo the latest revision
    correction: bool = False  # "sorry, I meant…", "是我记错了": the speaker fixes a statement
    contrast: tuple[str, ...] = ()  # what it says is no longer so ("not the 14th", "不是蓝卡")
    # Strongest change cue in this sentence or an earlier one of its message:
    # "Change of plan on comments. From now on post them publicly." revises,
    # but a sentence *before* the cue does not.
    change: int = 0

    @property
    def strong_values(self) -> tuple[Value, ...]:
        """Values a revision can change (bare numbers included: "5000" → "6000")."""
        # An example ("group them under time headings, like 10:00") sets nothing.
        spans = example_spans(self.text)
        return tuple(
            v for v in self.values
            if (v.kind in _STRONG_KINDS or v.kind == "number")
            and not is_example(self.text, v, spans)
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a sentence sits: what its message and the session say about it."""

    topic: Container[str]
    opening: bool  # the session's first user message
    first: bool  # no statement kept before it in that message
    aside: bool  # at or after an aside marker ("totally unrelated", "顺便问")
    before_question: bool  # the next sentence is a question
    after_question: bool  # the previous sentence was one ("Any sci-fi tips? Something gripping.")
    reported: bool
    listed: bool  # a line under a "Requirements:" / "要求如下：" header
    # The sentence before was someone else's wish ("Mrs. Zhou wants us to…"): what the
    # user says against it ("But we teach simplified") is the user's own decision.
    answering_reported: bool = False


_ASIDE_END = re.compile(
    r"^(?:anyway|anyhow|anyways|back to (?:the|our|business|work|it)|ok(?:ay)?,? back to"
    r"|where was i|言归正传|回到正题|说回(?:正事|来)|话说回来|不扯了|好了不说了|扯远了)\b",
    re.IGNORECASE,
)


def _still_aside(aside: bool, text: str, cues: Cues) -> bool:
    """Asides last from their marker to the end of the message, unless the
    speaker comes back ("Anyway.", "言归正传") or corrects themselves."""
    if _ASIDE_END.match(text):
        aside = False
    return (aside or cues.aside) and not cues.correction


def clean(sentence: str) -> str:
    """Verbatim sentence minus a leading timestamp, leading filler and trailing separators."""
    return strip_filler(strip_marker(sentence)).rstrip("；;，,、 ")


def _semicolon(text: str) -> str:
    return "；" if re.search(r"[\u3000-\u9fff]$", text) else "; "


def _join(a: str, b: str) -> str:
    sep = "" if re.search(r"[\u3000-\u9fff]$", a) else " "
    return a + sep + b


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
    raw = [part for s in split_sentences(message) for part in _rule_before_question(s)]
    raw = _with_accepted_asks(raw)
    raw, announced = _with_announced_topic(raw)
    raw, announced, headers = _with_inline_headers(raw, announced)
    contents = _content_headers(raw)
    headers |= contents
    sentences = [clean(s) for s in raw]
    # A header only names the rules that follow it; it asks nothing ("几个…要求：").
    recaps = [recap_request(s) and i not in headers for i, s in enumerate(sentences)]
    raw_ends = [s.rstrip().endswith((";", "；")) for s in raw]
    questions = [
        is_question(s) and not CHALLENGE.search(s) and i not in headers
        for i, s in enumerate(sentences)
    ]
    out: list[Statement] = []
    aside = prev_reported = listed = chained = correcting = pasting = False
    carried = 0
    revoked_at = -9
    i = 0
    while i < len(sentences):
        text, cues = sentences[i], read_cues(sentences[i])
        # A cue in a sentence that is no statement itself ("Change of plan.",
        # "是我说错了！") governs the next statement only.
        change = max(carried, cues.change, 1 if i in announced else 0)
        aside = _still_aside(aside, text, cues)
        correcting = correcting or cues.correction
        if i in headers or LIST_HEADER.search(text):
            # A header on its own line heads the rest of the message; one with its
            # first item after the colon, only its own semicolon chain.
            chained = i in headers and i not in contents
            listed = listed or not chained
            i += 1
            continue
        if pasting or _PASTE.search(raw[i]):
            # Pasted material (a quote, an email, a document): data, not requirements.
            st = _pasted(i, text, cues)
            if st is not None:
                out.append(st)
            pasting = _still_pasting(raw[i], pasting)
            i += 1
            continue
        # Pieces of one semicolon-chained sentence share its speaker.
        reported = cues.reported or (prev_reported and i > 0 and raw_ends[i - 1])
        answering = not reported and (prev_reported or (i > 0 and _others_wish(sentences[i - 1])))
        prev_reported = reported
        where = _Where(topic, opening, not out, aside,
                       i + 1 < len(sentences) and questions[i + 1],
                       i > 0 and questions[i - 1], reported, listed or chained,
                       answering)  # fmt: skip
        after = sentences[i + 1] if where.before_question else ""
        st = None if recaps[i] else _classify_or_premise(i, text, cues, where, questions[i], after)
        st, i = _or_leaned(st, i, sentences, questions, recaps[i] or where.aside, topic)
        if st is None and correcting and not recaps[i] and not questions[i]:
            # "My mistake. 8 people." / "是我记错了。3.8公斤。": the value after the admission.
            values = extract_values(text)
            if any(v.kind in _STRONG_KINDS for v in values):
                st = Statement(
                    i, text, cues, values, _fact_type(values, text), 0.9, correction=True
                )
        st = st or _instead_rule(i, text, cues, revoked_at >= i - 2 and not questions[i])
        if st is not None and any(recaps) and not _survives_recap(st):
            st = None
        # Items of one listed chain are separate rules, never one another's continuation.
        # A header is never the continuation of the statement before it.
        item = (chained and raw_ends[i]) or i + 1 in headers
        # What replaces a revoked rule is a rule of its own, kept after the revocation
        # ("不过每段加个小标题"); one that continues it ("Instead, …") is read with it.
        item = item or (
            st is not None and st.revoke and i + 1 < len(sentences)
            and not CONTINUATION.match(sentences[i + 1])
            and _replaces(sentences[i + 1], read_cues(sentences[i + 1]))
        )  # fmt: skip
        if st is not None and i + 1 < len(sentences) and not questions[i + 1] and not item:
            joined = _with_next(st, text, cues, sentences[i + 1], where, change, carried)
            if joined is not None:
                st, change = joined
                i += 1
        choice = None
        if options and not questions[i] and not recaps[i] and not where.aside:
            choice = chosen_option(text, list(options))
        if choice is not None and choice not in text:
            if st is None:
                st = Statement(i, text, cues, extract_values(text), "fact", 0.85)
            st.text = f"{st.text}{CHOICE_MARK}{choice}"
            # A choice made from a list is a decision as concrete as a date.
            st.importance = max(st.importance, 0.95)
        chained = chained and raw_ends[i]
        revoked_at = i if st is not None and st.cues.revoke_span is not None else revoked_at
        if st is not None:
            st.change = max(change, st.cues.change)
            st.correction = st.correction or (correcting and st.cues.change >= 1)
            if st.change >= 1 or st.correction or st.cues.revoke_span is not None:
                st.contrast = contrast_terms(st.text)
            out.append(st)
            carried = 0
        else:
            carried = change
        i += 1
    return _without_disowned(out, sentences)


# "几个格式要求：标题用黑体；…", "A few rules for the drafts: bullet points only; …": a
# header naming rules, with the first of them after its colon on the same line.
_INLINE_HEADER = re.compile(r"^(?P<head>[^：:。.!！?？；;]{2,40}?[：:])\s*(?P<rest>\S.*)$", re.S)


def _with_inline_headers(
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


def _content_headers(raw: list[str]) -> set[int]:
    """Indices of sentences that are a content header only (split off their first item
    by `_with_inline_headers`, or said alone)."""
    return {i for i, s in enumerate(raw) if _CONTENT_HEADER.search(s.strip())}


# A sentence that only announces that something changes, naming what but not the new
# value: "Correction on the oven temperature.", "The pickup day moves.", "Bad news about
# the venue.", "关于交稿时间，我再说一下。", "集合地点有变。". The value comes in a
# sentence after it, which alone may name nothing ("Sunday the 15th works better.",
# "改到下周一吧。"): the two are one revision of the thing named.
_ANNOUNCE = re.compile(
    r"^(?:(?:a |one |quick |small |some )?(?:correction|update|change|bad news|good news|news"
    r"|change of plans?|heads[- ]up|a tweak|tweak)s? (?:on|about|to|regarding|re|for) "
    r"(?P<en>(?:the |our |my )?[\w' -]{2,40}?)"
    r"|(?P<en2>(?:the |our |my )?[\w' -]{2,40}?) (?:moves|is moving|has moved|has changed"
    r"|changes|is changing|is different now|needs to change))\W*$"
    r"|^关于(?P<zh>[^，,。！!？?]{1,12})[，,]?\s*(?:我|我们)?(?:再|要)?(?:说一下|说一句|改一下|更正一下"
    r"|纠正一下|补充一下|有变化?|有个变化|有点变化|要改一下?|变了)\W*$"
    r"|^(?P<zh2>[^，,。！!？?关]{2,10})(?:有变化?|有点变化|有个变化|变了|要改一下|得改一下)\W*$",
    re.IGNORECASE,
)
_ANNOUNCE_REACH = 2  # the value may follow a sentence of reasons


def _with_announced_topic(raw: list[str]) -> tuple[list[str], set[int]]:
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
            if _ANNOUNCE.search(text) and not _strong(text):
                pending = text
            else:
                out.append(sentence)
            continue
        if _strong(text) and not is_question(text):
            out.extend(between)
            announced.add(len(out))
            out.append(_join(pending, text))
            pending, between = None, []
        elif len(between) + 1 < _ANNOUNCE_REACH:
            between.append(sentence)
        else:
            out.extend([pending, *between, sentence])
            pending, between = None, []
    if pending is not None:
        out.extend([pending, *between])
    return out, announced


def _with_accepted_asks(raw: list[str]) -> list[str]:
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
            and _strong(prev)
            and not is_question(prev)
            and not is_question(sentence)
            # "…so we'll do thirty, and $25 for overtime" sets a value of its own.
            and not _strong(sentence[: taken.start()] + " " + sentence[taken.end() :])
        ):
            out[-1] = _join(prev, sentence.strip())
            continue
        out.append(sentence)
    return out


def _strong(text: str) -> bool:
    return any(v.kind in _STRONG_KINDS for v in extract_values(text))


def _with_next(
    st: Statement, text: str, cues: Cues, nxt: str, where: _Where, change: int, carried: int
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
    merged = text + _semicolon(text) + nxt if fix_pending else _join(text, nxt)
    mcues = read_cues(merged)
    st = _classify(st.index, merged, mcues, where) or st
    if not fix_pending:
        return st, max(change, mcues.change)
    # The marker fixes a value of this very sentence, not an earlier one.
    unfixed = read_cues(SELF_FIX.sub(", ", merged)).change
    st.cues = dataclasses.replace(st.cues, change=unfixed)
    return st, max(carried, unfixed)


# The user setting someone else's wish aside right after reporting it: "That's her
# idea; I'm not sold", "it's not her call", "we haven't agreed", "那是她的想法",
# "这个她说了不算".
_DISOWN = Lexicon.named("statements", "disown")
# Whose wish it is: someone named or by role, as the subject of wanting or saying.
_THIRD_PARTY = Lexicon.named("statements", "third_party")


def _without_disowned(out: list[Statement], sentences: Sequence[str]) -> list[Statement]:
    """Drop someone else's wish that the user sets aside in the same or the next
    sentence ("Dana wants a public demo. That's her wish, we haven't agreed";
    "我妈说春节要涨价。这个她说了不算"): it is news, not a requirement, and must not
    revise the value it speaks of."""
    dropped: set[int] = set()
    for i, text in enumerate(sentences):
        m = _DISOWN.search(text)
        if m is None:
            continue
        wishes = [
            st for st in out
            if (st.index in (i - 1, i)
                or (st.index == i - 2 and st.text.endswith(sentences[i - 1])))
            and _THIRD_PARTY.search(wish := st.text if st.index < i else st.text[: m.start()])
            and not _OWN_WISH.match(wish)
        ]  # fmt: skip
        if not wishes:
            continue
        dropped.update(id(st) for st in wishes)
        # The disclaimer itself ("we haven't agreed") is no rule either.
        dropped.update(id(st) for st in out if st.index == i)
    return [st for st in out if id(st) not in dropped]


_OWN_WISH = re.compile(r"(?:i|we)\b|我们?(?:特别|真的|很|也)?(?:想|希望|要求|觉得)", re.IGNORECASE)


_LAST_CLAUSE = re.compile(r"[，,;；]\s*(?=[^，,;；]*$)")


def _rule_before_question(sentence: str) -> list[str]:
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


_CLAUSE_WORDS = re.compile(
    r"\b(?:i|we|you|he|she|they|it|is|are|was|were|be|been|am|have|has|had|do|does|did|will"
    r"|would|can|could|should|must|may|might|'s|'re|'m|'ve|'ll|'d|let's|please|thanks|thank"
    r"|yes|no|ok|okay|sure|sorry|go|goes|went|come|comes|came|get|gets|got|make|makes|made"
    r"|take|takes|took|say|says|said|need|needs|want|wants|know|knows|think|thinks|see|sees|saw"
    r"|give|gives|gave|stay|stays|run|runs|ran|work|works|looks?|feels?|seems?)\b|n't\b"
    r"|\b[a-z]{3,}ed\b",
    re.IGNORECASE,
)


def _fragment(text: str) -> bool:
    """A verbless English phrase that elaborates the sentence before it
    ("…we're getting rid of gas. Induction range, electric everything.")."""
    words = text.split()
    latin, cjk = re.search(r"[A-Za-z]", text), re.search(r"[\u3400-\u9fff]", text)
    return (
        bool(latin) and not cjk and 2 <= len(words) <= 6 and not _CLAUSE_WORDS.search(text)
        and not re.search(r"\d", text)
    )  # fmt: skip


def cue_free_memo(text: str) -> str:
    m = MEMO.search(text)
    return text if m is None else text[: m.start()] + " " + text[m.end() :]


# "Pasting the relevant part of the quote: \"…\"", "邮件原文如下：“…”": what follows is
# someone else's text, quoted; its lines are data, whatever their wording.
_PASTE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|here)[,:]? )?(?:pasting|pasted|copying|quoting|here'?s|here is|this is)"
    r"\b[^:\"“]{0,60}:\s*[\"“]|(?:原文|如下|贴一下|粘贴一下|贴给你)[^：:“\"]{0,10}[：:]\s*[“\"]",
    re.IGNORECASE,
)


def _still_pasting(raw_sentence: str, pasting: bool) -> bool:
    """Is the quote still open after this sentence?"""
    quotes = raw_sentence.count('"') + raw_sentence.count("“") + raw_sentence.count("”")
    return pasting != (quotes % 2 == 1)


def _pasted(index: int, text: str, cues: Cues) -> Statement | None:
    values = extract_values(text)
    if not any(v.kind in _STRONG_KINDS for v in values) and not negated(text):
        return None
    return Statement(index, text, cues, values, "fact", 0.4)


def _survives_recap(st: Statement) -> bool:
    """In a message asking for a recap, only concrete news or a standing rule is new."""
    return bool(st.strong_values) or (st.cues.directive >= 3 and bool(STANDING.search(st.text)))


_RESTATE = re.compile(
    r"^(?:(?:sorry|oops|i mean)[,!.]? )?"
    r"(?:(?:i had it wrong|i got it wrong|my bad|my mistake)[,!.]? )?"
    r"(?:it'?s|it is|it was|that'?s|they'?re|而是|应该是|其实是|是"
    # "…5580213, no wait, that's the old cart; the live one is 5580231"
    r"|(?:the |this |our |my )?(?:[\w'-]+ ){0,3}one (?:is|was)\b"
    r"|(?:正确的|真正的|[\u4e00-\u9fff]{1,6}那个)是)",
    re.IGNORECASE,
)


def _restates(text: str) -> bool:
    """ "…the product isn't X. Sorry, it's Y.": the next sentence gives the right value."""
    return len(text) <= 120 and (bool(_RESTATE.match(text)) or read_cues(text).correction)


def _content(text: str) -> int:
    return sum(1 for w in weighted_terms(text).values() if w >= 1)


def _classify(index: int, text: str, cues: Cues, where: _Where) -> Statement | None:
    if media_only(text):
        return None
    values = extract_values(text)
    if where.reported and not cues.agreement:
        if contact_details(text) and not cues.question:
            # "Their planner is Rosa, 07700 914 382": how to reach someone is kept,
            # whoever the sentence is about.
            return Statement(index, text, cues, values, "entity", 0.75, reported=True)
        return None
    strong = any(v.kind in _STRONG_KINDS for v in values)
    if _chatter_only(text, cues):
        if not strong or told_memory(text):
            return None
        # "Raising 3 puppies must be exhausting": the number may be worth keeping,
        # the "must" binds nobody; it neither sets nor revokes a rule.
        cues = dataclasses.replace(cues, directive=0, constraint=0, preference=0,
                                   revoke_span=None)  # fmt: skip
    bag = weighted_terms(text)
    content = sum(1 for w in bag.values() if w >= 1)
    revoke = cues.revoke_span is not None
    if content == 0 and not strong:
        return None
    fixed_number = not strong and self_fixed(text)
    if (
        (cues.correction or fixed_number)
        and not cues.question
        and not where.aside
        and (
            fixed_number
            or strong
            or contrast_terms(text)
            or person_names(text)
            or cues.requirement >= 2
        )
    ):
        # "Sorry, I meant Paulina, not Priyanka": always kept; it replaces what it fixes.
        # A bare admission ("I wrote it wrong in my notes") only marks the next statement.
        req = cues.requirement
        fixed: ItemType = _requirement_type(cues, text) if req >= 2 else _fact_type(values, text)
        return Statement(index, text, cues, values, fixed, 0.9, correction=True)
    if (
        cues.question
        and not where.aside
        and not where.reported
        and any(v.kind == "id" for v in values)
    ):
        # "Is that plausibly CR-88412?": the question is answered, but the ID it
        # brings up is something the conversation is now about.
        return Statement(index, text, cues, values, "entity", 0.4)
    if cues.correction and not strong:
        return None
    if small_talk(text) and not strong and not revoke and cues.change < 2:
        return None  # "That must have been awesome!", "Totally agree, Mel."
    if where.first and not strong and not revoke and cues.change < 2 and _bare_rule(text):
        return None  # "No, hard no on that.": says no, but not to what
    if _dropped(text, cues, where, revoke) or _idle(text, cues, strong, revoke):
        return None
    if RESTORE.search(text):
        return Statement(index, text, cues, values, "fact", 0.65, restore=True)
    cues, revoke = _nod_cues(text, cues, revoke)
    kind = _nod_kind(_kind(text, cues, where, values, content, revoke), text, cues, revoke)
    if kind is None:
        return None
    importance = _importance(kind, text, values, where, revoke, strong)
    return Statement(index, text, cues, values, kind, round(importance, 2), revoke, where.reported)


def _put_for_a_nod(text: str, cues: Cues, revoke: bool) -> bool:
    """A statement with a tag asking for a nod, that sets no standing rule and
    changes nothing explicitly ("from now on…, right?" is still a rule)."""
    return (
        not revoke
        and cues.change < 2
        and not STANDING.search(text)
        and check_question(text.rstrip("。.!！"))
    )


_CONDITION = re.compile(
    r"\b(?:if|when|whenever|in case|should)\b|如果|要是|假如|万一|若|一旦", re.I
)


def _nod_cues(text: str, cues: Cues, revoke: bool) -> tuple[Cues, bool]:
    """ "…如果要退课，月底前还能退一半，对吧？": in a statement put up for a nod, a
    revoke word in a conditional clause names a case of the logic being checked;
    it withdraws nothing the user said."""
    if revoke and _conditional_revoke(text, cues) and _put_for_a_nod(text, cues, False):
        return dataclasses.replace(cues, revoke_span=None), False
    return cues, revoke


def _nod_kind(kind: ItemType | None, text: str, cues: Cues, revoke: bool) -> ItemType | None:
    """ "…，这个逻辑对吧？", "Deposits are refundable up to a week out, right?": the
    user's understanding, put up to be confirmed. Kept (a later change replaces
    it), but as what the user takes to be so, not as a rule they set: it ranks
    with facts and never anchors the block."""
    if kind in _RULE_KINDS and _put_for_a_nod(text, cues, revoke):
        return "fact"
    return kind


def _conditional_revoke(text: str, cues: Cues) -> bool:
    """The revoke word sits in a conditional clause ("如果要取消", "if they cancel")."""
    if cues.revoke_span is None:
        return False
    start = cues.revoke_span[0]
    clause_start = max(text.rfind(mark, 0, start) for mark in "，,；;。.") + 1
    return bool(_CONDITION.search(text[clause_start:start]))


def _chatter_only(text: str, cues: Cues) -> bool:
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


# A bare imperative ("Just write short paragraphs.", "直接写成段落就行").
_IMPERATIVE = re.compile(
    r"^(?:(?:ok(?:ay)?|so|then|and|instead|rather),? )?(?:just |only |simply |instead )?"
    r"(?:write|use|give|keep|make|put|send|do|format|reply|answer|show|stick|go|stay|sign"
    r"|start|end|open|close|call|address)\b"
    r"|^(?:那|以后|之后)?(?:就|直接|只|统一|改成|换成)(?:用|写|给|发|回|做|按|列|出)",
    re.IGNORECASE,
)


# What replaces a rule just dropped, said without a rule word: set against the
# dropped rule ("不过每段开头加个小标题", "But put a heading on each section") or
# approved as the new way ("Casual is fine, short sentences", "口语一点就行"). Not a
# sentence about someone or something else ("不过我今天有点累", "But the weather is
# nice", "that's fine"): those open with a subject of their own or name nothing.
_REPLACEMENT = re.compile(
    r"^(?:but|though|however|instead|rather)\b,? (?!(?:i|i'm|i've|we|we're|he|she|they|it|it's"
    r"|that|that's|this|there|the|my|our|his|her|their|you|you're)\b)"
    r"|^(?!(?:that|this|it|which)\b)[\w' -]{2,30}? (?:is|are) (?:fine|ok|okay|good|enough|better)"
    r"\b(?! (?:to|with|for|by|at|on)\b)"
    r"|^(?:不过|但是?|可是|只是)(?:，)?(?!我|你|他|她|它|咱|今天|昨天|明天|天气|这|那)"
    r"|^(?!(?:这|那|它))[^，,。；]{2,12}(?:就行|就好|就可以|即可)",
    re.IGNORECASE,
)


def _instead_rule(index: int, text: str, cues: Cues, after_revoke: bool) -> Statement | None:
    """ "Stop doing the numbered lists. Just write short paragraphs.": what to do instead
    of a rule just revoked is a rule itself, however plainly put."""
    if not after_revoke or not (_IMPERATIVE.search(text) or _replaces(text, cues)):
        return None
    return Statement(index, text, cues, extract_values(text), "directive", 0.8)


def _replaces(text: str, cues: Cues) -> bool:
    return (
        bool(_REPLACEMENT.search(text))
        and not cues.question
        and not small_talk(text)
        and not chatter(text)
        and _content(text) >= 1
    )


# The user's own next step ("I'll ask Mei", "我问问周会计再说"): nothing to keep.
_INTENT = re.compile(
    r"^(?:ok(?:ay)?,? )?(?:i'?ll|let me|i will|i'?m going to|i'?m gonna) (?:go )?(?:ask|check|call"
    r"|email|text|ping|look|think|try|talk)\b"
    r"|^(?:i'?ll|i will|let me) [a-z]+ (?:it|that|this|them)\b"
    r"|^(?:那)?(?:算了，)?我(?:去|先|再|回头)?(?:问问|问一下|想想|看看|查查|试试|考虑考虑|琢磨琢磨)",
    re.IGNORECASE,
)


# The user announcing material they are about to hand over ("我先把现在的简历贴给你",
# "Let me paste our current price list", "here's the draft"): a step of the
# conversation, done by the next message; the material itself is what counts.
_HANDING_OVER = re.compile(
    r"^(?:(?:ok(?:ay)?|so|first|alright)[,:]? )?(?:(?:i'?ll|let me|i will|i'?m going to|i'?m gonna)"
    r" (?:just |first )?(?:paste|send|share|forward|attach|upload|copy|drop) (?:you |in |over )?"
    r"(?:my|our|the|a|an|this|that|what)\b[^,;:]{0,50}"
    r"|here(?:'s| is| are) (?:my|our|the) (?:current |old |latest |existing )?[\w-]+(?: [\w-]+)?)"
    r"[.!:]?$"
    r"|^(?:那)?(?:我)?(?:先|再|等下|待会|马上)?把[^，。；\d]{1,14}(?:贴|发|粘|传|复制|拍)(?:一下)?"
    r"(?:给你|过来|上来|你)(?:看看|看一下|看)?[。！!：:]?$",
    re.IGNORECASE,
)

# How the speaker themself is doing, measured ("I'm running on four hours of sleep",
# "I've been tempted for three years", "昨晚只睡了四个小时", "这个念头我都憋了两年了"):
# the number describes the speaker's body or feelings, not anything to plan. A
# limit on the time they can give ("I only have four hours a day for this") has a
# requirement cue and is read before this.
_OWN_CONDITION = re.compile(
    r"\b(?:i'?m|i am|i was|i've been|i have been) (?:running|living|surviving|functioning|going)"
    r" on (?:about |maybe |like |only |just )?\w+ hours?(?: of)? sleep\b"
    r"|\bi (?:only |barely |just )?(?:slept|got) (?:for )?(?:about |maybe |like |only |just )?"
    r"\w+ hours?(?: of sleep)?(?: last night)?\b"
    r"|\bi'?ve been (?:tempted|dying|itching|meaning|wanting|dreaming|obsessed|hooked|curious"
    r"|thinking about (?:it|this|that))\b[^.;]{0,30}\bfor (?:\w+ )?(?:years?|months?|weeks?|ages"
    r"|decades?)\b"
    r"|(?:昨晚|昨天|这几天|最近)?(?:我)?(?:只|才|就)?睡了(?:不到)?[\d一二两三四五六七八九十几半]+个?(?:小时|钟头)"
    r"|我(?:都)?(?:惦记|馋|想|憋|纠结|琢磨|心动)了?(?:好|整整|快)?[\d一二两三四五六七八九十几]+(?:年|个月|周)了",
    re.IGNORECASE,
)


def _own_condition(text: str) -> bool:
    return bool(_OWN_CONDITION.search(text)) and not _ASKS_SOMEONE.search(text)


# A clause that asks something of anyone ("so keep it short", "以后别找他们").
_ASKS_SOMEONE = re.compile(
    r"\b(?:so|please|let'?s|we'?ll|i'?ll|you|your|should|must|never|always|from now on|going"
    r" forward|stop|avoid|switch|use|drop|cancel|don'?t (?:use|order|book|buy|pick|choose|go))\b"
    r"|所以|以后|今后|别|不要|不能|不许|必须|一定|换|改|停|取消|你",
    re.IGNORECASE,
)


# The user's own errand for family or friends ("I have to call my uncle back about
# the boat", "我得给我妈回个电话"): their private to-do, said in passing, not a
# rule for the task. With a value or an ask ("…, so keep Friday free") it is read
# as usual.
_PRIVATE_ERRAND = re.compile(
    r"\b(?:i|we)(?:'ll| will)? (?:\w+ )?(?:have|has|need|needs|got) to "
    r"(?:reply to|respond to|answer|call"
    r"|ring|phone|text|email|message|write (?:back )?to|get back to|visit|pick up|collect"
    r"|drop off|babysit|help|buy (?:a |an )?(?:gift|present|something) for) "
    r"(?:my|our) (?:little |older |younger |big |best )?(?:sister|brother|mom|mum|mother|dad"
    r"|father|parents|wife|husband|partner|girlfriend|boyfriend|kids?|son|daughter|friends?"
    r"|family|aunt|uncle|cousin|grandma|grandpa|grandmother|grandfather|in-laws|neighbou?r)s?\b"
    r"|我(?:得|要|还得|还要)(?:先)?(?:去)?(?:(?:给|帮)(?:我)?(?:{rel})(?:回|打|发|买|挑)"
    r"|(?:接|送|陪|看)(?:我)?(?:{rel}))".format(
        rel="妈|爸|妹|弟|姐|哥|老婆|老公|孩子|儿子|女儿|朋友|家里|奶奶|爷爷|外婆|外公|婆婆|公公"
    ),
    re.IGNORECASE,
)


def _private_errand(text: str, cues: Cues, strong: bool) -> bool:
    if strong or cues.change >= 2 or cues.revoke_span is not None or STANDING.search(text):
        return False
    return bool(_PRIVATE_ERRAND.search(text)) and not _ASKS_SOMEONE.search(text)


# A running total ("一共15个小朋友了", "that brings us to 40 volunteers"): the count the
# plan now stands at, even inside a story about the day.
_TOTAL = re.compile(
    r"一共|总共|共计|加起来|合计|\bin total\b|\baltogether\b|\bthat makes\b"
    r"|\bbrings? (?:us|it|the (?:total|count|number)) (?:up |down )?to\b",
    re.IGNORECASE,
)


def _running_total(text: str, strong: bool) -> bool:
    return strong and bool(_TOTAL.search(text))


def _idle(text: str, cues: Cues, strong: bool, revoke: bool) -> bool:
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
    if MEMO.search(text) and _content(cue_free_memo(text)) < 2 and not strong:
        return True  # "你记着点。", "Keep that in mind."
    if _running_total(text, strong):
        return False
    return bool(_CHITCHAT.search(text) or _NARRATIVE.search(text)) and cues.requirement < 3


def _cued(cues: Cues) -> bool:
    return cues.requirement >= 2 or cues.change >= 1 or cues.revoke_span is not None


# Money the user has for something ("I've got 1.5k set aside for the POS", "装修预算准备了
# 8万"): a budget, even when it comes right after a question.
_SET_ASIDE = re.compile(
    r"\bset aside\b|\bsaved up\b|\bbudget(?:ed|ing)?\b|\b(?:can|could) spend\b"
    r"|预算|准备了|存了|攒了",
    re.IGNORECASE,
)


def _money_set_aside(text: str) -> bool:
    return bool(_SET_ASIDE.search(text)) and any(v.kind == "money" for v in extract_values(text))


def _dropped(text: str, cues: Cues, where: _Where, revoke: bool) -> bool:
    """Questions, asides and one-off requests, unless they carry a rule."""
    for_me = not (_PERSONAL_NEED.search(text) or _OTHERS_WISH.search(text))
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
        and any(v.kind in _STRONG_KINDS for v in extract_values(part))
        for part in clauses(text)
    )


_DECIDE = re.compile(r"(?:let'?s|we'?ll|we will|then)\b|那就|就(?:按|定)", re.IGNORECASE)


# Someone else's wish or view as the sentence's subject: "our CEO wants us to…",
# "my wife thinks…", "老板希望我们…".
_OTHERS_WISH = re.compile(
    r"^(?:[\w' -]{0,30}[:,] )?(?:(?:my|our|the) [\w-]+(?: [\w-]+)?|[A-Z][a-z]+|he|she|they)"
    r" (?:really |also |just )?(?:wants?|thinks?|says?|said|expects?|asked|asks|insists?"
    r"|would like)\b"
    r"|^(?:他|她|他们|我(?:的)?[\u4e00-\u9fff]{1,3}|老板|领导|经理|客户)(?:说|希望|想让|要求|觉得)",
)


_ANAPHOR = re.compile(r"\b(?:that|this|it|those|these|them)\b|这个|那个|这样|那样|这种|那种", re.I)


_RULE_KINDS = frozenset({"directive", "constraint", "preference"})
_VAGUE_IMPORTANCE = 0.55
# What a vague rule points at: a pronoun or an unnamed "one" / "anything".
_POINTER = re.compile(
    r"\b(?:that|this|it|those|these|them|one|anything|something)\b"
    r"|这个|那个|这些|那些|这样|那样|这种|那种",
    re.IGNORECASE,
)
_ZH_RULE_WORDS = re.compile(
    r"一定|千万|必须|务必|不能|不要|不许|不准|别|要|都|也|就|还|再|请|得|了|吧|啊|呀|哦|的|你|我们|咱们"
)
_PARTICLES = frozenset({"up", "down", "away", "out", "off", "back", "over", "around", "aside"})


def _vague_rule(text: str, strong: bool) -> bool:
    """A rule whose object is only a pointer ("Don't mix them up", "I need to drop
    one", "那个别弄了"): one content word at most, no value, no name, no standing cue."""
    if strong or not _POINTER.search(text) or person_names(text) or STANDING.search(text):
        return False
    if re.search(r"[\u3400-\u9fff]", text):
        # Chinese words are counted as bigrams: count what is left of the sentence
        # once the pointer and the rule's own words are gone ("那个一定要放好" → 放好).
        core = _ZH_RULE_WORDS.sub("", _POINTER.sub("", text))
        return len(re.findall(r"[\u3400-\u9fff]", core)) <= 2
    # A phrasal verb's particle ("throw those away") names nothing either.
    bag = weighted_terms(text)
    return sum(1 for t, w in bag.items() if w >= 1 and t not in _PARTICLES) <= 1


def _bare_rule(text: str) -> bool:
    """A rule about "that" with nothing else in it ("No, hard no on that.",
    "那个不行。"): it points at what the assistant just said, it names nothing."""
    return bool(_ANAPHOR.search(text)) and _content(text) <= 1 and not person_names(text)


def _soft_scope(text: str, cues: Cues) -> bool:
    """A limit that only scopes the question before it ("Any ideas for the picnic?
    Budget is basically sandwiches."): no negation, no hard word, no value, no standing cue."""
    return not (
        negated(text)
        or _HARD.search(text)
        or CONDITION.search(text)
        or STANDING.search(text)
        or cues.directive >= 3
        or any(v.kind in _STRONG_KINDS for v in extract_values(text))
    )


# A request for one deliverable now ("Give me three options.", "Write the
# fiddle leaf fig one now", "Draft the refund macro and mention the code"):
# done once, in this reply. A manner right after the object ("write the
# summaries in bullet points") or a standing cue makes it a rule instead.
_ONE_OFF = re.compile(
    r"^(?:(?:please|now|ok(?:ay)?|so|then|alright|next)[,:]? )*(?:can you |could you )?"
    r"(?:give me|write(?: me)?|draft(?: me)?|create|generate|show me|send me|come up with"
    r"|brainstorm|suggest|recommend|sketch(?: out)?|outline|pitch me|find me|pull up|put together)"
    r" (?:(?:a|an|the|this|that|these|those|some|another|one|two|three|four|five|six|a few"
    r"|a couple of|\d+|my|our) )(?P<rest>.*)$",
    re.IGNORECASE,
)
_MANNER = frozenset("in as using with without under within following per".split())


def _one_off(text: str, cues: Cues) -> bool:
    if STANDING.search(text) or cues.directive >= 3 or cues.constraint >= 3:
        return False
    m = _ONE_OFF.match(text)
    if m is None:
        return False
    rest = re.findall(r"[A-Za-z][\w'-]*", m.group("rest"))[:5]
    return not any(w.lower() in _MANNER for w in rest)


def _classify_or_premise(
    index: int, text: str, cues: Cues, where: _Where, question: bool, after: str = ""
) -> Statement | None:
    """`after`: the question right after `text`, if one follows it."""
    st = _classify(index, text, cues, where)
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
_OWN_THING = re.compile(r"^(?:我们家|我家|咱家|咱们家|我们|咱们)的|^(?:our|my) ", re.IGNORECASE)
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
    if _SUPPOSED.search(head) or is_question(head) or not _content(head):
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
    if not any(v.kind in _STRONG_KINDS for v in values) and not _QUOTED_RULE.search(text):
        return None
    return Statement(index, text, cues, values, "fact", 0.6)


_WISH = re.compile(
    r"\b(?:wants?|wanted|insists?|would like|is pushing for) (?:us|me)\b"
    r"|想让|希望我们|要求我们|非要|特别想",
    re.IGNORECASE,
)


def _others_wish(text: str) -> bool:
    """Someone else's wish ("Mrs. Zhou really wants us to…", "老板想让我们…")."""
    if _OTHERS_WISH.search(text):
        return True
    own = re.match(r"(?:i|we)\b|我们?(?:特别|真的|很|也)?(?:想|希望|要求)", text, re.IGNORECASE)
    return bool(_WISH.search(text)) and not own


# Turning against what was just said: "But we…", "不过我们…".
_COUNTER = re.compile(
    r"^(?:but|however|still|no,)\b|^(?:但是|但|不过|可是|可)(?:我们|我|咱们)", re.IGNORECASE
)
# A premise given as settled news, not as part of the question ("练了两周了，正常吗？").
_SETTLED = re.compile(
    r"\b(?:since|now that|given that|seeing as|now)\b"
    r"|既然|已经|收齐|定了|确定了|确认了|改成|挪到"
    # The final outcome of a count or a choice: "最后确认参赛的是14个队", "we ended up
    # with 9 stalls".
    r"|最后确认|最终(?:确认|确定|定下)|\bin the end\b|\bended up\b"
    r"|\bfinal (?:count|tally|number)\b",
    re.IGNORECASE,
)
_CLAUSE_BREAK = re.compile(r"[，,；;]\s*")
# The user's own plan or target, put to the assistant for an opinion: "We're
# planning to seat 120 in the east hall, is that too many?", "我给自己定了个目标：三个月
# 跑完一次半马，你觉得现实吗？". The plan is theirs whatever the answer: kept as said.
_OWN_PLAN = re.compile(
    r"^(?:so |and |ok(?:ay)?,? )?(?:we(?:'re| are)|i'm|i am) (?:planning|aiming|hoping)"
    r" (?:to|for)\b"
    r"|^(?:so |and |ok(?:ay)?,? )?(?:we|i) (?:plan|intend|want|'d like|would like) to\b"
    r"|^(?:so |and )?(?:my|our) (?:plan|goal|target|aim) (?:is|was)\b"
    r"|(?:我们|咱们|我)(?:自己)?(?:想|打算|准备|计划)(?:把|放|定|在|用|做|办|请|订|卖|开|找)"
    r"|(?:我|我们|咱们)(?:自己)?有个(?:小)?(?:目标|计划|打算)"
    r"|(?:我|我们|咱们)的(?:目标|计划)是",
    re.IGNORECASE,
)
# ...unless it is a supposition: "If we plan to invite 120, how many tables?"
_SUPPOSED = re.compile(
    r"\b(?:if|what if|suppose|supposing|say|in case|assuming|unless|whether)\b"
    r"|如果|要是|假如|假设|万一|是否|是不是",
    re.IGNORECASE,
)


# A count the question takes as the case: "With 71 students, do we need another
# section?", "有了80个报名的，场地还够吗？". Not one put up to weigh ("With 100 guests,
# would the hall be big enough?", "有100个人的话…"): a would/could or a condition.
_WITH_COUNT = re.compile(
    r"^(?:so |and |but |ok(?:ay)?,? )?with (?:\d|(?:a |one )?(?:dozen|hundred)\b|[a-z]+ty\b"
    r"|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b)"
    r"|^(?:现在|目前|眼下)?(?:都)?有了",
    re.IGNORECASE,
)
_WEIGHED = re.compile(r"\b(?:would|could|might|were)\b|的话|会不会", re.IGNORECASE)


def _given_count(premise: str, text: str) -> bool:
    return bool(_WITH_COUNT.search(premise)) and not (
        _WEIGHED.search(text) or _SUPPOSED.search(text)
    )


def _premise(index: int, text: str, where: _Where, question: bool) -> Statement | None:
    """What a question takes as settled: "Since the tasting's on Friday the 14th now,
    can you draft the menu?", "名单收齐了，45人，场地够吧？". The leading clauses up
    to the last one holding a value (or the whole sentence right before the question),
    if they are said as settled, or as the user's own plan put up for an opinion."""
    # An own plan may name its figure bare ("卖到2000单": orders, a unit of no one list).
    own_plan = bool(_OWN_PLAN.search(text)) and not _SUPPOSED.search(text)
    kinds = _STRONG_KINDS | {"number"} if own_plan else _STRONG_KINDS
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
    st = _classify(index, premise, cues, plain)
    if st is None and not (_CHITCHAT.search(premise) or _NARRATIVE.search(premise)):
        # Settled news about the plan, even when its words are new to the conversation.
        values = extract_values(premise)
        st = Statement(index, premise, cues, values, _fact_type(values, premise), 0.65)
    return st


_CJK = re.compile(r"[\u4e00-\u9fff]")
# The user's own leaning, said right after asking for an opinion: "我倾向于加",
# "I'm leaning towards yes".
_LEAN = re.compile(
    r"^(?:不过|但|其实|反正)?(?:我|我们|我个人)(?:还是|其实|本人)?(?:比较|更)?(?:倾向于?|偏向于?)"
    r"|^(?:but |honestly,? |personally,? )?"
    r"(?:(?:i'm|i am|we're|we are) (?:\w+ )?(?:leaning|inclined)|(?:i|we)(?:'d| would) lean)\b",
    re.IGNORECASE,
)
# Where a question's asking starts: "你觉得…", "what do you think", "is that…".
_ASKING = re.compile(
    r"^(?:你|您)(?:觉得|看|认为)|^(?:有没有|要不要|是不是|行不行|可以吗|好不好|有必要)"
    r"|^(?:what do you think|do you think|does that|is that|would that|should we|worth it)\b",
    re.IGNORECASE,
)


def _or_leaned(
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
    if cues.question or cues.reported or _SUPPOSED.search(proposal) or _content(proposal) < 2:
        return None
    if topical_overlap(weighted_terms(proposal), topic) < _RELEVANT:
        return None  # "我家猫老是半夜跑酷，你觉得正常吗？我倾向于不管它": an aside
    text = f"{proposal}{'。' if _CJK.search(proposal) else '. '}{lean}"
    values = extract_values(text)
    return Statement(index, text, read_cues(text), values, "preference", 0.75)


# A question about what follows from what was just said: "…，这样医学类应该都能报吧？",
# "…, so she can apply for medicine, right?".
_CONSEQUENCE = re.compile(
    r"^(?:这样|那|那么|所以)(?:的话)?[^，,]{0,12}?(?:应该|能|可以|就|是不是|会不会)"
    r"|^so\b[^,]{0,40}?\b(?:can|could|should|will|would|'ll|is|are|means?)\b",
    re.IGNORECASE,
)
# A choice already made, stated as such: "她选的是物理+化学+生物", "we went with the oak".
_CHOICE_MADE = re.compile(
    r"(?:选|报|考|学|用|买|订|定|挑)(?:的是|了)"
    r"|\b(?:took|chose|picked|went with|opted for|signed up for|booked|bought|settled on)\b",
    re.IGNORECASE,
)


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
        or _SUPPOSED.search(premise) or _content(premise) < 2
    ):  # fmt: skip
        return ""
    return premise


def _leading_values(text: str, kinds: frozenset[str] = _STRONG_KINDS) -> str:
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


def _importance(
    kind: ItemType, text: str, values: tuple[Value, ...], where: _Where, revoke: bool, strong: bool
) -> float:
    importance = _BASE_IMPORTANCE.get(kind, 0.5)
    if kind == "constraint" and (_HARD.search(text) or negated(text)):
        importance += 0.1
    if where.opening and kind in ("fact", "entity"):
        importance = 0.75
    if kind in ("fact", "entity") and any(v.kind == "id" for v in values):
        importance = max(importance, 0.75)  # an ID the user gives is a key reference
    if where.reported:
        importance = 0.5
    if kind in _RULE_KINDS and not revoke and _vague_rule(text, strong):
        # "Don't mix them up", "I need to drop one": a rule about something named only
        # by a pronoun is kept, but ranks below the facts that say what it is about.
        importance = _VAGUE_IMPORTANCE
    return importance


def _kind(
    text: str, cues: Cues, where: _Where, values: tuple[Value, ...], content: int, revoke: bool
) -> ItemType | None:
    req = cues.requirement
    strong = any(v.kind in _STRONG_KINDS for v in values)
    relevant = topical_overlap(weighted_terms(text), where.topic) >= _RELEVANT
    if where.opening and not where.first and _HELP.search(text) and cues.directive < 3:
        return None  # "I'd love help turning it into a plan": the request, not its content
    if where.listed and not cues.question and content >= 1:
        req = max(req, 3)
    if PERMISSION.search(text):
        req = max(req, 2)  # relaxing a rule is itself a rule (and may conflict with one)
    if where.opening and where.first and req < 3 and (content >= 3 or strong):
        return "goal"  # "I need help building X": the task, not a constraint
    personal = bool(FIRST_PERSON.search(text)) and not where.before_question
    if revoke or req >= 3 or (req == 2 and (strong or relevant or where.opening or personal)):
        return "fact" if where.reported else _requirement_type(cues, text)
    if where.opening:
        if _TASK.match(text) and not where.first:
            return None
        if content < 3 and not strong:
            return None
        return "goal" if where.first else _fact_type(values, text)
    if strong and cues.change >= 2:
        return _fact_type(values, text)
    if cues.change >= 2 and not cues.question and _content(cue_free(CHANGE, text)) >= 2:
        # "这周开始就吃希尔斯了", "we've switched to the blue one"; not a bare
        # announcement ("Change of plan on comments.").
        return "fact"
    if where.answering_reported and _COUNTER.match(text) and (personal or _WE.search(text)):
        return "constraint"  # "But we teach simplified.", "但我们还是按投票结果来。"
    if IDENTITY.search(text):
        return "entity"
    if MEMO.search(text):
        return _fact_type(values, text)
    if where.before_question and not relevant:
        return None  # the premise of a side question ("my 5k took 31 minutes. Decent?")
    return _fact_kind(text, cues, values, strong, relevant)


def _fact_kind(
    text: str, cues: Cues, values: tuple[Value, ...], strong: bool, relevant: bool
) -> ItemType | None:
    if _TASK.match(text):
        return None
    if any(v.kind == "id" for v in values) and (
        _COPULA.search(text) or FIRST_PERSON.search(text) or _WE.search(text)
    ):
        return "entity"  # "my order is …", "I've got the permit, number …"
    if (_CHITCHAT.search(text) or _NARRATIVE.search(text)) and not _running_total(text, strong):
        return None  # "pouring for three days straight", "今天加班到十点，累死了"
    if strong and (relevant or _WE.search(text)):
        return _fact_type(values, text)
    # A dated or priced statement about the plan ("Dinner on the first night
    # is at 7pm") is worth keeping even when the topic has not named it yet;
    # a story about the user's day ("It snowed in Oslo today") is not.
    if any(v.kind in _PLAN_KINDS for v in values):
        return _fact_type(values, text)
    names = person_names(text)
    we_are = bool(_WE.search(text) and _COPULA.search(text))  # "Our PM is Sarah Chen"
    if names and (
        ROLE.search(text) or we_are or _NAMING.search(text) or (relevant and cues.agreement)
    ):
        return "entity"
    if cues.agreement and relevant and (strong or names):
        return "fact"
    return None


def _requirement_type(cues: Cues, text: str) -> ItemType:
    # "所有甜点都不能放芒果" quantifies like a directive but binds like a
    # constraint; only a standing cue ("以后", "from now on") makes it a
    # directive when both are strong.
    if cues.directive >= 3 and (cues.constraint < 3 or STANDING.search(text)):
        return "directive"
    if cues.constraint >= 2 and cues.constraint >= cues.preference:
        return "constraint"
    if cues.preference >= 2:
        return "preference"
    if cues.directive >= 2:
        return "directive"
    return "constraint"


def _fact_type(values: tuple[Value, ...], text: str) -> ItemType:
    kinds = {v.kind for v in values}
    if kinds and kinds <= {"id", "number"}:
        return "entity"
    if not kinds and person_names(text):
        return "entity"
    return "fact"
