"""What a text talks about, and whether two texts talk about the same thing.

Read by the linkers before they trust a shared word: the words a statement uses as
its own (not its idioms, not the examples it quotes), a subject shared by words or
by enough Chinese characters, a subject that is only a person's name, and a denial
made in a sentence about something else.
"""

from __future__ import annotations

from policies.language.matching import key_terms, weighted_terms
from policies.language.names import person_names
from policies.language.value_roles import example_spans
from policies.rulebook import Joined

# Change cues whose words name nothing: "on second thought" is not about a second one.
_IDIOMS = Joined("revision", "change_idiom")


def own_words(text: str) -> str:
    """What a statement talks about: not its idioms, nor the examples it gives ("use
    short headed sections, like "Pay", "Health""): an example names no item it revises."""
    for a, b in reversed(example_spans(text)):
        text = text[:a] + " " + text[b:]
    return _IDIOMS.sub(" ", text)


def shares_only_names(a: str, b: str) -> bool:
    """Do two texts share words, all of them from the names of people in either?"""
    shared = key_terms(a) & key_terms(b)
    if not shared:
        return False
    names = key_terms(" ".join(person_names(a) + person_names(b)))
    return shared <= names


def shares_subject(a: str, b: str) -> bool:
    """Do two texts share a word (or bigram), or at least two content characters?
    ("四口人的量" / "用量按一人份": 量, 人; "我觉得太平了" / "我也觉得": only 觉)."""
    if key_terms(a) & key_terms(b):
        return True
    chars_a = {t for t, w in weighted_terms(a).items() if w < 1 and t != "得"}
    chars_b = {t for t, w in weighted_terms(b).items() if w < 1}
    return len(chars_a & chars_b) >= 2


# How many content words of its own make a sentence about a subject of its own.
_OWN_SUBJECT_TERMS = 4


def other_subject(text: str, token: str, item: str) -> bool:
    """Is `text`, which denies `token`, about another subject than `item`, which holds
    it? It is when it has words of its own and shares none with the item but the token:
    "the studio printer should stay on a cable, not bluetooth, for the print queue" is
    not about "I want to fix the bluetooth in the car"; "soapstone it is, no more
    quartz" has no other words, so the item holding "quartz" is what it revises."""
    denied = key_terms(token)
    own = key_terms(text) - denied
    if len(own) < _OWN_SUBJECT_TERMS:
        return False
    return not (own & key_terms(item))
