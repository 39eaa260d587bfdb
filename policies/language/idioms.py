"""Phrases built from rule words that state no rule.

The cue tables read "must", "never", "no", "can't", "whenever", "always",
"forget" and "each" as the words of requirements. In ordinary talk about
one's life most of them are something else:

- a guess (epistemic "must"): "that must be frustrating", "your garden
  must look amazing", "it must have cost a fortune" -- not "the invoice must
  be in euros";
- an experience or a set phrase ("never been to Lisbon", "never say never",
  "no regrets", "nothing beats a nap") -- not "never use emojis", "no
  meetings before 10";
- a feeling ("can't wait", "can't stop thinking about it", "don't know what
  I'd do without them") -- not "I can't eat gluten";
- the speaker's own habit ("whenever I hear that song I cry", "always up
  for pizza", "I make sure to stretch") -- not "whenever you quote a price,
  include VAT", "always answer in Spanish".

`mask_idioms` blanks those phrases (at equal length, so spans still index
the sentence) before the cues are read; whatever else the sentence says
keeps its cues: "Never been to Lisbon, so don't book anything touristy"
still forbids.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

# How something seems or feels: the words a guess about someone's experience ends on.
_EVALUATIVE = (
    r"(?:great|amazing|awesome|incredible|wild|cool|fun|hard|tough|nice|wonderful|fantastic"
    r"|scary|rough|special|beautiful|lovely|difficult|intense|surreal|magical|unforgettable"
    r"|emotional|sad|peaceful|painful|lonely|hearty|delicious|tasty|yummy|adorable|gorgeous"
    r"|stunning|breathtaking|proud|happy|glad|thrilled|excited|nervous|tired|busy|exhausted"
    r"|hectic|crazy|insane|awful|terrible|horrible|bittersweet|cozy|delightful|tricky|tense"
    r"|nostalgic|rewarding|fulfilling|stressful|meaningful|worth it|a relief|a blast"
    r"|(?:frustrat|disappoint|exhaust|excit|amaz|thrill|terrify|heartbreak|devastat|overwhelm"
    r"|reward|satisfy|fulfill|reliev|liberat|tir|annoy|stress|worry|scar|challeng|humbl|inspir"
    r"|refresh|sooth|comfort|interest|fascinat|surpris|shock|embarrass|depress|nerve-wrack"
    r"|drain|excruciat|agoniz|heartwarm|relax|calm|intimidat|overwhelm|touch|mov)ing)"
)
_INTENSIFIER = (
    r"(?:so|really|very|such|pretty|super|quite|truly|incredibly|absolutely|extra|especially"
    r"|kind of|kinda|a bit|a little|totally)"
)
# A past participle ("tried", "visited"), not a verb that only ends in -ed ("exceed").
_ED = (
    r"(?!(?:embed|shed|need|proceed|exceed|succeed|feed|speed|heed|bleed|breed|seed)\b)[a-z]{2,}ed"
)
# A gerund ("hoping", "putting"), not a verb that only ends in -ing ("bring").
_ING = r"(?!(?:bring|string|sing|ring|swing|spring|sting|wring|cling|fling|sling)\b)[a-z]{2,}ing"
# What a guess sounds like ("…must be so frustrating", "must've cost a fortune",
# "must bring you so much joy", "your shoes must have stories"). Deontic "must"
# is followed by what is required ("must be in euros", "must have a dark mode").
_GUESS_MUST = (
    # "The quiz must be challenging" sets a bar; "that must be challenging" guesses. A
    # pronoun subject or an intensifier ("must be so challenging") makes it a guess.
    rf"\bmust(?: still)? (?:be|feel|look|sound|seem|taste|smell)(?: {_INTENSIFIER})+"
    rf" {_EVALUATIVE}\b"
    rf"|(?:^|\b(?:that|this|it|you|he|she|they|we|which|everything|life) )(?:still )?must"
    rf"(?: still)? (?:be|feel|look|sound|seem|taste|smell) {_EVALUATIVE}\b"
    rf"|\bmust be(?: {_INTENSIFIER})? {_ING} (?:you|your|him|her|them|me|us)\b"
    r"|\bmust(?:'ve| have) (?!a\b|an\b|the\b|some\b|at\b|no\b|only\b|one\b|two\b|three\b|\d)"
    r"(?:been|taken|cost|felt|made|had|seen|gone|got|gotten|spent|known|thought|brought|meant"
    rf"|put|kept|left|heard|come|done|found|won|lost|hurt|grown|given|{_ED})\b"
    rf"|\bmust (?:be|have been) (?:a|an|such an?|quite an?)(?: {_INTENSIFIER}| {_EVALUATIVE})+\b"
    r"|\bmust (?:bring|give|mean|add|make)(?: you| your \w+| him| her| them| everyone)?"
    r" (?:so|such|a lot|lots|tons|plenty|the world|much|real)\b"
    r"|\byour (?!answers?\b|repl(?:y|ies)\b|responses?\b|code\b|drafts?\b|summar(?:y|ies)\b"
    r"|outputs?\b|messages?\b|emails?\b|versions?\b|plans?\b|lists?\b|tables?\b|reports?\b"
    r"|suggestions?\b|translations?\b)[a-z-]+(?: [a-z-]+)? must\b"
    r"|\b(?:i'?m sure|i bet|i imagine|i can imagine|i guess|no doubt|surely)"
    r"(?: [\w']+){0,3} must\b"
    r"|\bmust-(?:see|try|visit|read|watch|do|learn|listen|eat|go)\b"
    r"|\ba must (?:see|try|visit|read|watch|do|learn|listen)\b"
)
# Experience and set phrases: "never been", "never heard of it", "never say never".
_PAST_FORMS = (
    r"(?:been|heard|tried|seen|saw|had|done|did|met|thought|knew|known|expected|imagined|felt"
    r"|got|gotten|visited|watched|eaten|ate|tasted|ridden|rode|gone|went|was|were|made"
    rf"|understood|won|lost|found|missed|flown|flew|grown|taken|took|given|gave|{_ED})"
)
_NEVER = (
    rf"\bnever (?:ever |really |once |even )?{_PAST_FORMS}\b"
    r"|\bnever say never\b|\b(?:you|one|we) never (?:really )?know\b|\bnever know\b"
    r"|\bnever (?:ever )?give up\b|\bnever a dull moment\b|\bnever gets old\b"
    r"|\bnever (?:fails|ceases|stops) to\b|\bnever shy away\b|\bnever too (?:late|early|old)\b"
    r"|\bnever hurts\b|\bnever been better\b|\bnow or never\b|\bnever in a million years\b"
)
_NO = (
    r"\bno (?:regrets?|words?|details|luck|joke|kidding|offen[cs]e|pressure|biggie|big deal"
    r"|clue|sweat|hard feelings|shame|complaints)\b"
    r"|\bno [a-z]+(?: [a-z]+)? (?:better|worse|greater|finer|sweeter|bigger) than\b"
    r"|\bno place like\b"
    r"|\bnothing (?:ever|beats|compares|better|quite|lasts|feels|worse|makes|can)\b"
)
# Feelings and figures of speech with "can't" / "without": "can't wait", "can't
# help smiling", "couldn't thank you enough", "don't know what I'd do without them".
_CANT = (
    r"\b(?:can'?t|cannot|couldn'?t|could not) (?:wait|help (?:but|it|myself|[a-z]+ing)"
    r"|stop [a-z]+ing|believe|imagine|thank (?:\w+ )?enough|express|describe|say enough"
    r"|get enough|get over|refuse|complain|deny|resist|argue with|put (?:it|into words)"
    r"|tell you how|take (?:my|our) eyes off|let (?:it|them|him|her) (?:go|out of)|be happier"
    r"|be prouder|ask for (?:more|better|anything more))\b"
    r"|\bcan only imagine\b"
    r"|\b(?:can'?t|couldn'?t|cannot) (?:live|do|survive|cope|imagine (?:life|my life|a day))"
    r" without\b"
    r"|\b(?:live|do|survive|cope|manage) without (?:them|him|her|you|it|my|our|each|their|his"
    r"|your)\b"
    r"|\bwithout (?:a doubt|doubt|fear|incident|judg\w*|hesitat\w*|question|fail|a hitch|a care)\b"
    # Helplessness and exasperation: "I don't even know where to start", "don't
    # get me started", "Moths, don't even." (nothing follows the "don't").
    r"|\b(?:do not|don'?t) (?:even |really )?know (?:where to (?:start|begin)"
    r"|what to (?:say|do|think)|what (?:i'?m|we'?re) doing|how to (?:feel|thank|put it))\b"
    r"|\b(?:do not|don'?t) (?:even )?get me started\b|\bdon'?t even(?:\s*[.!…]+|\s*$)"
)
# The speaker's own habits and resolutions: "whenever I hear…, I…", "I make sure to…".
# A condition on the speaker's own request stays a rule ("whenever I ask for a
# summary, use bullets"), and so does any sentence that then turns to "you".
_HABIT = (
    r"^(?:and |but |so )?(?:whenever|every ?time|each time|any ?time) i (?!ask|say|tell|send"
    r"|paste|share|mention|give|upload|request|type|write|forward|post|add|use|need|want|reply"
    r"|ping|submit|change|update|attach|drop|quote|list)[^,;]*, (?:i|it|it's|that|this|there"
    r"|my|we|she|he|they)\b(?![^.;!?]*\byou)"
    r"|\b(?:i|they|he|she)(?:'ll| will| always| try to| want to| do my best to| tried to"
    r"| promised to)* make sure\b"
    r"|\bwhat (?:i|we) (?:still )?(?:have|need|got) to do\b|\bit'?s one thing\b"
    r"|\bi'?ll (?:be sure to |make sure to )?(?:let you know|reach out)\b"
    r"|\b(?:if|when|whenever|anytime) (?:you|i|we) (?:ever )?need (?:anything|any(?: \w+)? help"
    r"|help|any(?: \w+)? assistance|support|someone|to talk|to chat|a hand|it|me|us)\b"
    r"|^i (?:have|need|got) to (?:go|run|head out|get going)\b"
    # The speaker's own plans: "I hope to travel more in the future".
    r"|\bi (?:promised|hope|plan|intend|wish|want) to\b[^.!?;]*\bin (?:the )?future\b"
    r"|\bi'?ll be [a-z]+ing\b[^.!?;]*\bin (?:the )?future\b"
)
# Sentence-initial "Always…" describing how something or someone is ("Always up
# for pizza", "Always been curious about Japan"), not "Always answer in Spanish".
_ALWAYS = (
    rf"^always (?=been\b|a\b|an\b|the\b|up\b|there\b|such\b|so\b|{_ING}\b|loved?\b|liked?\b"
    r"|enjoy(?:ed)?\b|had\b|was\b|were\b|felt\b|thought\b|wanted\b|nice\b|good\b|great\b"
    rf"|fun\b|happy\b|ready\b|down\b|my\b|our\b|his\b|her\b|their\b|him\b|me\b|us\b|{_ED}\b)"
    rf"|\byou always (?={_ED}\b|been\b|were\b|was\b|had\b|knew\b|said\b|told\b|made\b)"
)
_OTHER = (
    # A topic announced, nothing asked yet: "Budget question.", "Quick deadline question:".
    r"^(?:(?:a |one |another |one more |quick |small |random |side )+)?(?:[a-z-]+ ){1,2}"
    r"questions?(?=\s*[.:!…]*\s*$)|"
    # Reciprocity is no quantifier: "next to each other" is not "for each section".
    r"\beach other\b|\bone another\b"
    r"|\b(?:every|each) (?:little |single |small )?(?:step|bit|moment|day|minute|second|penny"
    r"|problem|cloud|one of us) (?:counts|matters|helps|has a|is precious|is a gift)\b"
    # "forget" as a feeling, not "forget the tax": "easy to forget", "helps me forget my worries".
    r"|\b(?:easy|hard|tend|tends|helps?|help (?:me|us|you)|makes? (?:me|us)|made (?:me|us)"
    r"|let (?:me|us)|won'?t|will never|i'?ll never|to) (?:to )?forget\b"
    r"|\bforget (?:my|our|your|all my|all our|about) (?:troubles|worries|problems|stress"
    r"|pain|sorrows|cares|fears|ourselves|myself|yourself|the stresses)\b"
    # Concessive "at least" ("but at least I tried"), not a minimum ("at least 3").
    r"|\bat least(?= (?:i|we|you|he|she|they|it|that|there|this|for now|not)\b)"
    r"|\bpush(?:es|ed|ing)? (?:the|my|our|your|their) limits?\b|\bsky'?s the limit\b"
    r"|\bthe (?:whole |big )?limit\b(?= is the sky)"
    # A plural subject's habit ("things don't go my way", "the hats don't bother
    # them"): a description, not an imperative.
    r"|\b(?!(?:plus|pls|yes|thanks|always|perhaps|unless|as|is|was|has|does|this|thus|us|its"
    r"|his|hers|ours|yours|theirs|guys|less|process)\b)[a-z]{2,}s don'?t"
    r"(?= (?:always |really |even )?"
    r"(?:last|go|bother|have|flop|matter|count|get|seem|understand|realize|see|care|know|mind"
    r"|need|deserve|exist|come|happen|stay|stop|change|feel|belong|fit)\b)"
)
# Where something is, not where a rule applies: "ideas from everywhere", "love was everywhere".
_EVERYWHERE = r"\b(?:from|are|is|was|were|been|love|energy|joy|people|fun) everywhere\b"
# A shared photo or clip rendered as text ("[shares a photo: two dogs on a beach]"):
# it describes the picture, it asks nothing.
_MEDIA = (
    r"\[[^\]]{0,40}?\b(?:photo|picture|image|pic|video|gif|sticker|screenshot"
    r"|voice (?:note|message)|audio|attachment)s?\b[^\]]*\]"
)
# Masked by `mask_idioms`; Chinese guesses ("一定很累吧") carry no rule words to mask
# (`policies.extract.chatter` drops them as sentences).
_IDIOM = re.compile(
    "|".join((_MEDIA, _GUESS_MUST, _NEVER, _NO, _CANT, _HABIT, _ALWAYS, _OTHER, _EVERYWHERE)), _I
)
_MEDIA_ONLY = re.compile(rf"^\s*(?:{_MEDIA}\s*)+$", _I)


def media_only(text: str) -> bool:
    """Nothing but shared pictures or clips rendered as text."""
    return bool(_MEDIA_ONLY.match(text))


def mask_idioms(text: str) -> str:
    """`text` with its rule-worded idioms blanked (same length, spans still index it)."""
    if not re.search(r"[A-Za-z]", text):
        return text
    return _IDIOM.sub(lambda m: " " * len(m.group(0)), text)
