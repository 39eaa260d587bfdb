"""Which sentences of a user message are worth remembering, and as what.

A sentence becomes a `Statement` when its phrasing binds the assistant
(directive/constraint/preference cues), when it carries a concrete value
that belongs to the conversation (dates, amounts, counts, IDs), or when it
sets the scene in the opening message. Questions, chit-chat, other
parties' positions and asides are left to the raw transcript: they are
answered, not remembered.
"""

from __future__ import annotations

import re
from collections.abc import Container
from dataclasses import dataclass

from policies.cues import (
    CONTINUATION,
    FIRST_PERSON,
    IDENTITY,
    LIST_HEADER,
    MEMO,
    PERMISSION,
    RESTORE,
    STANDING,
    Cues,
    is_question,
    negated,
    read_cues,
    strip_filler,
)
from policies.matching import topical_overlap, weighted_terms, word_set
from policies.segment import split_sentences
from policies.types import ItemType
from policies.values import Value, extract_values

# Starts like a one-off task ("Check PAY-2294", "拉华东前10家门店"): a
# request to act now, not a fact to keep.
_TASK = re.compile(
    r"^(?:go ahead|can you|could you|set|apply|close|open|pull|check|run"
    r"|show|give me|write me|tell|send|do|try|look|find|search|start with|help me"
    r"|(?:先|再|你)?(?:帮我|给我|帮忙|麻烦你|请你|帮|拉|查|跑|算|写个|列个|画个|来个)|先出|再出)",
    re.IGNORECASE,
)
# Asks for something now, wherever it sits in the sentence.
_REQUEST = re.compile(
    r"\bshow me\b|\bgive me (?:a|an|the|some)\b|\btell me\b|\bwrite me\b|\bcan you (?:write|give"
    r"|show|draft|tell|explain|recommend|help)\b|帮我|你帮|给我[^，。；]{0,6}(?:写|讲|出|拉|算|排|列|做|来)",
    re.IGNORECASE,
)
_HELP = re.compile(
    r"\b(?:help|assist)\b[^.]*\b(?:me|us|with)\b|\bi'?d (?:love|like) (?:your |some )?help\b"
    r"|想请你|请你帮|帮我|帮帮我|麻烦你",
    re.IGNORECASE,
)
# People and their roles are entities worth keeping ("Dmitri is on call").
_ROLE = re.compile(
    r"\bon call\b|\bowner\b|\bin charge\b|\bcontact\b|\bcounterpart\b|\bassign(?:ed)? to\b"
    r"|\breports? to\b|\bresponsible\b|\bdirector\b|\bmanager\b|\bpm\b|\blead\b|\bboss\b"
    r"|\bsigns? off\b|\bapprov\w+|\breviewer\b|\bstakeholder\b|\bclient\b|\bcustomer\b"
    r"|负责|对接|联系人|经理|总监|主管|老板|审批|甲方",
    re.IGNORECASE,
)
_COPULA = re.compile(
    r"\b(?:is|are|was|were|goes|go|gets|will be|stays?|lives?)\b|=|是|为|叫|在|用", re.IGNORECASE
)
_PLAN_KINDS = frozenset({"date", "time", "money", "percent", "version", "label", "grade"})
_NARRATIVE = re.compile(
    r"^(?:i|my|it|it's|today|yesterday|last night|this morning|lol|haha)\b[^.?!]*\b(?:went|ran"
    r"|had|got|was|were|did|snowed|rained|ate|watched|saw|bought|played|scored|broke|knocked"
    r"|spent|took)\b|^(?:今天|昨天|刚才|刚刚|我今天|我昨天|哈哈)[^。！？]*了",
    re.IGNORECASE,
)
_CHITCHAT = re.compile(
    r"\b(?:weather|rain(?:ing|ed|y)?|snow(?:ed|ing|y)?|pouring|sunny|freezing|hungover|tired"
    r"|exhausted|bored|lol|haha+|omg)\b|天气|下雨|下雪|降温|好热|好冷|累死|困死|哈哈|无聊|郁闷",
    re.IGNORECASE,
)
_WE = re.compile(r"\b(?:we|we're|we'll|we've|we'd|our|us)\b|我们|咱们|我家|我们家", re.IGNORECASE)
_NAME = re.compile(r"(?<=[\s(\"'])[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*")
_NOT_NAMES = word_set(
    """I I'm I'd I'll I've The A An And But So Oh Also Yes No Ok Okay Hi Hey Thanks Please
    Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March April May
    June July August September October November December English Chinese UTC"""
)
_HARD = re.compile(
    r"allerg|过敏|\bnever\b|绝对|一定要|必须|\bmust\b|full stop|red line|non-negotiable|hard", re.I
)
_STRONG_KINDS = frozenset(
    {"money", "percent", "date", "time", "qty", "label", "grade", "version", "id"}
)
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
    # Strongest change cue in this sentence or an earlier one of its message:
    # "Change of plan on comments. From now on post them publicly." revises,
    # but a sentence *before* the cue does not.
    change: int = 0

    @property
    def strong_values(self) -> tuple[Value, ...]:
        """Values a revision can change (bare numbers included: "5000" → "6000")."""
        return tuple(v for v in self.values if v.kind in _STRONG_KINDS or v.kind == "number")


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


def clean(sentence: str) -> str:
    """Verbatim sentence minus leading filler and trailing separators."""
    return strip_filler(sentence).rstrip("；;，,、 ")


def _join(a: str, b: str) -> str:
    sep = "" if re.search(r"[\u3000-\u9fff]$", a) else " "
    return a + sep + b


def read_statements(message: str, topic: Container[str], opening: bool) -> list[Statement]:
    """Statements of one user message, in order.

    A change cue may sit in a sentence that is not itself a statement
    ("是我说错了！", "Change of plan on comments.") yet governs the sentences
    that follow: each statement carries the strongest cue seen so far.
    """
    raw = split_sentences(message)
    sentences = [clean(s) for s in raw]
    raw_ends = [s.rstrip().endswith((";", "；")) for s in raw]
    questions = [is_question(s) for s in sentences]
    out: list[Statement] = []
    aside = prev_reported = listed = False
    change = 0
    i = 0
    while i < len(sentences):
        text, cues = sentences[i], read_cues(sentences[i])
        change = max(change, cues.change)
        aside = aside or cues.aside
        if LIST_HEADER.search(text):
            listed = True
            i += 1
            continue
        # Pieces of one semicolon-chained sentence share its speaker.
        reported = cues.reported or (prev_reported and i > 0 and raw_ends[i - 1])
        prev_reported = reported
        where = _Where(topic, opening, not out, aside,
                       i + 1 < len(sentences) and questions[i + 1],
                       i > 0 and questions[i - 1], reported, listed)  # fmt: skip
        st = _classify(i, text, cues, where)
        if st is not None and i + 1 < len(sentences):
            nxt = sentences[i + 1]
            if CONTINUATION.match(nxt) and not questions[i + 1]:
                merged = _join(text, nxt)
                mcues = read_cues(merged)
                st = _classify(i, merged, mcues, where) or st
                change = max(change, mcues.change)
                i += 1
        if st is not None:
            st.change = change
            out.append(st)
        i += 1
    return out


def _names(text: str) -> list[str]:
    return [n for n in _NAME.findall(text) if n.split()[0] not in _NOT_NAMES]


def _classify(index: int, text: str, cues: Cues, where: _Where) -> Statement | None:
    if where.reported and not cues.agreement:
        return None
    values = extract_values(text)
    strong = any(v.kind in _STRONG_KINDS for v in values)
    bag = weighted_terms(text)
    content = sum(1 for w in bag.values() if w >= 1)
    revoke = cues.revoke_span is not None
    if (content == 0 and not strong) or _dropped(text, cues, where, revoke):
        return None
    if RESTORE.search(text):
        return Statement(index, text, cues, values, "fact", 0.65, restore=True)
    kind = _kind(text, cues, where, values, content, revoke)
    if kind is None:
        return None
    importance = _BASE_IMPORTANCE.get(kind, 0.5)
    if kind == "constraint" and (_HARD.search(text) or negated(text)):
        importance += 0.1
    if where.opening and kind in ("fact", "entity"):
        importance = 0.75
    if where.reported:
        importance = 0.5
    return Statement(index, text, cues, values, kind, round(importance, 2), revoke, where.reported)


def _dropped(text: str, cues: Cues, where: _Where, revoke: bool) -> bool:
    """Questions, asides and one-off requests, unless they carry a rule."""
    if where.aside and cues.requirement < 3:
        return True
    if (
        where.after_question
        and not where.opening
        and cues.requirement < 3
        and not revoke
        and cues.change < 2
    ):
        return True  # elaborates the question just asked, it sets no rule
    if revoke or cues.change >= 2:
        return False
    if cues.question and not STANDING.search(text):
        # ...except the opening request, which states the task.
        return not (where.opening and where.first)
    # The opening request *is* the goal ("想请你帮我规划下周的三餐"); "记一下：…"
    # asks to remember what follows.
    if where.opening or MEMO.search(text):
        return False
    return bool(_REQUEST.search(text)) and cues.requirement < 3


def _kind(
    text: str, cues: Cues, where: _Where, values: tuple[Value, ...], content: int, revoke: bool
) -> ItemType | None:
    req = cues.requirement
    strong = any(v.kind in _STRONG_KINDS for v in values)
    relevant = topical_overlap(weighted_terms(text), where.topic) >= _RELEVANT
    if where.opening and not where.first and _HELP.search(text) and req < 3:
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
    if any(v.kind == "id" for v in values) and _COPULA.search(text):
        return "entity"
    if _CHITCHAT.search(text) or _NARRATIVE.search(text):
        return None  # "pouring for three days straight", "今天加班到十点，累死了"
    if strong and (relevant or _WE.search(text)):
        return _fact_type(values, text)
    # A dated or priced statement about the plan ("Dinner on the first night
    # is at 7pm") is worth keeping even when the topic has not named it yet;
    # a story about the user's day ("It snowed in Oslo today") is not.
    if any(v.kind in _PLAN_KINDS for v in values):
        return _fact_type(values, text)
    names = _names(text)
    we_are = bool(_WE.search(text) and _COPULA.search(text))  # "Our PM is Sarah Chen"
    if names and (_ROLE.search(text) or we_are or (relevant and cues.agreement)):
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
    if not kinds and _names(text):
        return "entity"
    return "fact"
