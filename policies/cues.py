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
from dataclasses import dataclass
from functools import lru_cache

_I = re.IGNORECASE
_MONTHS = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_WEEKDAYS = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_OUTPUTS = (
    r"(?:answers?|repl(?:y|ies)|responses?|messages?|recipes?|legs?|prices?|functions?|"
    r"comments?|tests?|emails?|drafts?|counter-proposals?|proposals?|timestamps?|amounts?|"
    r"numbers?|dates?|plans?|steps?|examples?|files?|charts?|tables?|summar(?:y|ies)|code|"
    r"outputs?|suggestions?|options?|reports?|queries|query|commits?|classes|methods?|"
    r"endpoints?|slides?|posts?|captions?|translations?|explanations?|problems?|exercises?|"
    r"itinerar(?:y|ies)|meals?|menus?|lists?|quotes?|estimates?)"
)

_LATIN_RE = re.compile(r"[A-Za-z]")
_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=8192)
def scripts(text: str) -> tuple[bool, bool]:
    """(has Latin letters, has CJK characters)."""
    return bool(_LATIN_RE.search(text)), bool(_CJK_RE.search(text))


class Lexicon:
    """A cue pattern in two scripts; each half only runs on text of its script.

    Most sentences are in one language, so this halves the regex work; the
    English half is case-insensitive unless told otherwise.
    """

    __slots__ = ("en", "zh")

    def __init__(self, en: str = "", zh: str = "", flags: int = re.IGNORECASE) -> None:
        self.en = re.compile(en, flags) if en else None
        self.zh = re.compile(zh) if zh else None

    def search(self, text: str) -> re.Match[str] | None:
        latin, cjk = scripts(text)
        found = self.en.search(text) if latin and self.en is not None else None
        if found is None and cjk and self.zh is not None:
            found = self.zh.search(text)
        return found

    def match(self, text: str) -> re.Match[str] | None:
        latin, cjk = scripts(text)
        found = self.en.match(text) if latin and self.en is not None else None
        if found is None and cjk and self.zh is not None:
            found = self.zh.match(text)
        return found


Table = tuple[tuple[int, Lexicon], ...]


def _table(*rows: tuple[int, str]) -> Table:
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


DIRECTIVE = _table(
    (3, r"\bfrom (?:now|here|this point|today) on(?:wards?)?\b|\bgoing forward\b|\bfrom now\b"),
    (3, r"\bfor the rest of (?:the|this|our) \w+|\bin future\b|\bin the future\b"),
    (
        3,
        r"^(?:please )?always\b|\b(?:you|please) (?:\w+ )?always\b|\balways (?:give|use|write"
        r"|answer|reply|respond|include|add|put|quote|show|list|start|end|mention|keep|check|flag"
        r"|mark|ask|cite|round|convert|format|draft|double-check)\b"
        r"|\b(?:every|each) time (?:you|we)\b|\bwhenever (?:you|we|i)\b",
    ),
    (
        3,
        rf"\b(?:every|each|all|any|for all|in all|in any) (?:(?!and\b|or\b)[\w-]+ ){{0,2}}"
        rf"{_OUTPUTS}\b",
    ),
    (
        3,
        r"\b(?:team|working|house|standing|ground|golden) (?:rule|convention|instruction)s?\b"
        r"|\brule of thumb\b|\bconventions?\b|^(?:one|another|a|new|our) rule\b",
    ),
    (
        2,
        r"\bmake sure\b|\bremember to\b|\bby default\b|\bdefault to\b|\bstick to\b"
        r"|\bone (?:request|thing)\b|\ba request\b|\bkeep (?:it|them|answers|replies|things)"
        r" (?:short|brief|concise|factual|simple|under)\b",
    ),
    (
        2,
        r"^(?:please )?(?:give|write|use|put|quote|flag|keep|add|include|mark|answer|reply|"
        r"respond|format|list|show|draft|post|label|sort|round|convert|cite|call|refer|send|make"
        r"|avoid|stick|mention|name|address|sign|spell|translate|explain|assume|treat|cap|limit)\b",
    ),
    (
        3,
        r"以后|今后|往后|从现在(?:开始|起)|从今天(?:开始|起)|接下来(?:都|的|每)|"
        r"后面(?:都|的回答|就|直接|统一)|之后(?:都|每|的回答|所有|一律)|每次|每回|一律|"
        r"始终|一直(?:都|用|按)|务必|记得|规矩|习惯(?![了惯])",
    ),
    (3, r"每(?:个|道|份|条|篇|张|一)[^，。；,;]{0,8}都|所有(?:的)?[^，。；,;]{0,6}都"),
    (2, r"之后|接下来|后面[^，。；]{0,12}就行|默认|尽量|统一|规则|原则"),
    (1, r"总是"),
)

CONSTRAINT = _table(
    (
        3,
        r"\bmust(?:n'?t| not)?\b|\b(?:ha(?:ve|s)|needs?) to be\b|\b(?:we|i|you) (?:\w+ )?"
        r"(?:ha(?:ve|s)|needs?) to\b|^(?:ha(?:ve|s)|needs?) to\b|\brequired\b|\bmandatory\b",
    ),
    (
        3,
        r"^(?:please )?never\b|\b(?:you|we|i)(?:'ll| will| should| must| can)? never\b|\bnever "
        r"(?:use|give|write|include|add|put|mention|share|send|book|schedule|suggest|recommend|ask"
        r"|call|show|reply|answer|post|commit|push|merge|deploy|touch|change|assume|guess|round)\b"
        r"|[,;:(] ?(?:but |and |just )?never\b"
        r"|\b(?=d)(?<!they )(?<!he )(?<!she )(?<!it )don'?t\b(?! (?:know|think|care|mind|remember"
        r"|understand|see|worry|get it|trust|believe|feel|have time|really|like))"
        r"|\bdo not\b|\bnot allowed\b|\bnot (?:even|ever)\b|\bno (?:more|later|earlier|fewer|less)"
        r" than\b",
    ),
    (
        3,
        r"\bat (?:most|least|the latest|the earliest|minimum|maximum)\b|\bmaximum\b|\bminimum\b"
        r"|\bup to \d",
    ),
    (3, r"\bcap(?:ped|s)?\b|\blimit(?:ed|s)?\b|\bceiling\b|\bdeadline\b|\bbudget\b"),
    (
        3,
        r"\ballerg\w*|\bintoleran\w*|\bvegetarian\b|\bvegan\b|\bhalal\b|\bkosher\b|\bgluten\b"
        r"|\blactose\b|\bpescatarian\b|\bdiabet\w*|\bseasick\w*|\bwheelchair\b"
        r"|\b(?:won'?t|will not|doesn'?t|does not|don'?t|can'?t|cannot|never)"
        r" (?:eat|drink)\b",
    ),
    (
        3,
        r"\binsists?\b|\bnon-negotiable\b|\bred line\b|\bflat no\b|\bfull stop\b"
        r"|\bdeal-?breaker\b|\bhard (?:limit|requirement|rule|constraint|stop)\b"
        r"|\bno exceptions?\b",
    ),
    (
        3,
        r"\bavoid\b|\bexclud\w+|\bforbidden\b|\bprohibited\b|\bnot (?:use|include|add|mention|"
        r"touch|change|exceed)\b",
    ),
    (
        3,
        r"\b(?=no )(?:^|(?<=[,;:(] )|(?<=[,;:(])|(?<=\bso )|(?<=\band )|(?<=\bbut )|(?<=\bwith )"
        r"|(?<=\balso )|(?<=\babsolutely )|(?<=\bstrictly ))no (?!idea\b|problem\b|worries\b"
        r"|rush\b|way\b|doubt\b|one\b|matter\b)[a-z][\w-]*",
    ),
    (
        2,
        r"\bpin(?:ned)?\b|\b(?:we|i|you) (?:can |should |will )?only\b|^only\b|\bonly (?:use"
        r"|show|include|give|look|consider|count|need|want|accept|book|pick|list|take|do)\b"
        r"|\b(?:we|i) can'?t\b|\b(?:we|i) cannot\b|\b(?:we|i) (?:do|does)n'?t have\b"
        r"|\bthere'?s no\b|\bwithout\b|\bwe need\b"
        rf"|\bi need\b|\bby (?:the )?(?:end of )?(?:{_MONTHS} \d|{_WEEKDAYS}|tomorrow|eod|noon)",
    ),
    (1, r"\bnot\b|\b(?:does|is|are|was|were)n'?t\b|\bneeds?\b|\bonly\b|\bcan'?t\b|\bcannot\b"),
    (
        3,
        r"不要|不许|不准|不能|不可以|(?<!舍)不得|禁止|必须|一定要|千万|"
        r"(?<![分特区级类告识性差个派])别(?![人的墅针扭名致说])",
    ),
    (
        3,
        r"最多|至多|最少|至少|不超过|不高于|不低于|不少于|以内|上限|下限|封顶|截止|"
        r"之前(?:完成|交|提交|发|给)|前(?:完成|交付|提交|发|交|给|做完|弄好|准备好)|最晚|最迟"
        r"|底线|红线",
    ),
    (
        3,
        r"过敏|忌口|不吃|不喝|吃素|素食|清真|控糖|控盐|无糖|低糖|孕期|怀孕|糖尿病|高血压|痛风"
        r"|轮椅",
    ),
    (3, r"不让|不允许|排除|剔除|别碰|不碰|只(?:看|用|要|能|吃|做|算|给|按|需|选|找|订|留)"),
    (
        2,
        r"没有(?!什么|人|问题|办法|关系|必要)|预算|不用|不需要|不必|只|仅|限(?:制|定|于)|需要"
        r"|得(?=[先把用])",
    ),
    (1, r"要(?!不要|是)"),
)

PREFERENCE = _table(
    (
        2,
        r"\bprefer\w*|\b(?:would|'d) rather\b|\brather than\b|\bideally\b|\bfavou?rite\b"
        r"|\bnot (?:big|keen) on\b|\bfan of\b|\bbetter if\b|\b(?:we|i)(?:'d| would) (?:like|love)\b"
        r"|\b(?:we|i|she|he|they) (?:really )?(?:like|love|hate|dislike|enjoy)s?\b",
    ),
    (1, r"\bwants?\b|\bhoping\b"),
    (2, r"喜欢|偏好|偏爱|倾向|更想|更愿意|希望|想要|讨厌|宁愿|宁可|爱吃|口味|最好|优先"),
)

REVOKE = Lexicon(
    r"\bno longer\b|\b(?:you can |please |just )?stop \w+ing\b|\bno need to\b|\bno more\b"
    r"|\bdon'?t (?:need|have) to\b[^.;]*\b(?:anymore|any more)\b|\bdrop (?:the|that|this) "
    r"(?:\w+ )?(?:rule|requirement|format|instruction|thing)\b|\bforget (?:about )?(?:the|that|it"
    r"|my|what)\b|\bscratch (?:that|it|the)\b|\bnever ?mind\b|\bcancel (?:that|the|it)\b"
    r"|\b(?:remove|lift|drop) (?:that|the) (?:\w+ )?(?:rule|restriction|constraint|limit)\b"
    r"|\banymore\b|\bany more\b|\bignore (?:what i said|that rule|my earlier|the earlier|the "
    r"previous)\b|\bnot needed\b|\bdisregard\b",
    r"不用再|不要再|别再|不再|不必再|无需再|取消|作废|算了|撤销|撤回|就别[^，。；,;]{0,10}了"
    r"|不用[^，。；,;]{0,12}了|不需要[^，。；,;]{0,10}了|不必[^，。；,;]{0,10}了|别[^，。；,;]{0,8}了"
    r"|去掉(?:这条|那条|这个要求)|忽略(?:之前|刚才|前面)",
)

CHANGE = _table(
    (
        2,
        r"\binstead\b(?! of)|\bchange (?:it |that |this |the \w+ )?to\b|\bchanged? (?:it |that )?to"
        r"\b|\b(?:let'?s )?make (?:it|that) (?:\d+|a|an|one|two|three|four|five|six|seven"
        r"|eight|nine|ten)\b|\bswitch(?:ed|ing)? (?:it |that |over |everything )?to\b"
        r"|\bmov(?:e|ed|ing) (?:\w+ ){0,4}to\b|\brolls? into\b|\bafter all\b|\bcorrection\b"
        r"|\bi meant\b|\bnot \w+"
        r"(?: \w+)?,? but\b|\b(?:we'?re|we are) (?:now )?on\b|\bchange of plans?\b|\bchange on\b"
        r"|\bnew plan\b|\brevis\w+|\b(?:bump|raise|lower|reduce|cut|push|increase|decrease|extend"
        r"|shorten)(?:ed)? (?:it |that |the \w+ )?(?:up |down |back )?to\b|\b(?:go|going|switch"
        r"|switching|revert|reverting|change|changing|move|moving)(?: it| that)? back to\b"
        r"|\bback to (?:the )?(?:original|old|previous|earlier|first)\b|\bupgrad"
        r"\w+|\bwe'?re going (?:for|with)\b|\bon second thought\b|\bscratch that\b|\bno wait\b"
        r"|\bchanges?:|\banother change\b|\bplans? changed\b|\bupdate:|\bmigrat\w* to\b"
        r"|\b(?:keep|set|leave) (?:it|that|them) (?:at|to)\b|\b(?:let'?s|we'?ll|we"
        r" will|i'?ll) go with\b|\bwe'?re going with\b",
    ),
    (
        1,
        r"\bactually\b|\bhold on\b|\bwait\b|\bupdate\b|\bnews\b|\brethinking\b"
        r"|\binstead of\b|, not \w",
    ),
    (
        2,
        r"改成|改为|改到|改一下|换成|换到|换为|调整为|调整成|调整到|调成|调到|压到|降到|降为|提到|"
        r"提高到|增加到|增到|减到|减少到|缩短到|延长到|推迟到|提前到|挪到|移到|还是用|还是按|还是改|"
        r"改回|说错了|记错了|写错了|搞错了|打错了|口误|更正|纠正|其实是|实际上是|应该是|变成|情况有变|"
        r"还是[^，。；？?]{1,8}吧|放宽到|收紧到|放到|加到|涨到|降低到|减少到|缩减到|控制在|定成|定为|"
        r"升级到|升到|迁移到|迁到|切到|改用|换用|"
        r"不是[^，。；]{1,12}[，,]\s*(?:是|而是)|"
        r"有变化|有变|变了|重新定|以[^，。]{0,6}为准|不是[^，。；]{1,12}[，,]?而是",
    ),
    (1, r"现在是|现在改|现在用|目前是|最新"),
)

ASIDE = Lexicon(
    r"\b(?:totally |completely |slightly )?unrelated\b|\bside (?:question|note)\b|\brandom "
    r"(?:question|thought)\b|\bquick (?:trivia|tangent|one)\b|\btrivia\b|\boff[- ]topic\b"
    r"|\bdifferent (?:topic|thing)\b|\bchanging the subject\b|\bwhile i have you\b|\bjokes?\b"
    r"|\bfun fact\b",
    r"顺便问|顺便说|题外话|跟[^，。]{0,8}无关|说个别的|换个话题|笑话|闲聊|扯远了|八卦",
)

# A sentence whose subject is the other party ("they offer…", "Marcus
# replied…") reports a position, it does not state the user's requirement.
REPORTED = Lexicon(
    r"^(?i:they|their|theirs)\b|^(?i:here'?s|here is) what (?i:they|their|his|her)\b"
    r"|^(?:(?i:he|she)|[A-Z][a-z]+(?: [A-Z][a-z]+)?) (?:just |now |also )?(?:replied|said|says|came"
    r" back|called|wrote|emailed|offer(?:s|ed)?|quoted|propos(?:es|ed)|suggest(?:s|ed)|told|asked"
    r"|counter(?:s|ed)?|mentioned|thinks|claims|responded)\b",
    r"^(?:他|她|他们|她们|对方|人家)(?:刚才|刚刚|又|也)?(?:说|回复|表示|提出|报价|反馈|觉得)",
    flags=0,
)
FIRST_PERSON = Lexicon(r"\b(?:we|we're|we'd|we'll|we've|i|i'm|i'd|i'll|i've)\b", r"我")
# Standing instructions survive even when phrased as a question ("Can you
# always give prices in yen from now on?").
STANDING = Lexicon(
    r"\bfrom (?:now|here) on\b|\bgoing forward\b|\bfor the rest of\b|\balways\b|\bevery time\b",
    r"以后|今后|往后|从现在|接下来都|每次",
)
AGREEMENT = Lexicon(
    r"\baccept(?:s|ed)?\b|\bagree(?:s|d)?\b|\bapprov\w+|\bconfirm(?:s|ed)\b|\bsigned\b"
    r"|\bit is[.!]?$|\bit'?s a deal\b|\bwe'?ll (?:take|go with)\b|\bbooked\b|\bsettled\b"
    r"|\bdecided\b",
    r"同意|接受|批准|答应|定了|订好了|已预订|已确认",
)

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
    r"|do|does|did|was|were|any|anything|has|have)\b",
    _I,
)
QUESTION_ZH = re.compile(
    r"[吗么呢]$|什么|怎么|为什么|哪(?:个|些|里|儿|家|种)|多少|几(?:个|点|天|号|种)|是否|要不要|"
    r"能不能|会不会|是不是|有没有|好不好|对不对|可不可以|行不行|值不值|够不够|如何|咋"
)

# Going back to what was there before a change ("actually, back to the
# original plan", "算了，还是按原来的来吧").
RESTORE = Lexicon(
    r"\b(?:go|going|switch|revert|change|move)(?:ing|ed)? back to (?:the )?(?:original|old|previous"
    r"|earlier|first|initial|what (?:we|i) had)\b|\bback to (?:the )?(?:original|old|previous) "
    r"(?:plan|one|version|value|setting)\b|\bundo (?:that|the last) change\b",
    r"还是按原来的|还是用原来的|还是按之前的|还是用之前的|恢复原来的|改回原来的|改回去|按原计划|还是原来那个",
)
# "Keep in mind…", "记一下：…": the user asks for this to be remembered.
MEMO = Lexicon(
    r"\bkeep in mind\b|\bremember that\b|\bnote that\b|\bfor the record\b|\bfyi\b"
    r"|\bjust so you know\b|\bfor reference\b",
    r"记一下|记住|记好|备注一下|你记着|别忘了|提醒一下|提醒你|注意一下",
)
# "You can use requests now", "公司名称可以出现了": a rule relaxed.
PERMISSION = Lexicon(
    r"\byou can (?:now )?(?:use|include|mention|add|go|book|skip|ignore)\b|\bfeel free to\b"
    r"|\b(?:it'?s|that'?s|is|are) (?:fine|ok|okay|allowed) (?:to|now|again)\b|\bgo ahead and\b"
    r"|\b(?:is|are) fine now\b|\bno problem (?:to|with)\b",
    r"可以(?:用|出现|写|提|放|加|带|去)[^，。；]{0,6}了|也可以了|没关系了|随便用|允许[^，。；]{0,6}了",
)
# "My name is Tom", "我叫小林": who the user is.
IDENTITY = Lexicon(
    r"\bmy name is\b|\bi'?m called\b|\bi(?:'m| am) based in\b|\bi live in\b|\bi work (?:at|for"
    r"|as)\b|\bcall me\b|\bmy (?:pronouns|time ?zone) (?:are|is)\b",
    r"我叫|我的名字是|我姓|我住在|我在[^，。]{1,8}(?:工作|上班|上学|读书)|叫我",
)
# "Requirements:", "要求如下：" introduce a list whose lines are all rules.
LIST_HEADER = Lexicon(
    r"\b(?:requirements?|constraints?|rules?|conventions?|must-haves?|guidelines?|criteria|specs?)"
    r"\b[^:]{0,20}:$",
    r"(?:要求|规则|限制|注意事项|约定|需求|条件|规矩)[^：:]{0,6}[：:]$",
)

CONTINUATION = Lexicon(
    r"^(?:instead|just|only|rather|then|otherwise|but)\b",
    r"^(?:先|再|然后|而是|直接|改成|只要|否则)",
)

FILLER = re.compile(
    r"^(?:(?:oh|and|also|so|btw|by the way|anyway|plus|ok(?:ay)?|alright|well|yes|yeah|yep|right"
    r"|good|great|perfect|nice|cool|sure|fine|thanks|thank you|ha(?:ha)*|hi|hey|hello|morning"
    r"|one more thing|oh and btw|ah|hmm+|um+|uh)"
    r"(?:[,!.:;]\s*|\s+(?=and |also |so |btw |by the way|one more))"
    r"|(?:oh|and|also|so|btw|plus)\s+)+"
    r"|^(?:(?:你好|您好|老师你好|老师好|好的|好|嗯+|行|可以|对了|另外|还有|还有个事|还有一点|还有就是|此外"
    r"|然后|那|哎呀|哈哈+|是的|对|OK|ok)[，,。！!：:\s]+)+",
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

    @property
    def requirement(self) -> int:
        return max(self.directive, self.constraint, self.preference)


def _strength(table: Table, text: str) -> int:
    for weight, lexicon in table:
        if lexicon.search(text):
            return weight
    return 0


def is_question(text: str) -> bool:
    stripped = text.rstrip(" 　~～…")
    if stripped.endswith(("?", "？")):
        return True
    latin, cjk = scripts(stripped)
    if latin and QUESTION_START.match(stripped) and len(stripped) < 160:
        return True
    return cjk and bool(QUESTION_ZH.search(stripped)) and not stripped.endswith(("。", "!", "！"))


_PREAMBLE = re.compile(r"^[^:：]{1,40}[:：]\s*")


def _reported(text: str) -> bool:
    # "Price: they quoted $196,000" reports as much as "They quoted…".
    body = _PREAMBLE.sub("", text, count=1)
    return bool(REPORTED.search(text) or REPORTED.search(body)) and not FIRST_PERSON.search(text)


@lru_cache(maxsize=4096)
def read_cues(text: str) -> Cues:
    revoke = REVOKE.search(text)
    reported = _reported(text)
    low = text.lower()
    return Cues(
        directive=_strength(DIRECTIVE, low),
        constraint=_strength(CONSTRAINT, low),
        preference=_strength(PREFERENCE, low),
        change=_strength(CHANGE, low),
        revoke_span=revoke.span() if revoke else None,
        question=is_question(text),
        aside=bool(ASIDE.search(text)),
        reported=reported,
        agreement=bool(AGREEMENT.search(text)),
    )


def strip_filler(text: str) -> str:
    """Drop leading interjections ("Oh and btw", "对了，") that carry no content."""
    out = FILLER.sub("", text, count=1).strip()
    return out or text.strip()


def negated(text: str) -> bool:
    """Polarity of a requirement: does it forbid rather than ask for something?"""
    return bool(
        re.search(
            r"\b(?:no|not|never|don'?t|do not|without|avoid|stop)\b"
            r"|不要|别|不能|禁止|不用|不再|没有|不吃|不准",
            text,
            _I,
        )
    )
