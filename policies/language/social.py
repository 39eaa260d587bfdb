"""zh/en cues of social moves that carry no requirement or fact: replies that
only confirm (`CONFIRM`) or reject (`REJECT`), leading interjections
(`strip_filler`), greetings, thanks and reactions (`small_talk`), and the names
a sentence addresses its listener by (`addressed_names`, `strip_vocatives`).

Their rules are kept as data in policies/rules/<lang>/social.yaml.
"""

from __future__ import annotations

import re
from functools import cache

from policies import rulebook
from policies.language.lexicon import scripts


class _Confirm:
    """A reply that only confirms ("yes, thanks", "好的，谢谢"): the confirm words of both
    files (fragments confirm_head, confirm_tail of policies/rules/<lang>/social.yaml) in one
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
    head = "|".join(rulebook.fragment("social", lang, "confirm_head") for lang in ("en", "zh"))
    tail = "|".join(rulebook.fragment("social", lang, "confirm_tail") for lang in ("en", "zh"))
    return re.compile(rf"^(?:{head})(?:[\s,.!~。！，、]+(?:{tail}))*[\s.!~。！，]*$", re.IGNORECASE)


CONFIRM = _Confirm()
REJECT = rulebook.Joined("social", "reject", flags=re.IGNORECASE)

FILLER = rulebook.Joined("social", "filler", flags=re.IGNORECASE)


def strip_filler(text: str) -> str:
    """Drop leading interjections ("Oh and btw", "对了，") that carry no content."""
    out = FILLER.sub("", text, count=1).strip()
    return out or text.strip()


# --- small talk ---------------------------------------------------------------------
# Social moves that carry no requirement or fact: greetings, thanks, agreement,
# reactions to the other side's news ("That must have been awesome!", "Sounds
# like fun", "太棒了"). A sentence is small talk when it makes one of these
# moves and, once the move's own words and any name it addresses are set aside,
# at most one content word is left ("It must have been special at your wedding").
_SOCIAL_EN = rulebook.Joined("social", "social", ("en",), flags=re.IGNORECASE)
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
_SOCIAL_ZH = rulebook.Joined("social", "social", ("zh",), flags=0)
_VOCATIVE = rulebook.Joined("social", "vocative", ("en",), flags=0)
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
