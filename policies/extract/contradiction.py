"""Does a new rule contradict a standing one, or only sound like it might?

A rule that seems to contradict a live rule without saying it replaces it
is kept beside it, and the old one waits for the user to confirm
(`policies.extract.revision`, DESIGN: "ambiguous change"). Flagging is not free: the
old rule is shown as "the user may have changed this", and the model is
asked to check with the user. On unseen conversations most flagged pairs
were no contradiction at all: a reminder of the same rule ("quick reminder
about the ramps: every stall needs step-free access"), an addition to
it ("守则里再补一条：…手机一律不带"), the other side's answer ("the landlord
agreed to our figure for the lease extension"), a negation in a clause about something
else ("capped at 3.5%, no matter what"), a price of something else two
orders of magnitude away ("$35/month pet rent" beside "max rent $2,300").

`contradicts` keeps the pairs that do say opposite things about the same
thing: opposite choices of a named kind ("formal" / "chatty"), opposite
polarity in the clauses that name what both are about ("写通用名，不要写商品名"
/ "写商品名就行"), or another value of the same measure at a comparable size.
`settles` tells when such a contradiction is worded as what will do now
("…就行", "casual is fine") and so replaces the old rule instead of waiting
for a confirmation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from policies.language.cues import negated
from policies.language.matching import content_terms, opposed
from policies.language.segment import clauses
from policies.language.values import Value, extract_values
from policies.memory.slots import value_change

# Said again, or added to, not reversed: "Just reminding you, …", "as I said", "再强调一下",
# "须知里再加一句", "one more rule:".
_SAME_RULE_AGAIN = re.compile(
    r"\bjust remind(?:ing|er)\b|\b(?:as a|quick|friendly) reminder\b|\bremind(?:ing)? you\b"
    r"|\bas i (?:said|mentioned)\b|\bto repeat\b|\bone more (?:rule|line|thing to add|note)\b"
    r"|\badd (?:a|one|another) (?:line|sentence|rule|note|point)\b|\balso add\b"
    r"|再强调|重申|再说一遍|提醒一下|还是那句话|再加(?:一句|一条|一点|上)|另外加|补充一(?:句|条|点)|再补充",
    re.IGNORECASE,
)

# Worded like a negation, but forbids nothing: "no matter what", "不管怎样", "not only".
_NOT_A_NEGATION = re.compile(
    r"\bno matter\b|\bnot only\b|\bno doubt\b|不管|无论|不论", re.IGNORECASE
)

# Words any two statements may share without being about the same thing.
_GENERIC = frozenset({"say", "said", "says", "tell", "told", "want", "need", "thing", "说", "要"})

# Said as what holds from now on: the new side is the rule, not a slip or a one-off.
_NOW_ENOUGH = re.compile(
    r"就行|就好|就可以|即可|也行|也可以|也没关系|\binstead\b|\brather\b"
    r"|\b(?:is|are|'s) (?:fine|enough|ok|okay|good enough|allowed)\b|\bwill do\b",
    re.IGNORECASE,
)


def shared_terms(new: str, old: str) -> set[str]:
    """Full-weight content words (and CJK bigrams) both texts use."""
    own, prev = content_terms(new), content_terms(old)
    return {t for t, w in own.items() if w >= 1 and prev.get(t, 0) >= 1} - _GENERIC


def _forbidding_clauses(text: str) -> list[str]:
    """The clauses of `text` that forbid something, idioms worded as negations left out."""
    plain = (_NOT_A_NEGATION.sub(" ", clause) for clause in clauses(text))
    return [clause for clause in plain if negated(clause)]


def forbids_about(text: str, terms: Iterable[str]) -> bool:
    """Does a clause of `text` that names one of `terms` forbid something?

    Polarity counts only where the shared subject is: in "capped at 3.5%, no
    matter what" nothing about the cap is forbidden, and in "every table must
    be reachable, don't let them squeeze the layout" the negation is about the
    layout, not the tables."""
    wanted = set(terms)
    return any(wanted & content_terms(clause).keys() for clause in _forbidding_clauses(text))


def contradicts(new_text: str, new_values: Sequence[Value], old: str) -> bool:
    """Does `new_text` say the opposite of the rule `old` about the same thing?"""
    if _SAME_RULE_AGAIN.search(new_text):
        return False
    if opposed(new_text, old):
        return True
    shared = shared_terms(new_text, old)
    if shared and forbids_about(new_text, shared) != forbids_about(old, shared):
        return True
    changed, closeness = value_change(new_values, extract_values(old))
    # Values an order of magnitude apart measure different things ("$35/month pet
    # rent" is no new "max rent of $2,300").
    return changed and closeness > 0 and bool(shared)


def _forbidden_terms(text: str) -> set[str]:
    """Content words of the clauses of `text` that forbid something."""
    out: set[str] = set()
    for clause in _forbidding_clauses(text):
        out |= {t for t, w in content_terms(clause).items() if w >= 1}
    return out - _GENERIC


def reverses(new_text: str, old: str) -> bool:
    """Does `new_text` ask for exactly what `old` forbade ("不要写商品名" / "写商品名就行")?

    Not a narrower permission: "you can use requests" after "no external
    libraries" lifts the ban for one library, it does not end it."""
    banned = _forbidden_terms(old)
    if not banned or _forbidden_terms(new_text) & banned:
        return False
    said = {t for t, w in content_terms(new_text).items() if w >= 1}
    return len(banned & said) >= max(1, round(0.8 * len(banned)))


def settles(new_text: str, old: str) -> bool:
    """A contradiction worded as what will do now ("口语化一点就行", "casual is
    fine", "药名以后写商品名就行"): it replaces the old rule. Said bare, or as a
    permission ("you can mention the council now"), it may be a slip, a
    one-off or an exception, and waits for the user's confirmation (DESIGN)."""
    if not _NOW_ENOUGH.search(new_text):
        return False
    return opposed(new_text, old) or reverses(new_text, old)
