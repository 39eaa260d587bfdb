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

from policies.rulebook import Joined

# The families of idioms are data (policies/rules/en/idioms.yaml), joined in this order
# as one pattern that ignores case; masked by `mask_idioms`. Chinese guesses ("一定很累吧")
# carry no rule words to mask (`policies.extract.chatter` drops them as sentences).
_FAMILIES = (
    "media",  # a shared photo or clip rendered as text
    "guess_must",  # "that must be so frustrating"
    "never",  # "never been to Oslo", "never say never"
    "set_no",  # "no regrets", "nothing beats a nap"
    "cant",  # "can't wait", "couldn't thank you enough"
    "habit",  # "whenever I hear that song, I cry", "I'll make sure to"
    "always",  # "Always up for pizza"
    "topic_question",  # "Budget question."
    "reciprocal",  # "each other"
    "every_counts",  # "every little bit helps"
    "forget_feeling",  # "easy to forget"
    "concessive_at_least",  # "but at least we tried"
    "limits",  # "the sky's the limit"
    "plural_dont",  # "things don't go my way"
    "everywhere",  # "love was everywhere"
)
_IDIOM = Joined.of("idioms", *(("en", name) for name in _FAMILIES), flags=re.IGNORECASE)
_MEDIA_ONLY = Joined("idioms", "media_only", ("en",), flags=re.IGNORECASE)


def media_only(text: str) -> bool:
    """Nothing but shared pictures or clips rendered as text."""
    return bool(_MEDIA_ONLY.match(text))


def mask_idioms(text: str) -> str:
    """`text` with its rule-worded idioms blanked (same length, spans still index it)."""
    if not re.search(r"[A-Za-z]", text):
        return text
    return _IDIOM.sub(lambda m: " " * len(m.group(0)), text)
