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

from policies.language.lexicon import Lexicon
from policies.rulebook import Joined

# Each family is a rule of policies/rules/<lang>/chatter.yaml, both halves.
# How an experience must have felt: a guess about someone else's day ("那一定很好玩吧").
# Only evaluative words follow, so "it must be in JSON" stays a rule.
_GUESS = Lexicon.named("chatter", "guess")
# Comfort and encouragement: what a friend says to lift the other up.
_ENCOURAGE = Lexicon.named("chatter", "encourage")
# Advice about the listener's own life: rest, sleep, try something, look after oneself.
_LIFE_ADVICE = Lexicon.named("chatter", "life_advice")
# An offer of help to the other speaker: "let me know if you need anything", "有事随时找我".
_OFFER = Joined("chatter", "offer")
# Excitement, pleasantries and reactions: "can't wait", "never forget", "no wonder", "恭喜".
_REACTION = Joined("chatter", "reaction")
# Views on how the world or people at large should be: "we need more kindness in the
# world", "kids need good role models"; not what the user's task needs ("we need a
# venue for 80 people").
_SOCIETY = Lexicon.named("chatter", "society")
# Reported thoughts and lessons drawn: "it made me think…", "it reminded me we need to
# slow down", "realizing I could do it…", "it's hard when things don't go your way".
_REFLECTION = Lexicon.named("chatter", "reflection")
# The speaker's own past told as a story: "when I was a kid we never had…", "说起来我小时候
# 根本没有…", "说到下棋，我自己也是退休以后才学的". Its "never" and "只会" bind nobody.
_MEMORY = Lexicon.named("chatter", "memory")
_FAMILIES = (_GUESS, _ENCOURAGE, _LIFE_ADVICE, _OFFER, _REACTION, _SOCIETY, _REFLECTION, _MEMORY)
# A clause turned to the assistant, or drawing the story's consequence for the task
# ("…, so you must keep it short", "…，所以行程里不能有下水的项目"): out of the story.
_ADDRESSED = Joined("chatter", "addressed")


def told_memory(text: str) -> bool:
    """The sentence tells the speaker's own past ("我小时候…", "when I was a kid…")."""
    return bool(_MEMORY.search(text))


def addressed(text: str) -> bool:
    return bool(_ADDRESSED.search(text))


def chatter(text: str) -> bool:
    """True when the sentence guesses at someone's experience, comforts or
    encourages, advises the listener about their own life, offers help or
    reacts (excitement, congratulations, "no wonder"):
    talk between people, not a requirement on the assistant."""
    return any(family.search(text) for family in _FAMILIES)
