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
from functools import lru_cache

from policies import rulebook
from policies.language.idioms import mask_idioms

_I = re.IGNORECASE
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

CONFIRM = re.compile(
    r"^(?:yes|yep|yeah|yup|sure|ok(?:ay)?|correct|right|exactly|perfect|great|good|sounds good"
    r"|that'?s right|agreed|deal|do it|go ahead|let'?s do (?:it|that)|works for me|fine|confirmed"
    r"|looks good|lgtm|that works|cool|nice|好|好的|好嘞|行|可以|对|对的|是的|是|没错|就这么办"
    r"|就这样|就按这个来|就这么定了?|同意|嗯+|没问题|可以的|就它了)(?:[\s,.!~。！，、]+(?:thanks?"
    r"|thank you|please|go ahead|do it|that works|sounds good|perfect|great|谢谢|就这么办|就这样"
    r"|没问题|可以|好的))*"
    r"[\s.!~。！，]*$",
    _I,
)
REJECT = re.compile(
    r"^(?:no\b|nope\b|not really\b|keep (?:it|the old|the original)|let'?s keep\b|不是|不对|不行|"
    r"还是按原来|保持原样|还是原来的|先不改|不[，,。!！]|不要改)",
    _I,
)

QUESTION_START = re.compile(
    r"^(?:what|how|why|when|where|which|who|whose|should|shall|can|could|would|will|is|are|am"
    r"|do|does|did|was|were|has|have)\b",
    _I,
)
QUESTION_ZH = re.compile(
    r"[吗么呢]$|什么|怎么|为什么|哪(?:个|些|里|儿|家|种)|多少|几(?:个|点|天|号|种)|是否|要不要|"
    r"能不能|会不会|是不是|有没有|好不好|对不对|可不可以|行不行|值不值|够不够|如何|咋"
    r"|([\u4e00-\u9fff])不\1(?![\u4e00-\u9fff]{0,2}[了的])"
)

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
_RECAP_EN = re.compile(
    r"\b(?:list|summary|summari[sz]e|recap|rundown|round-?up|overview|brief|bible|checklist"
    r"|write-?up|cheat ?sheet|run ?through|go over|(?:give|tell) (?:me|us) (?:the|all) rules)\b",
    re.IGNORECASE,
)
_RECAP_ALL_EN = re.compile(
    r"\b(?:complete|full|final|entire|whole|everything|all (?:the|of|our|my)|every (?:rule|term"
    r"|requirement|constraint)|as (?:it|they) stands?|(?:we(?:'ve)?|we have) (?:agreed|settled"
    r"|decided|landed)|current)\b",
    re.IGNORECASE,
)
_RECAP_ZH = re.compile(
    r"(?:完整|全部|所有|最终|整体)[^。！？]{0,40}(?:列|整理|总结|汇总|梳理|清单)"
)
# Not "你给我的所有报价和对比都用列表": what you give me, a rule about every answer.
_RECAP_ASK_ZH = re.compile(r"帮我(?!的)|给我(?!的)|你把|麻烦你|请你|你(?:再)?(?:列|整理|总结)")


def recap_request(text: str) -> bool:
    """Does `text` ask for a recap of what was agreed?"""
    latin, cjk = scripts(text)
    if latin and _RECAP_EN.search(text) and _RECAP_ALL_EN.search(text):
        return True
    return cjk and bool(_RECAP_ZH.search(text)) and bool(_RECAP_ASK_ZH.search(text))


CONTINUATION = Lexicon.named("cues", "continuation")

FILLER = re.compile(
    r"^(?:(?:oh|and|also|so|btw|by the way|anyway|plus|ok(?:ay)?|alright|well|yes|yeah|yep|right"
    r"|good|great|perfect|nice|cool|sure|fine|thanks|thank you|ha(?:ha)*|hi|hey|hello|morning"
    r"|one more thing|oh and btw|ah|hmm+|um+|uh|ooh|ugh|oops|wait|whoa|aha|lol)"
    r"(?:[,!.:;]\s*|\s+(?=and |also |so |btw |by the way|one more))"
    r"|(?:oh|and|also|so|btw|plus)\s+)+"
    r"|^(?:(?:你好|您好|老师你好|老师好|好的|好|嗯+|行|可以|对了|另外|还有|还有个事|还有一点|还有就是|此外"
    r"|然后|那|哎呀|哎|唉|哇|天哪|天啊|哈哈+|是的|对|OK|ok)[，,。！!：:\s]+)+",
    _I,
)


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
_FEARED = re.compile(
    r"(?<![恐哪])(?:怕|担心|害怕|生怕|以免|免得|省得)[^，。；,;！？!?]*"
    r"|\b(?:in case|for fear|afraid|worried|lest)\b[^,.;!?]*"
)
# "Now" opening a new topic ("Now, the hotel:", "Now a boring but important thing:",
# "现在说说住宿") moves the talk on; it says nothing changed. Only a verbless lead-in
# ended by a comma, colon or dash counts: "Now it's 3 nights" and "Now the budget is
# $500" still mark a change.
_TOPIC_NOW = re.compile(
    r"(?:^|(?<=[.!?]\s))\W*now\b,?\s+"
    r"(?!(?:[\w'’$-]+\s+){0,5}?(?:is|are|was|were|be|been|it'?s|we'?re|i'?m|they'?re|that'?s"
    r"|there'?s|have|has|had|need|needs|want|wants|can|could|will|would|should|must|let'?s"
    r"|make|makes|go|goes|going|get|gets|got|do|does|did|costs?|takes?|stays?|moves?"
    r"|[\w'’]+ed|[\w]+n['’]t)\b)"
    r"(?:[^\s,:;—–.!?]+\s+){0,5}[^\s,:;—–.!?]+\s*[,:;—–]"
    r"|现在(?=(?:来|再|先)?(?:说说|说一下|聊聊|聊一下|讲讲|讲一下|看看|看一下|轮到))",
)


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


_DECLINING = re.compile(
    r"[^，。；,;]*(?:我|我们)(?:也)?(?:不打算|没打算|不想|不会)(?:去)?(?:强求|勉强|管|跟进|照办)[^，。；,;]*"
    r"|[^，。；,;]*(?:跟|和|与)(?:我|我们)(?:没关系|无关)[^，。；,;]*"
)


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
_THIRD_PERSON_HABIT = re.compile(
    r"(?:^|[，,。；])[^，,。；我你]{0,6}(?:他|她|它|他们|她们)[^，,。；我你]{0,8}"
    r"(?:以后|今后|往后|每次|每回|一直|每[条个封篇])"
)
_HABIT_WORDS = re.compile(r"以后|今后|往后|每次|每回|每[条个封篇]")


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


_CONTRAST_EN = re.compile(
    r"\b(?:not|no more|instead of|rather than|isn'?t|wasn'?t|no longer"
    r"|forget(?: about)?(?= (?:the |my |our |that )?[$€£]?\d))"
    r" (?:the |a |an |my |our |that |those |these |on |in |at )?"
    r"(?!sure\b|really\b|much\b|only\b|just\b|even\b|that\b|too\b|quite\b|yet\b|ours\b|mine\b|a\b"
    r"|going\b|working\b|the\b)"
    r"([A-Za-z0-9$€£][\w'$€£-]*(?:[.,]\d+)*(?: (?!and\b|or\b|but\b|so\b)[A-Za-z0-9][\w'-]*)?)",
    re.IGNORECASE,
)
_CONTRAST_ZH = re.compile(
    r"(?:不是|而不是|不用|不要|别再?)([^，。；,;、！!？?]{1,8}?)(?:了|[，,。；]|而是|是(?!不是))"
    r"|(?:之前说的|原来的|刚才说的|以前的)([^，。；,]{1,8}?)(?:是|不对|不是|记错|错了)"
    r"|([\d.]+[^\d\s，。；,]{0,3})是(?:去年|之前|以前|上次|原来)的"
)
_ORDINAL = re.compile(r"^(\d+)(?:st|nd|rd|th)$", re.IGNORECASE)


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


_NEGATED = re.compile(
    r"\b(?:no|not|never|don'?t|do not|without|avoid|stop)\b"
    r"|不要|别|不能|禁止|不用|不再|没有|不吃|不准",
    _I,
)


def negated(text: str) -> bool:
    """Polarity of a requirement: does it forbid rather than ask for something?"""
    return bool(_NEGATED.search(text))


# --- small talk ---------------------------------------------------------------------
# Social moves that carry no requirement or fact: greetings, thanks, agreement,
# reactions to the other side's news ("That must have been awesome!", "Sounds
# like fun", "太棒了"). A sentence is small talk when it makes one of these
# moves and, once the move's own words and any name it addresses are set aside,
# at most one content word is left ("It must have been special at your wedding").
_SOCIAL_EN = re.compile(
    r"\b(?:hey|hi|hiya|hello|yo|howdy|good (?:morning|afternoon|evening|night)|long time no"
    r" (?:see|chat|talk)|bye|goodbye|see (?:you|ya)|talk soon|take care|cheers|thanks|thank you"
    r"|thx|ty|appreciate|congrat\w*|agree[ds]?|totally|absolutely|exactly|indeed|glad|happy for"
    r"|proud of|sorry to hear|wow|whoa|woo+hoo+|yay|aww+|oh+|ooh+|omg|haha+|lol|hah|ugh|phew"
    r"|sounds?|looks?|seems?|must(?:'ve| have) been|must have|can'?t wait|no worries"
    r"|you'?re welcome|my pleasure|same here|me too|so do i|great to (?:hear|see|chat|talk)"
    r"|nice to (?:hear|see|chat|talk|meet))\b",
    re.IGNORECASE,
)
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
_SOCIAL_ZH = re.compile(
    r"哈哈+|嘿嘿|你好|您好|嗨|早上好|晚上好|好久不见|回头聊|拜拜|再见|谢谢|多谢|感谢|辛苦了|不客气"
    r"|恭喜|太棒了?|真棒|好棒|厉害|不错|真好|太好了|好的|加油|同意|没错|确实|是啊|对啊|听起来"
    r"|哇+|天哪|天啊|羡慕|开心"
)
_VOCATIVE = re.compile(
    r"(?:^|[,，]\s*|\b(?i:hey|hi|hello|thanks|thank you|yo|dear|bye|wow|woo+hoo+|yay|aww+|oh"
    r"|congrats)[,!]?\s+)"
    r"([A-Z][a-z]+)(?=\s*(?:[,!.?~…]|$))"
)
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
