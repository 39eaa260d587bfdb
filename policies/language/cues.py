"""zh/en cue lexicons: how people state, revise and revoke requirements.

Each category maps phrasings to a strength (3 strong, 2 medium, 1 weak).
Weak cues never make a sentence memorable on their own; they only add up
with values, topical relevance or other cues. Both languages are applied
to every sentence because real messages mix them ("SQL以后就别贴了").

The lists are about *phrasing*, not about any domain: "from now on",
"以后每次", "no X", "不要", "改成", "instead", "不用…了" occur whatever the
conversation is about. The few topical words (allergies, diets, budget)
are there because they make a sentence binding in any setting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache, lru_cache

from policies import rulebook
from policies.language.idioms import mask_idioms

# The speaker fixes something they said ("sorry, I meant…", "是我记错了"): always
# worth keeping, and it replaces what it corrects. Choices made or leaned towards
# ("we're going with X", "还是让她上公立小学"): a later one replaces an earlier one.
# Both are rows of the weighted tables below, also run on their own, either script.
SELF_CORRECTION = rulebook.Joined("cues", "change.self_correction", flags=re.IGNORECASE)
DECISION = rulebook.Joined("cues", "preference.decision", flags=re.IGNORECASE)

_LATIN_RE = re.compile(r"[A-Za-z]")
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=8192)
def scripts(text: str) -> tuple[bool, bool]:
    """(has Latin letters, has CJK characters)."""
    return bool(_LATIN_RE.search(text)), bool(_CJK_RE.search(text))


class Lexicon:
    """A cue pattern in two scripts; each half only runs on text of its script.

    Most sentences are in one language, so this halves the regex work; the
    English half is case-insensitive unless told otherwise. A named lexicon
    (`Lexicon.named`) is a rule kept as data in `policies/rules/<lang>/<module>.yaml`,
    read and compiled on first use.
    """

    __slots__ = ("_en", "_rule", "_zh")

    def __init__(self, en: str = "", zh: str = "", flags: int = re.IGNORECASE) -> None:
        self._rule: tuple[str, str] | None = None
        self._en = re.compile(en, flags) if en else None
        self._zh = re.compile(zh) if zh else None

    @classmethod
    def named(cls, module: str, name: str) -> Lexicon:
        """The rule `name` of `module`'s data files, loaded when first used."""
        lexicon = cls()
        lexicon._rule = (module, name)
        return lexicon

    def _load(self) -> None:
        if self._rule is not None:
            module, name = self._rule
            self._en = rulebook.compiled(module, "en", name)
            self._zh = rulebook.compiled(module, "zh", name)
            self._rule = None

    @property
    def en(self) -> re.Pattern[str] | None:
        self._load()
        return self._en

    @property
    def zh(self) -> re.Pattern[str] | None:
        self._load()
        return self._zh

    def search(self, text: str) -> re.Match[str] | None:
        if self._rule is not None:
            self._load()
        latin, cjk = scripts(text)
        found = self._en.search(text) if latin and self._en is not None else None
        if found is None and cjk and self._zh is not None:
            found = self._zh.search(text)
        return found

    def match(self, text: str) -> re.Match[str] | None:
        if self._rule is not None:
            self._load()
        latin, cjk = scripts(text)
        found = self._en.match(text) if latin and self._en is not None else None
        if found is None and cjk and self._zh is not None:
            found = self._zh.match(text)
        return found


class Table:
    """Cue rows by strength, strongest first: (weight, Lexicon) pairs.

    A named table (`Table.named`) is built from the rows kept as data
    (`policies/rules/<lang>/<module>.yaml`, rules with `table:` and `weight:`),
    on first use.
    """

    __slots__ = ("_named", "_rows")

    def __init__(self, rows: tuple[tuple[int, Lexicon], ...] = ()) -> None:
        self._rows = rows
        self._named: tuple[str, str] | None = None

    @classmethod
    def named(cls, module: str, name: str) -> Table:
        table = cls()
        table._named = (module, name)
        return table

    def _load(self) -> tuple[tuple[int, Lexicon], ...]:
        if self._named is not None:
            rows = rulebook.table_rows(*self._named)
            self._rows = _joined((weight, source) for weight, _lang, source in rows)
            self._named = None
        return self._rows

    def __iter__(self) -> Iterator[tuple[int, Lexicon]]:
        return iter(self._load())

    def __getitem__(self, index: int) -> tuple[int, Lexicon]:
        return self._load()[index]


def _joined(rows: Iterable[tuple[int, str]]) -> tuple[tuple[int, Lexicon], ...]:
    """Rows of one strength are joined into one alternation per script, strongest first."""
    by_weight: dict[int, tuple[list[str], list[str]]] = {}
    for weight, pattern in rows:
        en, zh = by_weight.setdefault(weight, ([], []))
        (zh if _CJK_RE.search(pattern) else en).append(f"(?:{pattern})")
    # Table patterns are written in lower case and run on lower-cased text
    # (see `_strength`): much faster than IGNORECASE on long alternations.
    return tuple(
        (weight, Lexicon("|".join(en), "|".join(zh), flags=0))
        for weight, (en, zh) in sorted(by_weight.items(), reverse=True)
    )


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

# A sentence whose subject is the other party ("they offer…", "Marcus
# replied…") reports a position, it does not state the user's requirement.
REPORTED = Lexicon.named("cues", "reported")
FIRST_PERSON = Lexicon.named("cues", "first_person")
# Standing instructions survive even when phrased as a question ("Can you
# always give prices in yen from now on?").
STANDING = Lexicon.named("cues", "standing")
# The user taking up what someone else asked for or offered: "…wants $45 per
# lesson; he's good, so we'll pay that", "we said yes", "fine by us", "就按她说的来",
# "那就给他涨到五千吧". Not the user's own proposal ("we'll do the venue tour").
ACCEPTED = Lexicon.named("cues", "accepted")
AGREEMENT = Lexicon.named("cues", "agreement")


class _Confirm:
    """A reply that only confirms ("yes, thanks", "好的，谢谢"): the confirm words of both
    files (fragments confirm_head, confirm_tail of policies/rules/<lang>/cues.yaml) in one
    frame, English first, since a reply may mix scripts ("好的 thanks"); compiled on first
    use. The rules `confirm` of each file hold the examples."""

    __slots__ = ()

    @property
    def compiled(self) -> re.Pattern[str]:
        return _confirm()

    def match(self, text: str) -> re.Match[str] | None:
        return _confirm().match(text)


@cache
def _confirm() -> re.Pattern[str]:
    head = "|".join(rulebook.fragment("cues", lang, "confirm_head") for lang in ("en", "zh"))
    tail = "|".join(rulebook.fragment("cues", lang, "confirm_tail") for lang in ("en", "zh"))
    return re.compile(rf"^(?:{head})(?:[\s,.!~。！，、]+(?:{tail}))*[\s.!~。！，]*$", re.IGNORECASE)


CONFIRM = _Confirm()
REJECT = rulebook.Joined("cues", "reject", flags=re.IGNORECASE)

QUESTION_START = rulebook.Joined("cues", "question_start", ("en",), flags=re.IGNORECASE)
QUESTION_ZH = rulebook.Joined("cues", "question_words", ("zh",), flags=0)

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

# "Give me the complete list of everything we settled", "把所有要求完整列一遍": a
# request to recap memory. It and its qualifiers ("only what's current", "以最新
# 的为准，改过的别列了") are about the answer, not new requirements or revocations.
_RECAP_EN = rulebook.Joined("cues", "recap_list", ("en",), flags=re.IGNORECASE)
_RECAP_ALL_EN = rulebook.Joined("cues", "recap_whole", ("en",), flags=re.IGNORECASE)
_RECAP_ZH = rulebook.Joined("cues", "recap_whole_list", ("zh",), flags=0)
# Not "你给我的所有报价和对比都用列表": what you give me, a rule about every answer.
_RECAP_ASK_ZH = rulebook.Joined("cues", "recap_asked", ("zh",), flags=0)


def recap_request(text: str) -> bool:
    """Does `text` ask for a recap of what was agreed?"""
    latin, cjk = scripts(text)
    if latin and _RECAP_EN.search(text) and _RECAP_ALL_EN.search(text):
        return True
    return cjk and bool(_RECAP_ZH.search(text)) and bool(_RECAP_ASK_ZH.search(text))


CONTINUATION = Lexicon.named("cues", "continuation")

FILLER = rulebook.Joined("cues", "filler", flags=re.IGNORECASE)


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


# "My friend asked if…", "小杨问我能不能…": a question, only reported.
_ASKED = Lexicon.named("cues", "asked")


def asked(text: str) -> bool:
    """A question someone else asked, reported by the user: answered, not remembered."""
    return bool(_ASKED.search(text))


# "Why did you mark it urgent? Urgency is Omar's call": a challenge, not a question to
# answer; what follows it is the correction, not an elaboration of a question.
CHALLENGE = Lexicon.named("cues", "challenge")


# "Annual billing gets 2 months free, right?", "定金就收三成，没问题吧？": a statement
# put up for a nod. What comes before the tag is the user's proposal, not a question.
_CHECK_TAG = Lexicon.named("cues", "check_tag")


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


_PREAMBLE = re.compile(r"^[^:：]{1,40}[:：]\s*")


# "My coworker says I should never…", "朋友说我应该…": a peer's advice to the
# user, reported; the user has not adopted it (an authority's ruling, "the
# vet says no dairy", is not advice from a peer and stays a requirement).
_PEER_ADVICE = Lexicon.named("cues", "peer_advice")


# "我同事去年把她的猫寄养了两周…", "A friend of mine once did a 10-day cruise…": what
# happened to someone else, told as a story; its values are theirs, not the plan's.
_ANECDOTE = Lexicon.named("cues", "anecdote")


def _reported(text: str) -> bool:
    # "Price: they quoted $196,000" reports as much as "They quoted…".
    body = _PREAMBLE.sub("", text, count=1)
    if _PEER_ADVICE.search(text) or _PEER_ADVICE.search(body):
        return True
    if _ANECDOTE.search(text):
        return True
    if not (REPORTED.search(text) or REPORTED.search(body)):
        return False
    # "王老师说想让每个人都写寄语，不过…我不打算强求": the user declining to act on
    # the wish adopts nothing; it stays the other party's.
    return not FIRST_PERSON.search(_DECLINING.sub("", text))


_DECLINING = rulebook.Joined("cues", "declining", ("zh",), flags=0)


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
    reported = _reported(text)
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


def strip_filler(text: str) -> str:
    """Drop leading interjections ("Oh and btw", "对了，") that carry no content."""
    out = FILLER.sub("", text, count=1).strip()
    return out or text.strip()


_NEGATED = rulebook.Joined("cues", "negated", flags=re.IGNORECASE)


def negated(text: str) -> bool:
    """Polarity of a requirement: does it forbid rather than ask for something?"""
    return bool(_NEGATED.search(text))


# --- small talk ---------------------------------------------------------------------
# Social moves that carry no requirement or fact: greetings, thanks, agreement,
# reactions to the other side's news ("That must have been awesome!", "Sounds
# like fun", "太棒了"). A sentence is small talk when it makes one of these
# moves and, once the move's own words and any name it addresses are set aside,
# at most one content word is left ("It must have been special at your wedding").
_SOCIAL_EN = rulebook.Joined("cues", "social", ("en",), flags=re.IGNORECASE)
# Words of the moves above and of the reactions they come with: set aside
# before counting what is left.
_SOCIAL_WORDS = frozenset(
    """hey hi hiya hello yo howdy good morning afternoon evening night long time see chat talk
    bye goodbye ya soon take care cheers thanks thx ty appreciate appreciated congrats
    congratulations agree agreed agrees totally absolutely exactly indeed glad happy proud
    sorry hear wow whoa yay aww oh ooh omg haha hah lol ugh phew sound sounds look looks seem
    seems been wait worries welcome pleasure same too great nice cool awesome amazing
    wonderful fantastic fabulous lovely beautiful brilliant incredible impressive inspiring
    fun exciting excited interesting special breathtaking stunning gorgeous cute sweet kind
    thoughtful tough hard rough scary traumatizing awful terrible sad crazy wild neat super
    really truly definitely sure true right yeah yep yes ok okay alright real life blast
    dear buddy friend guys man wish luck best again back meet know news thing things
    moment experience glad day tell said woohoo hope enjoy wanted say""".split()
)
_SOCIAL_ZH = rulebook.Joined("cues", "social", ("zh",), flags=0)
_VOCATIVE = rulebook.Joined("cues", "vocative", ("en",), flags=0)
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_ZH_CHAR = re.compile(r"[\u3400-\u9fff]")


def addressed_names(text: str) -> list[str]:
    """The names `text` addresses its listener by ("Thanks, Mel!" -> ["Mel"])."""
    return _VOCATIVE.findall(text)


def strip_vocatives(text: str) -> str:
    """`text` without the names it addresses its listener by ("Thanks, Mel!")."""
    return _VOCATIVE.sub(" ", text)


def small_talk(text: str) -> bool:
    """A greeting, thanks, agreement or reaction with (almost) nothing else in it."""
    latin, cjk = scripts(text)
    if cjk and not latin:
        moves = _SOCIAL_ZH.findall(text)
        rest = _SOCIAL_ZH.sub("", text)
        rest = re.sub(r"[我你他她它们的了吧呀啊呢吗嘛也都真很太好是就这那个]", "", rest)
        return bool(moves) and len(_ZH_CHAR.findall(rest)) <= 2
    if not latin or not _SOCIAL_EN.search(text) or re.search(r"\d", text):
        return False
    core = _VOCATIVE.sub(" ", text)
    words = [w.lower().strip("'") for w in _WORD.findall(core)]
    left = [
        w
        for w in words
        if w not in _SOCIAL_WORDS
        and w.split("'")[0] not in _SOCIAL_WORDS
        and w.split("'")[0] not in _SMALL_FUNCTION_WORDS
    ]
    return len(left) <= 1


# Function words (the engine's stopword list plus a few) for `small_talk`.
_SMALL_FUNCTION_WORDS = frozenset(
    """a an the and or but if of to in on at for with from by as is are was were be been being
    it its this that these those i me my we our you your he she they them his her their do
    does did have has had will would can could should must may might so then than there here
    what how all any some just also too very about up out again more most such only own s t
    don now let lets that's it's i'm you're we're what's how's there's must've i'd i'll
    i've you've you'll am such an much""".split()
)
