"""What a kept sentence is: its type (directive, constraint, preference, fact, entity,
goal) and its importance.

`classify_sentence` is the one place that decides whether a sentence is a statement at all,
after the filters of `dropped`; the type then says how the item binds (a rule set by
the user, a fact of the plan, a person or an ID) and the importance how it ranks under
the budget. A statement put up for a nod ("…, right?") is what the user takes to be so,
not a rule they set.
"""

from __future__ import annotations

import dataclasses
import re

from policies.extract.chatter import told_memory
from policies.extract.statements.dropped import chatter_only, is_dropped, is_idle, is_running_total
from policies.extract.statements.statement import (
    CHITCHAT,
    HARD_LIMIT,
    NARRATIVE,
    RELEVANT_OVERLAP,
    STRONG_KINDS,
    SentencePlace,
    Statement,
    content_word_count,
)
from policies.language.cues import (
    CHANGE,
    IDENTITY,
    MEMO,
    PERMISSION,
    RESTORE,
    STANDING,
    Cues,
    contrast_terms,
    cue_free,
    negated,
)
from policies.language.idioms import media_only
from policies.language.matching import topical_overlap, weighted_terms
from policies.language.names import ROLE, person_names
from policies.language.questions import check_question
from policies.language.reported import FIRST_PERSON
from policies.language.segment import self_fixed
from policies.language.social import small_talk
from policies.language.values import Value, contact_details, extract_values
from policies.rulebook import Joined
from policies.types import RULE_TYPES, ItemType

# Starts like a one-off task ("Check PAY-2294", "拉华东前10家门店"): a
# request to act now, not a fact to keep.
_TASK = Joined("statements", "task_now")


_HELP = Joined("statements", "asks_for_help")


# People and their roles are entities worth keeping ("Dmitri is on call").
_COPULA = Joined("statements", "copula")


_PLAN_KINDS = frozenset(
    {"date", "time", "money", "percent", "version", "label", "grade", "freq", "title", "qty",
     "bound"}
)  # fmt: skip


_WE = Joined("statements", "we")


# "X is called Y", "named Y", "Venue: Larchmoor Hall": naming a person, place or thing.
_NAMING = Joined("statements", "naming")


_BASE_IMPORTANCE: dict[str, float] = {
    "directive": 0.85, "constraint": 0.85, "preference": 0.6, "fact": 0.65, "entity": 0.6,
    "goal": 0.9, "state": 0.5,
}  # fmt: skip


def classify_sentence(index: int, text: str, cues: Cues, where: SentencePlace) -> Statement | None:
    if media_only(text):
        return None
    values = extract_values(text)
    if where.reported and not cues.agreement:
        if contact_details(text) and not cues.question:
            # "Their planner is Rosa, 07700 914 382": how to reach someone is kept,
            # whoever the sentence is about.
            return Statement(index, text, cues, values, "entity", 0.75, reported=True)
        return None
    strong = any(v.kind in STRONG_KINDS for v in values)
    if chatter_only(text, cues):
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
        fixed: ItemType = _requirement_type(cues, text) if req >= 2 else fact_type(values, text)
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
    if is_dropped(text, cues, where, revoke) or is_idle(text, cues, strong, revoke):
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


_CONDITION = Joined("statements", "conditional")


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
    if kind in RULE_TYPES and _put_for_a_nod(text, cues, revoke):
        return "fact"
    return kind


def _conditional_revoke(text: str, cues: Cues) -> bool:
    """The revoke word sits in a conditional clause ("如果要取消", "if they cancel")."""
    if cues.revoke_span is None:
        return False
    start = cues.revoke_span[0]
    clause_start = max(text.rfind(mark, 0, start) for mark in "，,；;。.") + 1
    return bool(_CONDITION.search(text[clause_start:start]))


_ANAPHOR = Joined("statements", "anaphor")


_VAGUE_IMPORTANCE = 0.55


# What a vague rule points at: a pronoun or an unnamed "one" / "anything".
_POINTER = Joined("statements", "pointer")


_ZH_RULE_WORDS = Joined("statements", "rule_words")


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
    return bool(_ANAPHOR.search(text)) and content_word_count(text) <= 1 and not person_names(text)


# Turning against what was just said: "But we…", "不过我们…".
_COUNTER = Joined("statements", "counter")


def _importance(
    kind: ItemType,
    text: str,
    values: tuple[Value, ...],
    where: SentencePlace,
    revoke: bool,
    strong: bool,
) -> float:
    importance = _BASE_IMPORTANCE.get(kind, 0.5)
    if kind == "constraint" and (HARD_LIMIT.search(text) or negated(text)):
        importance += 0.1
    if where.opening and kind in ("fact", "entity"):
        importance = 0.75
    if kind in ("fact", "entity") and any(v.kind == "id" for v in values):
        importance = max(importance, 0.75)  # an ID the user gives is a key reference
    if where.reported:
        importance = 0.5
    if kind in RULE_TYPES and not revoke and _vague_rule(text, strong):
        # "Don't mix them up", "I need to drop one": a rule about something named only
        # by a pronoun is kept, but ranks below the facts that say what it is about.
        importance = _VAGUE_IMPORTANCE
    return importance


def _kind(
    text: str,
    cues: Cues,
    where: SentencePlace,
    values: tuple[Value, ...],
    content: int,
    revoke: bool,
) -> ItemType | None:
    req = cues.requirement
    strong = any(v.kind in STRONG_KINDS for v in values)
    relevant = topical_overlap(weighted_terms(text), where.topic) >= RELEVANT_OVERLAP
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
        return "goal" if where.first else fact_type(values, text)
    if strong and cues.change >= 2:
        return fact_type(values, text)
    if cues.change >= 2 and not cues.question and content_word_count(cue_free(CHANGE, text)) >= 2:
        # "这周开始就吃希尔斯了", "we've switched to the blue one"; not a bare
        # announcement ("Change of plan on comments.").
        return "fact"
    if where.answering_reported and _COUNTER.match(text) and (personal or _WE.search(text)):
        return "constraint"  # "But we teach simplified.", "但我们还是按投票结果来。"
    if IDENTITY.search(text):
        return "entity"
    if MEMO.search(text):
        return fact_type(values, text)
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
    if (CHITCHAT.search(text) or NARRATIVE.search(text)) and not is_running_total(text, strong):
        return None  # "pouring for three days straight", "今天加班到十点，累死了"
    if strong and (relevant or _WE.search(text)):
        return fact_type(values, text)
    # A dated or priced statement about the plan ("Dinner on the first night
    # is at 7pm") is worth keeping even when the topic has not named it yet;
    # a story about the user's day ("It snowed in Oslo today") is not.
    if any(v.kind in _PLAN_KINDS for v in values):
        return fact_type(values, text)
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


def fact_type(values: tuple[Value, ...], text: str) -> ItemType:
    kinds = {v.kind for v in values}
    if kinds and kinds <= {"id", "number"}:
        return "entity"
    if not kinds and person_names(text):
        return "entity"
    return "fact"
