"""zh/en cues of reported speech: what another party said, offered or advised,
or what happened to them, told by the user (`is_reported`), which states no
requirement of the user's own.

Their rules are kept as data in policies/rules/<lang>/reported.yaml.
"""

from __future__ import annotations

import re

from policies import rulebook
from policies.language.lexicon import Lexicon

# A sentence whose subject is the other party ("they offer…", "Marcus
# replied…") reports a position, it does not state the user's requirement.
REPORTED = Lexicon.named("reported", "reported")
FIRST_PERSON = Lexicon.named("reported", "first_person")

_PREAMBLE = re.compile(r"^[^:：]{1,40}[:：]\s*")


# "My coworker says I should never…", "朋友说我应该…": a peer's advice to the
# user, reported; the user has not adopted it (an authority's ruling, "the
# vet says no dairy", is not advice from a peer and stays a requirement).
_PEER_ADVICE = Lexicon.named("reported", "peer_advice")


# "我同事去年把她的猫寄养了两周…", "A friend of mine once did a 10-day cruise…": what
# happened to someone else, told as a story; its values are theirs, not the plan's.
_ANECDOTE = Lexicon.named("reported", "anecdote")


def is_reported(text: str) -> bool:
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


_DECLINING = rulebook.Joined("reported", "declining", ("zh",), flags=0)
