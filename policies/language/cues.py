"""zh/en cue lexicons: how people state, revise and revoke requirements.

Each category maps phrasings to a strength (3 strong, 2 medium, 1 weak).
Weak cues never make a sentence memorable on their own; they only add up
with values, topical relevance or other cues. Both languages are applied
to every sentence because real messages mix them ("SQL以后就别贴了").

The lists are about *phrasing*, not about any domain: "from now on",
"以后每次", "no X", "不要", "改成", "instead", "不用…了" occur whatever the
conversation is about. The few topical words (allergies, diets, budget)
are there because they make a sentence binding in any setting.

The other families of cues are beside it: questions (`questions.py`), reported
speech (`reported.py`), social moves (`social.py`); the engine that runs them
all is `lexicon.py` (`Lexicon`, `Table`). Every rule is kept as data, in the file of
its module: policies/rules/<lang>/cues.yaml (questions.yaml, reported.yaml,
social.yaml).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from policies import rulebook
from policies.language.idioms import mask_idioms
from policies.language.lexicon import Lexicon, Table, scripts
from policies.language.questions import asked, is_question
from policies.language.reported import is_reported

# The speaker fixes something they said ("sorry, I meant…", "是我记错了"): always
# worth keeping, and it replaces what it corrects. Choices made or leaned towards
# ("we're going with X", "还是让她上公立小学"): a later one replaces an earlier one.
# Both are rows of the weighted tables below, also run on their own, either script.
SELF_CORRECTION = rulebook.Joined("cues", "change.self_correction", flags=re.IGNORECASE)
DECISION = rulebook.Joined("cues", "preference.decision", flags=re.IGNORECASE)

DIRECTIVE = Table.named("cues", "directive")

# Conditions of the person a plan is for that rule options out, as an allergy does
# (a school's programmes, a trip's activities): "孩子有轻度色弱", "two kids get carsick".
CONDITION = rulebook.Joined("cues", "constraint.condition", ("zh", "en"), flags=re.IGNORECASE)

# What binds, what is liked or chosen, what changed: weighted tables kept as data
# (`constraint.*`, `preference.*`, `change.*` rows of policies/rules/<lang>/cues.yaml).
CONSTRAINT = Table.named("cues", "constraint")
PREFERENCE = Table.named("cues", "preference")

REVOKE = Lexicon.named("cues", "revoke")

CHANGE = Table.named("cues", "change")

ASIDE = Lexicon.named("cues", "aside")

# Standing instructions survive even when phrased as a question ("Can you
# always give prices in yen from now on?").
STANDING = Lexicon.named("cues", "standing")
# The user taking up what someone else asked for or offered: "…wants $45 per
# lesson; he's good, so we'll pay that", "we said yes", "fine by us", "就按她说的来",
# "那就给他涨到五千吧". Not the user's own proposal ("we'll do the venue tour").
ACCEPTED = Lexicon.named("cues", "accepted")
AGREEMENT = Lexicon.named("cues", "agreement")

# Going back to what was there before a change ("actually, back to the
# original plan", "算了，还是按原来的来吧").
RESTORE = Lexicon.named("cues", "restore")
# "Keep in mind…", "记一下：…": the user asks for this to be remembered.
MEMO = Lexicon.named("cues", "memo")
# "You can use requests now", "公司名称可以出现了": a rule relaxed.
PERMISSION = Lexicon.named("cues", "permission")
# "My name is Tom", "我叫小林": who the user is.
IDENTITY = Lexicon.named("cues", "identity")
# "Requirements:", "要求如下：" introduce a list whose lines are all rules.
LIST_HEADER = Lexicon.named("cues", "list_header")

CONTINUATION = Lexicon.named("cues", "continuation")


@dataclass(frozen=True, slots=True)
class Cues:
    """What the phrasing of one sentence says about it."""

    directive: int = 0
    constraint: int = 0
    preference: int = 0
    change: int = 0
    revoke_span: tuple[int, int] | None = None
    question: bool = False
    aside: bool = False
    reported: bool = False
    agreement: bool = False
    correction: bool = False  # the speaker corrects themselves ("I meant…", "记错了")

    @property
    def requirement(self) -> int:
        return max(self.directive, self.constraint, self.preference)


def cue_free(table: Table, text: str) -> str:
    """`text` without its strongest cue of `table`: what the sentence says besides the cue."""
    low = text.lower()
    for _, lexicon in table:
        m = lexicon.search(low)
        if m:
            return text[: m.start()] + " " + text[m.end() :]
    return text


def _strength(table: Table, text: str) -> int:
    for weight, lexicon in table:
        if lexicon.search(text):
            return weight
    return 0


# A clause saying what the speaker fears might happen names a change nobody decides:
# "别选靠过道的座位，怕半夜被吵醒", "book early in case they move it to Friday".
_FEARED = rulebook.Joined("cues", "feared", ("zh", "en"), flags=0)
# "Now" opening a new topic ("Now, the hotel:", "Now a boring but important thing:",
# "现在说说住宿") moves the talk on; it says nothing changed. Only a verbless lead-in
# ended by a comma, colon or dash counts: "Now it's 3 nights" and "Now the budget is
# $500" still mark a change.
_TOPIC_NOW = rulebook.Joined("cues", "topic_now", flags=0)


_QUOTED = re.compile(
    r'"[^"\n]{1,120}"|“[^”\n]{1,120}”|「[^」\n]{1,120}」|『[^』\n]{1,120}』|《[^》\n]{1,60}》'
)


def _mask_quotes(text: str) -> str:
    """Quoted words are named, not said: "Don't Need One" in a title is no rule.

    The quoted part is blanked at equal length, so spans still index `text`.
    """
    if not any(mark in text for mark in '"“「『《'):
        return text
    return _QUOTED.sub(lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[-1], text)


# "她担心以后没有红包了", "他每次都迟到": someone else's habits or worries.
_THIRD_PERSON_HABIT = rulebook.Joined("cues", "third_person_habit", ("zh",), flags=0)
_HABIT_WORDS = rulebook.Joined("cues", "habit_words", ("zh",), flags=0)


@lru_cache(maxsize=4096)
def read_cues(text: str) -> Cues:
    original = text
    # Quoted words are named, not said; idioms ("never been", "must be fun") state no rule.
    text = mask_idioms(_mask_quotes(text))
    revoke = REVOKE.search(text)
    question = is_question(original) or asked(text)
    if revoke and question and revoke.group(0).lower() in ("anymore", "any more"):
        revoke = None  # "Do those even exist anymore?" asks, it revokes nothing
    reported = is_reported(text)
    low = text.lower()
    directive = _strength(DIRECTIVE, low)
    if (
        directive
        and _THIRD_PERSON_HABIT.search(text)
        and not _strength(DIRECTIVE, _HABIT_WORDS.sub("", low))
    ):
        directive = 0
    return Cues(
        directive=directive,
        constraint=_strength(CONSTRAINT, low),
        preference=_strength(PREFERENCE, low),
        change=_strength(CHANGE, _FEARED.sub(" ", _TOPIC_NOW.sub(" ", low))),
        revoke_span=revoke.span() if revoke else None,
        question=question,
        aside=bool(ASIDE.search(text)),
        reported=reported,
        agreement=bool(AGREEMENT.search(text)),
        correction=bool(SELF_CORRECTION.search(text)),
    )


_CONTRAST_EN = rulebook.Joined("cues", "contrast", ("en",), flags=re.IGNORECASE)
_CONTRAST_ZH = rulebook.Joined("cues", "contrast", ("zh",), flags=0)
_ORDINAL = rulebook.Joined("cues", "ordinal", ("en",), flags=re.IGNORECASE)


def contrast_terms(text: str) -> tuple[str, ...]:
    """What a sentence says is *not* (or no longer) the case: "not the 14th", "不是蓝卡",
    "no more quartz", "4.2是去年的". The old value a correction or revision replaces."""
    out: list[str] = []
    latin, cjk = scripts(text)
    if latin:
        for m in _CONTRAST_EN.finditer(text):
            token = m.group(1).rstrip(".,'")
            first = token.split()[0]
            # Keep a second word only when it is part of a name ("New York").
            if len(token.split()) > 1 and not token.split()[1][:1].isupper():
                token = first
            ordinal = _ORDINAL.match(token)
            out.append(ordinal.group(1) if ordinal else token)
    if cjk:
        for m in _CONTRAST_ZH.finditer(text):
            token = next(g for g in m.groups() if g)
            token = re.sub(r"^(?:那个|这个|那种|这种|是)", "", token).strip()
            if token:
                out.append(token)
    return tuple(t for t in out if len(t) >= 2 or t.isdigit())


_NEGATED = rulebook.Joined("cues", "negated", flags=re.IGNORECASE)


def negated(text: str) -> bool:
    """Polarity of a requirement: does it forbid rather than ask for something?"""
    return bool(_NEGATED.search(text))
