"""Conversational chatter that reads like a rule but binds nobody.

Modal and imperative words ("must", "don't", "make sure", "一定", "别") are
what the extractor reads as requirements. Between friends they mostly carry
something else: a guess at how someone's experience felt ("that must have been
wild", "那一定很好玩吧"), comfort and encouragement ("don't worry, you'll nail
it", "don't ever give up on your music", "别担心，你肯定行的", "别放弃"), advice
about the listener's own life ("you should totally try pottery", "find a coach
who can help you", "你一定要多休息啊"), an offer ("let me know if you need
anything"), a view on society ("we need more kindness in the world", "kids
need good role models") or a thought reported ("it made me think how much we
still have to do", "这让我意识到…"). None of these asks the assistant to do or
respect something about the user's task, so none of them is a working-memory
rule. (Rule words inside a phrase, "never been", "can't wait", are blanked
before the cues are read: `policies.language.idioms`.)

The families are kept narrow on purpose: "it must be under 500 words", "don't
use emojis" and "make sure you cite the ticket" must still read as rules.
"""

from __future__ import annotations

import re

# How an experience must have felt: a guess about someone else's day.
# Only evaluative words follow, so "it must be in JSON" stays a rule.
_FEELING = (
    r"(?:great|amazing|awesome|incredible|wild|cool|fun|hard|tough|exciting|nice|wonderful"
    r"|fantastic|scary|rough|tiring|exhausting|special|rewarding|fulfilling|beautiful|lovely"
    r"|stressful|difficult|interesting|intense|surreal|magical|unforgettable|emotional|sad"
    r"|inspiring|satisfying|relaxing|peaceful|thrilling|a blast|a lot|a ton|quite|such)"
)
_GUESS_EN = re.compile(
    r"\bmust(?:'ve| have) (?:been|felt|had|made|seen|loved)\b|\byou must feel\b"
    r"|\b(?:must|gotta|has to) be (?:a|an|such an?) (?:[a-z]+ )?"
    r"(?:experience|feeling|rush|relief)\b"
    r"|\bmust (?:feel|be)(?: (?:so|really|very|pretty|super|quite|truly|such))? "
    + _FEELING
    + r"\b",
    re.IGNORECASE,
)
# "那一定很好玩吧", "你肯定累坏了吧", "一定很有成就感": 一定/肯定 + degree word + feeling.
_GUESS_ZH = re.compile(
    r"(?:一定|肯定|应该)(?:很|超|特别|非常|挺|蛮|好|是)?(?:好玩|有趣|开心|累|辛苦|难|不容易|棒"
    r"|美|爽|刺激|难忘|激动|感动|有成就感|过瘾|值得|难过|紧张|兴奋)"
    r"|(?:累坏了|玩疯了|美极了)吧"
)
# Comfort and encouragement: what a friend says to lift the other up.
_ENCOURAGE_EN = re.compile(
    # "Don't worry about citations" relaxes a rule; "don't worry about it" comforts.
    r"\b(?:don'?t|do not|no need to) (?:worry\b(?! about (?!it\b))|stress"
    r"|be (?:so )?hard on yourself|give up|lose hope|be afraid)\b|\bno worries\b"
    r"|\byou(?:'ll| will) (?:nail|crush|rock|ace|do great"
    r"|be (?:great|fine|ok|okay|amazing))\b|\byou(?:'ve)? got this\b|\byou can do it\b"
    r"|\bkeep (?:it up|going|pushing|at it|rocking)\b|\bhang in there\b|\bgood luck\b"
    r"|\b(?:rooting|cheering) for you\b|\bproud of you\b|\byou(?:'re| are) worth it\b"
    r"|\bbelieve in yourself\b|\bgo for it\b|\bhave fun\b|\benjoy (?:it|yourself|every)\b"
    # Mottos: "don't ever quit on what you love", "chase your dreams", "don't rush".
    r"|\b(?:don'?t|do not|never) (?:ever )?(?:give up|quit|stop believing|lose (?:hope|sight)"
    r"|be (?:so )?(?:afraid|daunted|discouraged|scared|shy|too hard on)"
    r"|rush\b(?! (?:the|it|this|that))"
    r"|let (?:anyone|anything|that|it|them|fear|doubt) (?:stop|get|bring|hold) you)"
    r"|\bdon'?t (?:ever )?hesitate to (?:reach out|ask|holler|call|text|ping|message|shout"
    r"|contact)\b"
    # "don't forget, you're worth it": a reminder about the listener, no task in it.
    r"|\bdon'?t forget(?: (?:that|how|it'?s|you'?re|you are|about yourself)\b|\s*[,!—–:-]|\s*$)"
    r"|\bkeep (?:up the (?:good|great|amazing|awesome) work|(?:on )?(?:focusing|chasing|believing"
    r"|shining|smiling|striving|dreaming|fighting)\b|your (?:head|chin) up)"
    r"|\b(?:chase|follow|pursue) your (?:dreams?|heart|passions?|gut)\b"
    r"|\blisten to your (?:body|heart|gut)\b|\btrust (?:your|the) (?:gut|instincts|process)\b"
    r"|\byou deserve (?:it|this|a break|the best|to)\b|\byou(?:'re| are) worth it\b"
    r"|\bstay (?:safe|strong|positive|healthy|warm|cool|awesome)\b",
    re.IGNORECASE,
)
_ENCOURAGE_ZH = re.compile(
    # "特别紧张", "区别" hold 别 without saying "don't".
    r"(?<![特区分级类个告道差识辨性派离])别(?:担心|难过|灰心|害怕|紧张|着急|想太多|太累|累着|累坏)|不用(?:担心|紧张|着急)|放心吧"
    r"|你(?:肯定|一定|绝对)(?:行|可以|没问题)|你可以的|加油|相信你|保重|玩得开心"
    r"|(?:千万)?(?:别|不要|永不|绝不)(?:轻易)?(?:放弃|灰心|气馁)|坚持(?:下去|住)|相信自己|你值得"
    r"|追(?:逐|寻)?(?:你的)?梦想|(?:好好)?照顾(?:好)?自己"
)
# Advice about the listener's own life: rest, sleep, try something, look after oneself.
_LIFE_ADVICE_EN = re.compile(
    r"\b(?:you(?: (?:also|really|definitely|totally|just|so))? (?:should|need to|have to|must"
    r"|gotta|ought to)(?: (?:totally|definitely|really|also|so))?|make sure (?:you|to)"
    r"|don'?t forget(?: to)?|remember to|be sure to)"
    # "try to keep it short" asks the assistant; "try bouldering" tells a friend.
    r" (?:try\b(?! to)|rest|sleep|relax|get (?:some|enough) (?:rest|sleep)"
    r"|take (?:care|time|a break|it easy)|treat yourself|check (?:it|them|this|that) out"
    r"|give (?:it|that) a (?:try|shot|go)"
    r"|look after yourself|be kind to yourself|enjoy|visit|go (?:see|visit|there)"
    r"|stay (?:positive|strong|motivated|safe|healthy|hydrated)|have fun|smile|celebrate|breathe"
    r"|take (?:some |lots of |a few )?(?:nice |good |great )?(?:pictures|photos|pics)"
    r"|prepare (?:yourself|emotionally|mentally))\b"
    # "find a coach who can help you": where the listener could get help for their own life.
    r"|\bfind (?:a|an|some) (?:good |great )?(?:coach|trainer|mentor|therapist|counsell?or"
    r"|doctor|teacher|instructor|friend|partner|buddy|group|community|hobby|support group)s?"
    r" (?:who|that)\b"
    r"|\b(?:don'?t|never) (?:limit|push|doubt|blame|overwork|underestimate|be hard on) yourself\b"
    r"|\btake care of yourself\b|\bself-care\b",
    re.IGNORECASE,
)
_LIFE_ADVICE_ZH = re.compile(
    r"(?:你)?(?:一定要|要|得|记得|别忘了|多)(?:多|好好)?(?:休息|睡觉|早点睡|睡个好觉|放松|注意身体|照顾好自己|保重"
    r"|试试|去看看|去玩|享受|拍(?:点|些)?照)"
    r"|照顾好自己|注意身体"
)
# An offer of help to the other speaker: "let me know if you need anything", "有事随时找我".
_OFFER = re.compile(
    r"\blet me know (?:if|whenever|when) you(?:'d)? (?:need|want|like)\b|\b(?:always )?here"
    r" (?:to help|for you)\b|\bi'?ll (?:make sure to )?keep you (?:updated|posted)\b"
    r"|有(?:事|需要)(?:随时|就)?(?:找我|跟我说|告诉我)|随时找我",
    re.IGNORECASE,
)
# Excitement, pleasantries and reactions: "can't wait", "never forget", "no wonder", "恭喜".
_REACTION = re.compile(
    r"\bcan'?t (?:wait (?:to|for)|believe|imagine)\b|\bcan'?t stop [a-z]+ing\b"
    r"|\b(?:i'?ll|i will) never forget\b|\bno (?:wonder|prob(?:lem)?|doubt)\b[!,.]?"
    r"|\b(?:great|good|nice|lovely|always good) (?:chatting|talking|catching up|to (?:hear|chat|see"
    r" you|catch up))\b|\bcongrat(?:s|ulations)\b|\bi'?ll (?:definitely |surely )?reach out\b"
    r"|等不及|迫不及待|忘不了|永远不会忘|恭喜|聊得(?:很|真)?开心|难怪",
    re.IGNORECASE,
)
# Views on how the world or people at large should be: "we need more kindness in the
# world", "schools should be funded properly", "kids need good role models"; not what
# the user's task needs ("we need a venue for 80 people").
_SOCIETY_EN = re.compile(
    r"\b(?:we|people|everyone|everybody|society|kids|children|humanity|parents|communities)"
    r" (?:all |really |definitely |still |truly |just )?(?:need|needs|should|must|ought to|have to"
    r"|has to)\b[^.!?]*\b(?:the world|society|(?:our|the|my) communit(?:y|ies)|this country"
    r"|our country|humanity|future generations|each other|one another|our planet|the planet)\b"
    r"|\bwe (?:all |really |definitely |just )?(?:need|should have) (?:way |much |a lot |so much"
    r" |far )?(?:more|less|better|fewer) (?:[a-z]+ )?(?:kindness|love|compassion|empathy"
    r"|understanding|acceptance|awareness|education|infrastructure|respect|funding|equality"
    r"|tolerance|patience|peace|hope|positivity|diversity|representation|inclusion|mental health"
    r"|people like)"
    r"|\bshould be (?:everyone'?s|a (?:basic )?(?:human )?right|(?:properly |better )?funded"
    r"|celebrated|respected|valued|cherished|free for everyone|accessible to (?:all|everyone))\b"
    r"|\b(?:kids|children|young people|teens|everyone|people) (?:need|deserve|should have)"
    r" (?:good |positive |strong )?(?:role models|love|support|someone|a safe|access|to feel)\b"
    r"|\bwe (?:all |really )?need to (?:show|spread|stand (?:up|together)|come together"
    r"|help each other|look out for|raise awareness|fight for|stick together|be kind|be there for"
    r"|do better|keep fighting|support each other)\b"
    r"|\b(?:ourselves|yourself|yourselves|themselves|each other)\b[^.!?]{0,20}\bis a must\b",
    re.IGNORECASE,
)
_SOCIETY_ZH = re.compile(
    r"(?:社会|世界|这个世界|大家|人们|每个人|我们)[^，。；]{0,6}(?:需要|应该有|缺少)更多"
    r"|(?:孩子们?|年轻人|每个人)(?:都)?(?:需要|应该有)(?:好的|正面的)?榜样"
)
# Reported thoughts and lessons drawn: "it made me think…", "it reminded me we need to
# slow down", "realizing I could do it…", "it's hard when things don't go your way".
_REFLECTION_EN = re.compile(
    r"\b(?:made|makes|make|making) (?:me|us) (?:think|realize|realise|see|appreciate|wonder"
    r"|understand|remember|reflect)\b"
    r"|\bremind(?:s|ed|ing) (?:me|us)\b|\b(?:moments?|things?|this|that|these|those|they|it"
    r"|songs?|photos?|pictures?) remind (?:me|us)\b"
    r"|\b(?:showed|shows|taught|teaches|has taught) (?:me|us) (?:that|how|to|what)\b"
    r"|^(?:and |but )?realiz(?:ing|ed)\b|\bi (?:realized|realised|learned|learnt|figured out)"
    r" (?:that|how|i|we)\b"
    r"|\bit(?:'s| is| was| can be| gets)(?: so| really| always| just| pretty| super)?"
    r" (?:easy|hard|tough|great|awesome|amazing|sad|funny|crazy|wild|cool|fun|challenging"
    r"|a challenge|difficult|heartbreaking|inspiring|beautiful|wonderful|nice(?! to have))"
    r" (?:to|when|how)\b",
    re.IGNORECASE,
)
_REFLECTION_ZH = re.compile(r"(?:让|使)我(?:想到|意识到|明白|体会到)|提醒了我")
# The speaker's own past told as a story: "when I was a kid we never had…", "说起来我小时候
# 根本没有…", "说到下棋，我自己也是退休以后才学的". Its "never" and "只会" bind nobody.
_MEMORY_EN = re.compile(
    r"^(?:(?:honestly|funny enough|you know|side note|ha),? )?(?:when i was (?:a kid|little|young"
    r"|a teenager|growing up|your age|his age|her age|in (?:school|college|high school))"
    r"|back (?:in my day|when i was)|growing up,? (?:i|we)|as a kid,? (?:i|we))\b",
    re.IGNORECASE,
)
_MEMORY_ZH = re.compile(
    r"^(?:说起来|想当年|其实|哈哈)?[，,]?(?:我|我们)(?:自己)?(?:小时候|小的时候|上学那会儿?|年轻的时候"
    r"|那会儿|当年)"
    r"|^说到[^，。；]{1,10}[，,](?:我|我们)(?:自己)?(?:也|当年|小时候)"
)
_FAMILIES = (
    _GUESS_EN, _GUESS_ZH, _ENCOURAGE_EN, _ENCOURAGE_ZH, _LIFE_ADVICE_EN, _LIFE_ADVICE_ZH, _OFFER,
    _REACTION, _SOCIETY_EN, _SOCIETY_ZH, _REFLECTION_EN, _REFLECTION_ZH, _MEMORY_EN, _MEMORY_ZH,
)  # fmt: skip
# A clause turned to the assistant, or drawing the story's consequence for the task
# ("…, so you must keep it short", "…，所以行程里不能有下水的项目"): out of the story.
_ADDRESSED = re.compile(
    r"\b(?:you|your|please)\b|^(?:and )?(?:so|that'?s why|which is why|therefore)\b"
    r"|你|您|请|^(?:所以|因此|因为这样|那就|那)",
    re.IGNORECASE,
)


def told_memory(text: str) -> bool:
    """The sentence tells the speaker's own past ("我小时候…", "when I was a kid…")."""
    return bool(_MEMORY_EN.search(text) or _MEMORY_ZH.search(text))


def addressed(text: str) -> bool:
    return bool(_ADDRESSED.search(text))


def chatter(text: str) -> bool:
    """True when the sentence guesses at someone's experience, comforts or
    encourages, advises the listener about their own life, offers help or
    reacts (excitement, congratulations, "no wonder"):
    talk between people, not a requirement on the assistant."""
    return any(family.search(text) for family in _FAMILIES)
